"""The use cases: sessions and turns, publishing updates, and reading messages and the feed.

Each write is one transaction (load the command's state, fold the update, persist), and feed
events are announced after the commit. Turn and session rules live here.
"""

from __future__ import annotations

from shellexec.service.access import NOBODY, UNRESTRICTED, Caller
from shellexec.service.deletion import Deletion
from shellexec.service.deps import Clock, IdFactory, system_clock, time_ordered_id
from shellexec.service.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    ServiceError,
    UnavailableError,
)
from shellexec.service.publishing import Publisher
from shellexec.service.reading import Reader
from shellexec.service.sessions import Sessions
from shellexec.service.state_cache import StateCache
from shellexec.service.unit_caches import UnitCaches

__all__ = [
    "NOBODY",
    "UNRESTRICTED",
    "AlreadyExistsError",
    "Caller",
    "Clock",
    "Deletion",
    "FailedPreconditionError",
    "IdFactory",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "Publisher",
    "Reader",
    "ResourceExhaustedError",
    "ServiceError",
    "Sessions",
    "StateCache",
    "UnavailableError",
    "UnitCaches",
    "system_clock",
    "time_ordered_id",
]
