"""The code under "Reading output with SQL" in docs/operations.md reads what the service
serves, on both engines: packed rows and plain ones, and NUL and U+FFFF in plain rows (which
PostgreSQL holds escaped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.acp import codex_delta, codex_start
from support.stack import Stack

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
FENCE = "```python\n"


def _documented_code() -> dict[str, Any]:
    """What the section's Python block defines, run as a reader would paste it."""
    section = OPERATIONS.read_text(encoding="utf-8").split("**Reading output with SQL.**")[1]
    block = section[section.index(FENCE) + len(FENCE):]
    namespace: dict[str, Any] = {}
    exec(block[:block.index("```")], namespace)  # the docs' own code, as a reader pastes it
    return namespace


def test_the_documented_sql_reads_what_the_service_serves(stack: Stack) -> None:
    documented = _documented_code()
    session_id = stack.api.new_session()["id"]
    deltas = ["plain \x00 nul, \uffff0 and \uffff1 and \uffff, é\n",
              "PASSED tests/test_x.py::test_y\n" * 300, "tail \x00\uffff0\n"]
    message_id = stack.api.play(session_id, [codex_start("sql-1", "make test"),
                                             *(codex_delta("sql-1", text) for text in deltas)])

    rows: Any = stack.sql(documented["STREAM_ROWS"].replace("%s", "?"), message_id)
    read = "".join(documented["chunk_text"](data, None if packed is None else bytes(packed),
                                            stack.on_postgres) for data, packed in rows)

    assert [packed is not None for _, packed in rows] == [False, True, False]
    assert read == "".join(deltas)
    assert read == stack.api.shell_output(session_id, message_id)["output"]["stdout"]
