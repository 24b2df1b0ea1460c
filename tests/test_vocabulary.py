"""The contract's and ACP's words live in one module, `shellexec.vocabulary`.

The test parses every module of the server (`server/shellexec/**/*.py`) and fails on a string
literal that spells a vocabulary word anywhere but in `shellexec/vocabulary.py`: code says
`STATUS_RUNNING`, not `"running"`, so a word is defined, typed and documented once. The words are
read from the vocabulary module itself: every public constant whose value is a string.

What counts as a literal, and what does not:
- A literal equal to a word, as a whole, anywhere in code: a comparison, an assignment, a default,
  a call argument, a dict key or value, a `Literal[...]`.
- Docstrings and other bare string statements are prose: not checked.
- Two words are also field names: `agent` (the session's agent field) and `message` (a feed
  event's or an error body's field). Where such a string names a field (a dict display key, a
  subscript index, the first argument of `.get`, `.pop` or `.setdefault`, or the field an
  `InvalidArgumentError` names) it is not the word.
  In any other position it is the word (a message type, an author type), so `"message"` as a
  compared or assigned value is flagged.
- `ALLOWED` names the other places where the same spelling is another vocabulary (each with its
  reason), by file and the name the literal is bound to: the key of the dict entry, the keyword,
  the assignment target, or else the enclosing function (the innermost of them). A word set the
  service itself reads or writes is not allowed here: it belongs in `shellexec.vocabulary`.
  Every entry must still match a literal (or it is removed).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shellexec import vocabulary

PACKAGE = Path(__file__).resolve().parent.parent / "server" / "shellexec"
HOME = "vocabulary.py"

# Where a word is spelled on purpose: (file under server/shellexec, bound name) -> why.
ALLOWED: dict[tuple[str, str], str] = {
    ("normalize/vocabulary.py", "_ACP_STATUS"):
        "the keys are agents' own spellings of ACP statuses, translated here and only here",
    ("normalize/state.py", "EchoPhase"): "the echo phases, persisted in fold states",
    ("normalize/state.py", "ECHO_PHASES"): "the echo phases, persisted in fold states",
    ("normalize/state.py", "echo"): "the echo phase `pending`",
    ("normalize/streams.py", "echo="): "the echo phase `pending`",
    ("normalize/serialize.py", "agent="): "reads the fold state's `agent` field",
    ("bridge/naming.py", "def agent_name"): "the fallback agent name, not an author type",
    ("bridge/permissions.py", "outcome="): "ACP's permission outcome `cancelled`",
    ("bridge/permissions.py", "def describe"): "the log text of that outcome",
    ("demo/shapes.py", "type:"): "codex's parsed command type `unknown`",
    ("app/cli.py", "prog="): "the program's name, not the error domain",
    ("bridge/agent.py", "version"): "the distribution's name, not the error domain",
    ("demo/service.py", "command"): "the installed program, not the error domain",
    ("store/models.py", "indexes"):
        "an index lists its columns by field name: `OutputChunk.message` is the foreign key to "
        "the chunk's message",
    ("bridge/handlers.py", "def read_text_file"): "the verb of a log line, not the scope `read`",
    ("api/call_log.py", "UNKNOWN_METHOD"):
        "the log's and the metrics' name of a method the server does not serve, not a result",
}

FIELD_NAMES = frozenset({"agent", "message"})
_FIELD_READERS = frozenset({"get", "pop", "setdefault"})
# Errors whose first argument names the offending request field.
_FIELD_ERRORS = frozenset({"InvalidArgumentError"})


def vocabulary_words() -> frozenset[str]:
    return frozenset(
        value for name, value in vars(vocabulary).items()
        if name.isupper() and isinstance(value, str))


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    word: str
    bound_to: str

    def __str__(self) -> str:
        return f"server/shellexec/{self.path}:{self.line}: {self.word!r} (in {self.bound_to})"


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _is_prose(node: ast.Constant, parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.Expr)


def _names_a_field(node: ast.Constant, parent: ast.AST | None) -> bool:
    if isinstance(parent, ast.Dict):
        return any(key is node for key in parent.keys)
    if isinstance(parent, ast.Subscript):
        return parent.slice is node
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        if isinstance(parent.func, ast.Name):
            return parent.func.id in _FIELD_ERRORS
        return isinstance(parent.func, ast.Attribute) and parent.func.attr in _FIELD_READERS
    return False


def _bound_to(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    """The name a literal is bound to: keyword, assignment target, else enclosing function."""
    current: ast.AST | None = node
    while current is not None:
        parent = parents.get(current)
        if isinstance(parent, ast.Dict) and current in parent.values:
            key = parent.keys[parent.values.index(current)]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return f"{key.value}:"
        if isinstance(current, ast.keyword) and current.arg is not None:
            return f"{current.arg}="
        if isinstance(current, (ast.Assign, ast.AnnAssign)):
            targets = current.targets if isinstance(current, ast.Assign) else [current.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    return target.id
                if isinstance(target, ast.Attribute):
                    return target.attr
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return f"def {current.name}"
        current = parent
    return "<module>"


def hits_in(path: Path, root: Path, words: frozenset[str]) -> Iterator[Hit]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parents = _parents(tree)
    relative = path.relative_to(root).as_posix()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if node.value not in words:
            continue
        parent = parents.get(node)
        if _is_prose(node, parent):
            continue
        if node.value in FIELD_NAMES and _names_a_field(node, parent):
            continue
        yield Hit(relative, node.lineno, node.value, _bound_to(node, parents))


def all_hits() -> list[Hit]:
    words = vocabulary_words()
    return [hit for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE) != Path(HOME)
            for hit in hits_in(path, PACKAGE, words)]


def test_the_words_are_read_from_the_vocabulary_module() -> None:
    words = vocabulary_words()
    assert {"idle", "running", "complete", "agent", "user", "tool_execute", "tool_call",
            "message", "pending", "failed", "cancelled", "success", "failure", "unknown",
            "session.message.added", "session.message.updated", "heartbeat", "end_of_stream",
            "tool_call_update", "agent_message_chunk", "user_message_chunk",
            "shell_exec"} <= words


def test_no_vocabulary_word_is_spelled_outside_its_module() -> None:
    spelled = [hit for hit in all_hits() if (hit.path, hit.bound_to) not in ALLOWED]
    assert not spelled, "import these words from shellexec.vocabulary:\n" + "\n".join(
        map(str, spelled))


def test_every_allowance_is_still_needed() -> None:
    hits = all_hits()
    unused = [key for key in ALLOWED if not any((hit.path, hit.bound_to) == key for hit in hits)]
    assert not unused, f"remove from ALLOWED: {unused}"


def test_the_vocabulary_module_is_a_leaf() -> None:
    tree = ast.parse((PACKAGE / HOME).read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.split(".")[0] == "shellexec"]


def test_the_check_finds_a_spelled_word(tmp_path: Path) -> None:
    """The scanner itself: a compared word is found, a field name and a docstring are not."""
    source = tmp_path / "sample.py"
    source.write_text('"""running"""\n'
                      'def f(row, payload):\n'
                      '    """Says "failed" in prose."""\n'
                      '    if row.status == "running":\n'
                      '        return payload["message"], payload.get("agent")\n'
                      '    return {"agent": row.kind == "message"}\n', encoding="utf-8")
    found = sorted((hit.line, hit.word) for hit in hits_in(source, tmp_path, vocabulary_words()))
    assert found == [(4, "running"), (6, "message")]
