"""Output chunks packed in the store (migration step 16, ADR 0150): a database that had only
text chunks gets the new columns and keeps its chunks as they were; new chunks are packed,
and a stream trims and reads across both kinds. In-process, on both engines."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from store.test_weighed_reads import run, table_layout

from shellexec.app.composition import Composition, compose
from shellexec.app.settings import Settings
from shellexec.normalize import MAX_FIELD_BYTES
from shellexec.projection import Masking
from shellexec.service.stateless import normalize_updates
from shellexec.store.compaction import COMPACT_AT_BYTES
from shellexec.store.migrations import SCHEMA_VERSION, applied_version
from shellexec.store.models import OutputChunk

from support.acp import Update, codex_delta, codex_start

# Chunks under packing's threshold, each different, so every one stays text.
OLD_DELTAS = [f"old line {index:05d} " + "." * 470 + "\n" for index in range(800)]
# Repetitive 16 KiB deltas: each packs to a few hundred bytes.
NEW_DELTAS = [f"new block {index:02d}\n" + "PASSED tests/test_x.py::test_y\n" * 528
              for index in range(9)]


@pytest.fixture
def url(tmp_path: Path, new_database: Callable[[], dict[str, str]]) -> str:
    return new_database().get("SHELLEXEC_DATABASE_URL", f"sqlite:///{tmp_path / 'packed.db'}")


def _publish_all(app: Composition, session_id: str, updates: list[Update]) -> Any:
    async def publish() -> Any:
        for update in updates:
            published = await app.publisher.publish(session_id, update, None)
        return published.message

    return run(publish())


def _as_before_step_16(url: str) -> None:
    """Takes the columns step 16 adds out of `output_chunk`, with the rows kept, and forgets
    the step: the database an older shellexec left."""
    statements = ["ALTER TABLE output_chunk DROP COLUMN packed",
                  "ALTER TABLE output_chunk DROP COLUMN text_bytes",
                  "DELETE FROM schema_version WHERE version >= 16"]
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as older:
            for statement in statements:
                older.execute(statement)
        older.close()
        return
    with psycopg.connect(url) as server:
        for statement in statements:
            server.execute(statement)


def _chunks(position: int) -> list[tuple[int | None, bool]]:
    """(recorded size, packed) of each chunk row of stdout, oldest first."""
    return [(chunk.text_bytes, chunk.packed is not None) for chunk in
            OutputChunk.select(OutputChunk.text_bytes, OutputChunk.packed)
            .where((OutputChunk.message == position) & (OutputChunk.stream == "stdout"))
            .order_by(OutputChunk.id)]


def test_an_upgraded_database_keeps_its_text_chunks_and_trims_across_both_kinds(
        url: str) -> None:
    updates = [codex_start("c", "make test"), *(codex_delta("c", text) for text in OLD_DELTAS)]
    app = compose(Settings(database_url=url))
    try:
        session_id = run(app.sessions.create("task-packed", "codex")).id
        _publish_all(app, session_id, updates)
        declared = run(app.database.read(lambda: table_layout(app.database.db, "output_chunk")))
    finally:
        app.close()
    _as_before_step_16(url)

    more = [codex_delta("c", text) for text in NEW_DELTAS]
    upgraded = compose(Settings(database_url=url))
    try:
        database = upgraded.database
        message = _publish_all(upgraded, session_id, more)
        version = run(database.read(lambda: applied_version(database.db)))
        layout = run(database.read(lambda: table_layout(database.db, "output_chunk")))
        position = run(database.read(lambda: int(OutputChunk.select(OutputChunk.message)
                                                 .scalar())))
        chunks = run(database.read(lambda: _chunks(position)))
        shell_output = run(upgraded.reader.shell_output(session_id, message.id))
    finally:
        upgraded.close()

    assert version == SCHEMA_VERSION
    assert layout == declared, "the columns at the end, as in a new database"
    old = [chunk for chunk in chunks if chunk[0] is None]
    new = [chunk for chunk in chunks if chunk[0] is not None]
    assert old
    assert not any(packed for _, packed in old), "kept as text, with no size"
    assert len(new) == len(NEW_DELTAS)
    assert all(packed for _, packed in new)
    # The stream went past the compaction threshold and was trimmed to the newest bytes: the
    # old rows counted by their text, the new by their recorded size.
    assert len(old) < len(OLD_DELTAS)
    kept = len(old) * len(OLD_DELTAS[0]) + sum(size or 0 for size, _ in new)
    assert MAX_FIELD_BYTES <= kept <= COMPACT_AT_BYTES
    assert shell_output.output == normalize_updates(updates + more, "codex", Masking()).output
