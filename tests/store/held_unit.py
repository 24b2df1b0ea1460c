"""Another replica for tests/store/test_replica_races.py: a process of its own (peewee binds
the models once per process, so two replicas cannot share one) that runs one unit of work on
the database at URL, says `held` on stdout once the unit has written, keeps the transaction
open until a line arrives on stdin, commits, and says `committed`.

    python held_unit.py URL create TASK_ID SESSION_ID
    python held_unit.py URL publish SESSION_ID ACTIVE_AT
    python held_unit.py URL start SESSION_ID
    python held_unit.py URL delete SESSION_ID TASK_ID
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.store import queries
from shellexec.store.models import Session
from shellexec.vocabulary import SESSION_RUNNING


def _unit(app: Composition, action: str, args: list[str]) -> Callable[[], None]:
    statements = app.database.statements

    def create() -> None:  # what CreateSession writes
        task_id, session_id = args
        statements.insert_session(session_id, task_id, "codex", 1)

    def publish() -> None:  # what a publish writes of its session
        session_id, active_at = args
        Session.update(active_at=int(active_at)).where(Session.id == session_id).execute()

    def start() -> None:  # what StartTurn writes of its session's state and its task's
        session = queries.get_session(args[0])
        assert session is not None
        statements.set_session_state(session, SESSION_RUNNING, 2)

    def delete() -> None:  # what DeleteSession writes
        session_id, task_id = args
        statements.lock_sessions([session_id])
        statements.delete_session(session_id, task_id, 2)

    return {"create": create, "publish": publish, "start": start, "delete": delete}[action]


def main() -> None:
    url, action, *args = sys.argv[1:]
    app = compose(Settings(database_url=url))
    unit = _unit(app, action, args)

    def held() -> None:
        unit()
        # The statements went out through a pipeline (ADR 0138): said before the server ran
        # them, `held` could let this replica's unit run first, and the race go untested.
        app.database.statements.verify()
        print("held", flush=True)
        sys.stdin.readline()

    try:
        asyncio.run(app.database.write(held))
    finally:
        app.close()
    print("committed", flush=True)


if __name__ == "__main__":
    main()
