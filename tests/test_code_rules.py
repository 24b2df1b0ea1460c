"""Rules of the server's code that a review would not catch by reading one change.

- No `asyncio.wait_for`: on Python 3.11 it returns a result that completes in the same turn of
  the loop as the task's cancellation, and drops the cancellation (a feed whose client had
  closed it held its place among the caller's feeds until its next write failed; ADR 0135).
  `async with asyncio.timeout(...)` keeps it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "server" / "shellexec"


def _calls_wait_for(tree: ast.AST) -> list[int]:
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "wait_for"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "asyncio"]


def test_the_rule_finds_a_call_to_wait_for() -> None:
    assert _calls_wait_for(ast.parse("async def f():\n    await asyncio.wait_for(g(), 1)\n")) == [2]


def test_no_module_of_the_server_calls_asyncio_wait_for() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             for line in _calls_wait_for(ast.parse(path.read_text(), str(path)))]
    assert found == []
