"""Shell detection for agents that send no `kind`: their tool's name, title or arguments.

`commands.shell_signal` reads the ACP ways (`kind`, Codex's argv, `_meta.terminal_info`...).
Goose and Kimi send no `kind` at all, so their shell calls are recognised here, only while the
call's `kind` is absent or `other` (an explicit `read`, `search`, `edit`... is never overruled):

- `_meta.goose.toolCall.toolName` is `shell` (Goose), `_meta.toolName` is
  `run_shell_command` (Qwen Code), `_meta.tool_name` is `bash` (Mistral Vibe),
  `_meta.claudeCode.toolName` is `Bash` (Claude);
- the title is `Shell` or starts with `Shell: ` (Kimi, Qwen), `shell · ` (Goose) or `bash: `
  (Vibe);
- the arguments are a shell call's: a non-blank string `command` and nothing but `timeout`,
  `cwd`, `description`... (any agent; Kimi sends them as JSON text in `content`).

A call whose `_meta` names another tool (Goose's `text_editor`, whose `rawInput` is
`{"command": "view", "path": ...}`) is not a shell command whatever its arguments, and neither
is a call whose arguments hold anything a shell tool does not take (a `path`, a `pattern`).
"""

from __future__ import annotations

from typing import Final

from shellexec.normalize.access import JsonObject, obj, obj_at, text_at
from shellexec.vocabulary import AGENT_GOOSE

_NEUTRAL_KINDS: Final = frozenset({"", "other"})
# Goose, Qwen Code, and Mistral Vibe or Claude (`Bash`).
_SHELL_TOOL_NAMES: Final = frozenset({"shell", "run_shell_command", "bash"})
_CLAUDE_META: Final = "claudeCode"
_SHELL_TITLE_PREFIXES: Final = ("Shell: ", "shell · ", "bash: ")
_SHELL_TITLE: Final = "Shell"
# `_meta` keys that only carry live output, never the tool's name.
_LIVE_META_KEYS: Final = frozenset({"terminal_output", "terminal_output_delta", "terminal_exit",
                                     "toolNotification"})
# What a shell tool takes besides its command (Goose, Kimi, Vibe, Qwen, Claude, OpenCode).
_SHELL_ARGUMENTS: Final = frozenset({
    "command", "timeout", "timeout_secs", "cwd", "workdir", "directory", "description",
    "run_in_background", "is_background",
})


def agent_shell_signal(update: JsonObject, arguments: JsonObject,
                       named_before: str | None = None) -> bool:
    """Whether an update without a shell `kind` still says the call runs a shell command.

    `arguments` are the call's arguments as read so far (`rawInput`, or Kimi's argument text);
    `named_before` is the tool's name an earlier update of the call gave (`ShellState.tool`).
    """
    if not _may_name_a_tool(update, arguments):
        return False  # a live delta: cheap, it runs for every chunk
    kind = update.get("kind")
    if isinstance(kind, str) and kind.strip().lower() not in _NEUTRAL_KINDS:
        return False
    named = tool_name(update) or named_before
    if named is not None:
        return named in _SHELL_TOOL_NAMES
    return _shell_title(text_at(update, "title")) or _shell_arguments(arguments)


def _may_name_a_tool(update: JsonObject, arguments: JsonObject) -> bool:
    if arguments or "title" in update:
        return True
    meta = obj(update.get("_meta"))
    return bool(meta) and not meta.keys() <= _LIVE_META_KEYS


def tool_name(update: JsonObject) -> str | None:
    """The tool's own name when the agent puts it in `_meta` (Goose, Qwen, Vibe, Claude), lower
    case."""
    meta = obj(update.get("_meta"))
    for name in (text_at(obj_at(meta, AGENT_GOOSE, "toolCall"), "toolName"),
                 text_at(meta, "toolName"), text_at(meta, "tool_name"),
                 text_at(obj_at(meta, _CLAUDE_META), "toolName")):
        if name is not None and name.strip():
            return name.strip().lower()
    return None


def _shell_title(title: str | None) -> bool:
    return title is not None and (title.strip() == _SHELL_TITLE
                                  or title.startswith(_SHELL_TITLE_PREFIXES))


def _shell_arguments(arguments: JsonObject) -> bool:
    command = arguments.get("command")
    return (isinstance(command, str) and bool(command.strip())
            and all(key in _SHELL_ARGUMENTS for key in arguments))
