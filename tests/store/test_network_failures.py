"""A PostgreSQL server gone from the network (its machine died, a partition) is found by the
connections' TCP settings, not after the kernel's own retries (about fifteen minutes, while
every write of the replica waited): keepalives on idle connections, and a bound on data sent
and not acknowledged. A URL that sets its own keeps them."""

from __future__ import annotations

import pytest

from shellexec.store import postgres
from shellexec.store.opening import open_database

from support.postgres import PostgresServer


def test_the_settings_are_added_unless_the_url_sets_its_own() -> None:
    url = "postgresql://shellexec@db.internal:5432/shellexec"
    assert postgres.network_failure_options(url) == postgres.NETWORK_FAILURE_OPTIONS
    own = postgres.network_failure_options(url + "?keepalives_idle=60&tcp_user_timeout=0")
    assert "keepalives_idle" not in own
    assert "tcp_user_timeout" not in own
    assert own["keepalives_count"] == postgres.NETWORK_FAILURE_OPTIONS["keepalives_count"]


@pytest.mark.parametrize("kind", ["reader", "listener"])
def test_every_connection_of_a_replica_uses_them(postgres_server: PostgresServer,
                                                 kind: str) -> None:
    database = open_database(postgres_server.new_database(), readers=1)
    assert isinstance(database, postgres.PostgresDatabase)
    try:
        if kind == "reader":
            options = {option.keyword.decode(): (option.val or b"").decode()
                       for option in database.db.connection().pgconn.info}  # type: ignore[no-untyped-call]
        else:
            listener = database.listener(lambda notice: None, lambda: None)
            options = {name: str(value) for name, value in listener._options.items()}
    finally:
        database.close()
    for name, value in postgres.NETWORK_FAILURE_OPTIONS.items():
        assert options[name] == str(value), name
