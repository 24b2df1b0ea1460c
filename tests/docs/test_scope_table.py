"""The scope table of docs/api.md ("Authentication") and `METHOD_SCOPES` say the same.

Each method is named in the table as docs/api.md's list of methods names it (**List
sessions**); a method placed in the interceptor but missing from its scope's row, or listed in
a row whose scope it does not need, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

from shellexec.api.auth import ANY_TOKEN, METHOD_SCOPES
from shellexec.vocabulary import SCOPE_ADMIN, SCOPE_INGEST, SCOPE_READ

API = Path(__file__).resolve().parents[2] / "docs" / "api.md"

# Method -> its name in the table.
NAMES = {
    "NormalizeShellExec": "Normalize", "SummarizeShellOutput": "Summarize",
    "CreateSession": "Create session", "StartTurn": "Start turn",
    "PublishUpdate": "Publish update", "CompleteTurn": "Complete turn",
    "GetSession": "Get session", "ListSessions": "List sessions",
    "ListMessages": "List messages", "GetShellOutput": "Shell output",
    "WatchMessages": "Message feed", "GetBootState": "Boot state",
    "DeleteSession": "Delete session", "DeleteTask": "Delete task",
}


def _rows() -> dict[str, set[str]]:
    text = API.read_text()
    table = text[text.index("| scope | grants |"):]
    rows: dict[str, set[str]] = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        scope, grants = (cell.strip() for cell in line.strip("|").split("|"))
        rows[scope.strip("`")] = {name for name in NAMES.values()
                                  if re.search(rf"\b{name}\b", grants.split(";")[0])}
    return rows


def test_every_method_is_in_the_rows_of_the_scopes_it_needs() -> None:
    assert set(METHOD_SCOPES) == set(NAMES)
    rows = _rows()
    for scope in (SCOPE_INGEST, SCOPE_READ):
        assert rows[scope] == {NAMES[m] for m, needs in METHOD_SCOPES.items() if scope in needs}
    assert rows["any valid token"] == {NAMES[m] for m, needs in METHOD_SCOPES.items()
                                       if needs == ANY_TOKEN}
    admin_only = {NAMES[m] for m, needs in METHOD_SCOPES.items() if needs == {SCOPE_ADMIN}}
    assert admin_only <= rows[SCOPE_ADMIN]
