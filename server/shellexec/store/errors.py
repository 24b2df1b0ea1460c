"""Errors raised by the store.

    StoreError
    ├── UnsupportedDatabaseError   the DATABASE_URL names an engine the store does not run on
    └── StaleWriteError            a row changed since it was read (another writer)
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every store error."""


class UnsupportedDatabaseError(StoreError):
    """The database URL names an engine the store does not support."""

    def __init__(self, engine: str) -> None:
        super().__init__(f"unsupported database {engine!r}; use sqlite:///PATH")
        self.engine = engine


class StaleWriteError(StoreError):
    """A message row is no longer at the state version its writer read."""

    def __init__(self, position: int) -> None:
        super().__init__(f"message {position} changed since it was read")
        self.position = position
