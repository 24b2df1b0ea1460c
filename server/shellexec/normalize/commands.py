"""What command a tool call runs, where, and whether it is a shell command at all.

Shell detection (any one signal is enough, and once seen it stays):

- `kind` is `execute`, `bash`, `run` or `shell`, in any case: the ACP way to say it;
- `rawInput.command` is an argv list, or `rawInput.parsed_cmd` exists: Codex reports `ls`,
  `cat`, `rg`... with kind `search` or `read`, but they are still shell commands;
- `_meta.terminal_info` exists: a display terminal is only opened for a command;
- `rawOutput` is Codex's end event (an argv `command` and `parsed_cmd`, the begin event's
  fields): a completion whose start never arrived is all there is of that command;
- the (unstable) `name` is `exec_command`, `bash` or `shell` (TypeScript Codex, Claude).

The command shown is `rawInput.command` (else, for such a completion, its end event's
`command`; its directory is the end event's `cwd`). An argv list that only wraps a script in a shell
(`["/bin/bash", "-lc", "ls -la"]`, any of bash/sh/zsh/dash/ksh/ash/fish with flags such as
`-c`, `-lc`, `-ic`; PowerShell `-Command`; `cmd /c`) shows the script; any other argv is
joined with shell quoting. A string that is such a wrapper (TypeScript Codex sends
`/bin/bash -lc '...'` for compound commands) is split into words as a POSIX shell (and
`shlex.split`) would, and unwrapped the same way.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Final

from shellexec.normalize.access import JsonObject, is_obj, nonblank_at, obj, obj_at
from shellexec.normalize.text import valid_text

_SHELL_KINDS: Final = frozenset({"execute", "bash", "run", "shell"})
_SHELL_NAMES: Final = frozenset({"exec_command", "bash", "shell"})
_POSIX_SHELLS: Final = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "fish"})
_POWERSHELLS: Final = frozenset({"powershell", "pwsh"})

_FlagTest = Callable[[str], bool]
_NO_OBJECT: JsonObject = {}

# A short-option cluster that includes -c: -c, -lc, -ic, -lic... Its first `c` ends the
# letters before it: letters that may be `c` on both sides of it made `-ccc…c1` cost the
# square of its length.
_COMMAND_FLAG = re.compile(r"-[A-Zabd-z]*c[A-Za-z]*")
# shlex's POSIX words: its blanks, and a word as a run of plain characters, escaped
# characters, single-quoted text and double-quoted text (where a backslash escapes only `"`
# and itself). Each alternative starts with a different character, so none backtracks.
_BLANKS = " \t\r\n"
# A word and the blanks after it.
_WORD = re.compile(
    r"""((?:[^ \t\r\n'"\\]++|\\[\s\S]|'[^']*+'|"(?:[^"\\]++|\\[\s\S])*+")++)[ \t\r\n]*+""")
_QUOTED = re.compile(r"""\\([\s\S])|'([^']*+)'|"((?:[^"\\]++|\\[\s\S])*+)["]""")
# A wrapper is a shell, its options, the command flag and the script: no more words than this.
_MAX_WRAPPER_WORDS = 64
# Cheap test before splitting: does this string start by invoking a known shell with a flag?
_WRAPPED = re.compile(
    r"\s*(?:\S*[/\\])?(?:bash|sh|zsh|dash|ksh|ash|fish|powershell|pwsh|cmd)(?:\.exe)?\s+[-/]",
    re.IGNORECASE,
)


def shell_signal(update: object) -> bool:
    """Whether this update by itself says that the tool call runs a shell command."""
    item = obj(update)
    raw_input = obj(item.get("rawInput"))
    return (
        _word_in(item.get("kind"), _SHELL_KINDS)
        or _word_in(item.get("name"), _SHELL_NAMES)
        or isinstance(raw_input.get("command"), list)
        or "parsed_cmd" in raw_input
        or is_obj(obj(item.get("_meta")).get("terminal_info"))
        or bool(codex_end_event(item))
    )


def codex_end_event(update: object) -> JsonObject:
    """`rawOutput` when it is Codex's end event (ExecCommandEndEvent), which repeats the begin
    event's argv `command`, `cwd` and `parsed_cmd`; else an empty object."""
    raw_output = obj(obj(update).get("rawOutput"))
    if isinstance(raw_output.get("command"), list) and "parsed_cmd" in raw_output:
        return raw_output
    return _NO_OBJECT


def codex_signal(update: object) -> bool:
    """Whether this update has Codex's shape, whose `_meta.terminal_output` carries chunks."""
    item = obj(update)
    raw_input = obj(item.get("rawInput"))
    return (
        isinstance(raw_input.get("command"), list)
        or "parsed_cmd" in raw_input
        or item.get("name") == "exec_command"
    )


def claude_signal(update: object) -> bool:
    """Whether this update has Claude's shape (`_meta.claudeCode`), whose
    `_meta.terminal_output` carries the whole output so far."""
    return is_obj(obj(obj(update).get("_meta")).get("claudeCode"))


def _word_in(value: object, words: frozenset[str]) -> bool:
    return isinstance(value, str) and value.strip().lower() in words


def command_of(raw_input: object) -> str | None:
    """The command to show for `rawInput`, or None when it names none."""
    command = obj(raw_input).get("command")
    if isinstance(command, str):
        text = valid_text(command)
        return _unwrap_string(text) if text.strip() else None
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        return display_argv([valid_text(arg) for arg in command])
    return None


def display_argv(argv: list[str]) -> str:
    """An argv as a person would type it: the script of a shell wrapper, else quoted words."""
    script = _wrapped_script(argv)
    return script if script is not None else shlex.join(argv)


def _unwrap_string(command: str) -> str:
    if not _WRAPPED.match(command):
        return command
    try:
        argv = list(islice(shell_words(command), _MAX_WRAPPER_WORDS + 1))
    except ValueError:  # unbalanced quotes: show what the agent sent
        return command
    script = _wrapped_script(argv) if len(argv) <= _MAX_WRAPPER_WORDS else None
    return script if script is not None else command


def shell_words(command: str) -> Iterator[str]:
    """The words of `command` as `shlex.split` gives them, one at a time; ValueError at an
    unclosed quote or a trailing backslash. shlex grows each word a character at a time,
    which costs the square of its length: a 4 MiB quoted script took minutes, on the lock
    every caller needs. These expressions take the same words in linear time."""
    position = len(command) - len(command.lstrip(_BLANKS))
    while position < len(command):
        word = _WORD.match(command, position)
        if word is None:
            raise ValueError("no closing quotation or escaped character")
        yield _QUOTED.sub(_unquoted, word.group(1))
        position = word.end()


def _unquoted(piece: re.Match[str]) -> str:
    escaped, single, double = piece.groups()
    if escaped is not None:
        return escaped
    if single is not None:
        return single
    if "\\" not in double:
        return double
    # A backslash escapes only `"` and itself there: pairs of backslashes first, left to right.
    return "\\".join(part.replace('\\"', '"') for part in double.split("\\\\"))


def _wrapped_script(argv: list[str]) -> str | None:
    """The script of `[shell, flags..., script]`, or None when argv is not exactly that."""
    if len(argv) < 3:
        return None
    program = re.split(r"[/\\]", argv[0])[-1].lower().removesuffix(".exe")
    if program in _POSIX_SHELLS:
        script = _script_after(argv[1:], lambda arg: bool(_COMMAND_FLAG.fullmatch(arg)))
    elif program in _POWERSHELLS:
        script = _script_after(argv[1:], lambda arg: arg.lower() in ("-command", "-c"))
    elif program == "cmd":
        script = _script_after(argv[1:], lambda arg: arg.lower() == "/c")
    else:
        return None
    return script if script and script.strip() else None


def _script_after(args: list[str], is_command_flag: _FlagTest) -> str | None:
    """The one argument after the command flag, when only options precede the flag."""
    for index, arg in enumerate(args):
        if is_command_flag(arg):
            return args[index + 1] if index + 2 == len(args) else None
        if not arg.startswith(("-", "/")):
            return None
    return None


def model_work_dir_of(update: object) -> str | None:
    """`rawInput.workdir` (OpenCode) or `rawInput.directory` (Qwen Code's shell tool, from
    Gemini CLI's): the model's own argument, never one an adapter filled in."""
    raw_input = obj(update).get("rawInput")
    return nonblank_at(raw_input, "workdir") or nonblank_at(raw_input, "directory")


def work_dir_of(update: object) -> str | None:
    """`rawInput.workdir` or `directory`, else `rawInput.cwd`, else
    `_meta.terminal_info.cwd`, else the `cwd` of Codex's end event."""
    item = obj(update)
    return (
        model_work_dir_of(item)
        or nonblank_at(item.get("rawInput"), "cwd")
        or nonblank_at(obj_at(item, "_meta", "terminal_info"), "cwd")
        or nonblank_at(codex_end_event(item), "cwd")
    )


def description_of(raw_input: object) -> str | None:
    """`rawInput.description` (Claude, OpenCode 1.1) or `command_description` (newer Claude)."""
    return nonblank_at(raw_input, "description") or nonblank_at(raw_input, "command_description")
