"""Opening the database a URL names: SQLite (the embedded default) or PostgreSQL."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

from shellexec.store.database import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_CACHE_KIB,
    Database,
    open_sqlite,
    sqlite_path,
)
from shellexec.store.postgres import (
    DEFAULT_POOL_SIZE,
    is_postgres_url,
    open_postgres,
    postgres_url_problem,
)

# The value of a libpq URL option that carries a secret.
_SECRET_VALUE = re.compile(r"([?&](?:ssl)?password=)[^&#]*")
NOT_REPEATED = ("is not a database URL (not repeated here: it may hold a password); use "
                "postgresql://USER:PASSWORD@HOST:PORT/NAME or sqlite:///PATH")


def database_url_problem(url: str) -> str | None:
    """Why `url` names no database this store opens, or None. A plain path gets the URL it
    was meant as; the text of another scheme's URL is not repeated, since it may hold a
    password."""
    try:
        scheme = urlparse(url).scheme
    except ValueError:  # an IPv6 host's "[" left open
        return NOT_REPEATED
    if is_postgres_url(url):
        return postgres_url_problem(url)
    if scheme == "sqlite":
        return None
    if not url:
        return "is empty; unset it for the default (sqlite:///data/shellexec.db)"
    if scheme:
        return (f"unsupported database {scheme[:40]!r}; use sqlite:///PATH or "
                "postgresql://USER:PASSWORD@HOST:PORT/NAME")
    if any(mark in url for mark in "@=:"):  # a mistyped URL or libpq keywords: a password?
        return NOT_REPEATED
    return (f"{url[:200]!r} is not a database URL; use {'sqlite:///' + url[:200]!r} for "
            "that SQLite file, or postgresql://USER:PASSWORD@HOST:PORT/NAME")


def shown_database_url(url: str) -> str:
    """`url` as a banner may print it: without its password, in the login or in the query
    (the user stays, so that the URL of a database without one, as `up`'s local PostgreSQL,
    can be copied from it). A SQLite URL names a file: shown as it is."""
    if not is_postgres_url(url):
        return url
    scheme, _, rest = url.partition("://")
    end = next((index for index, char in enumerate(rest) if char in "/?#"), len(rest))
    login, at, place = rest[:end].rpartition("@")
    netloc = f"{login.split(':', 1)[0]}:…@{place}" if at and ":" in login else rest[:end]
    after = _SECRET_VALUE.sub(r"\1…", rest[end:])
    return f"{scheme}://{netloc}{after}"


def open_database(url: str, readers: int = 3, cache_kib: int = DEFAULT_CACHE_KIB,
                  pool_size: int = DEFAULT_POOL_SIZE,
                  busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, upgrade: bool = True
                  ) -> Database:
    """Opens (creating if needed) and migrates the database named by `url`.

    `sqlite:///PATH`: `readers` reader connections besides the writer's, each with a page
    cache of up to `cache_kib` KiB, waiting up to `busy_timeout_ms` for a lock another
    program holds on the file. `postgresql://USER@HOST:PORT/NAME` (libpq's URL form):
    `pool_size` connections, one of them the writer's (ADR 0070). Without `upgrade`, a
    database some steps behind this shellexec is OlderSchemaError, and only a new one is
    made.
    """
    if is_postgres_url(url):
        return open_postgres(url, pool_size, upgrade)
    return open_sqlite(url, readers, cache_kib, busy_timeout_ms, upgrade)


def sqlite_file(url: str) -> Path | None:
    """The SQLite file `url` names, made absolute; None for a PostgreSQL URL."""
    return None if is_postgres_url(url) else sqlite_path(url).absolute()
