"""Bearer tokens: issuing, listing and revoking them, and finding the caller a token names.

A token is `shx_` and 32 random bytes (256 bits, URL-safe base64). Only its SHA-256 is stored:
a token carries its full entropy, so a fast unsalted hash is as strong as a slow one and lets
the server find the token with one indexed read (ADR 0050). The secret is shown once, by
`create`.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from shellexec.rules.limits import (
    ID_CHARACTERS,
    MAX_BEARER_TOKEN_CHARS,
    MAX_TASK_ID_CHARS,
    MAX_TOKEN_NAME_CHARS,
)
from shellexec.service.access import Caller
from shellexec.service.deps import Clock
from shellexec.service.errors import FailedPreconditionError, InvalidArgumentError
from shellexec.store import Database
from shellexec.store import tokens as stored
from shellexec.store.models import ApiToken
from shellexec.vocabulary import SCOPES, Scope

TOKEN_PREFIX = "shx_"
_NAME = re.compile(f"[{ID_CHARACTERS}]{{1,{MAX_TOKEN_NAME_CHARS}}}")
# A task pattern: task-id characters and the glob's `*`, `?` and `[...]`.
_PATTERN = re.compile(f"[*?\\[\\]!{ID_CHARACTERS}]{{1,{MAX_TASK_ID_CHARS}}}")


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """What `token list` shows: never the secret, which is not stored."""

    name: str
    scopes: tuple[Scope, ...]
    task_patterns: tuple[str, ...]
    created_at: int
    revoked_at: int | None


def _split(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.split(",") if part)


def _scopes(names: Iterable[str]) -> tuple[Scope, ...]:
    chosen = tuple(dict.fromkeys(names))
    unknown = [name for name in chosen if name not in SCOPES]
    if not chosen or unknown:
        raise InvalidArgumentError(
            "scope", f"must be one or more of {', '.join(SCOPES)} (got {', '.join(unknown)!r})"
            if unknown else f"name at least one of {', '.join(SCOPES)}")
    return cast(tuple[Scope, ...], chosen)


def _patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(patterns))
    for pattern in chosen:
        if not _PATTERN.fullmatch(pattern):
            raise InvalidArgumentError(
                "tasks", f"{pattern[:40]!r} is not a task-id glob (1-{MAX_TASK_ID_CHARS} of "
                         f"{ID_CHARACTERS} and * ? [ ] !)")
    return chosen


def _info(row: ApiToken) -> TokenInfo:
    revoked = None if row.revoked_at is None else int(row.revoked_at)
    return TokenInfo(row.name, _scopes(_split(row.scopes)), _split(row.task_patterns),
                     int(row.created_at), revoked)


class Tokens:
    """The token store of one database."""

    def __init__(self, database: Database, clock: Clock) -> None:
        self._database = database
        self._clock = clock

    def create(self, name: str, scopes: Iterable[str], task_patterns: Iterable[str] = ()
               ) -> str:
        """Stores a new token's hash; returns its secret (the only time it exists)."""
        if not _NAME.fullmatch(name):
            raise InvalidArgumentError(
                "name", f"must be 1-{MAX_TOKEN_NAME_CHARS} of {ID_CHARACTERS}")
        chosen, patterns = _scopes(scopes), _patterns(task_patterns)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        if not stored.insert_token(self._database.db, name, token_hash(secret),
                                   ",".join(chosen), ",".join(patterns), self._clock()):
            raise FailedPreconditionError(f"a token named {name!r} exists already")
        return secret

    def list(self) -> list[TokenInfo]:
        return [_info(row) for row in stored.all_tokens(self._database.db)]

    def revoke(self, name: str) -> None:
        if not stored.revoke_token(self._database.db, name, self._clock()):
            raise FailedPreconditionError(f"no active token is named {name[:64]!r}")

    async def authenticate(self, secret: str) -> Caller | None:
        """The caller this secret names, or None for an unknown, revoked or oversized one."""
        if not secret or len(secret) > MAX_BEARER_TOKEN_CHARS:
            return None
        digest = token_hash(secret)
        row = await self._database.read(lambda: stored.active_token(digest))
        if row is None:
            return None
        info = _info(row)
        return Caller(info.name, frozenset(info.scopes), info.task_patterns)
