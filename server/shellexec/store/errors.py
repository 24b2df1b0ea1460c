"""Errors raised by the store.

    StoreError
    └── UnsupportedDatabaseError   the DATABASE_URL names an engine the store does not run on
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every store error."""


class UnsupportedDatabaseError(StoreError):
    """The database URL names an engine the store does not support."""

    def __init__(self, engine: str) -> None:
        super().__init__(f"unsupported database {engine!r}; use sqlite:///PATH")
        self.engine = engine
