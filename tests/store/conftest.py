"""Fixtures the store tests share."""
from __future__ import annotations

import pytest

from support.postgres import PostgresServer


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the run's PostgreSQL server."""
    return postgres_server.new_database()
