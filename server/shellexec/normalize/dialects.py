"""Agents' own dialects, read into the shapes the fold's rules already know.

Codex, Claude, OpenCode, Auggie and OMP report a shell command in shapes the rules of `commands`,
`streams`, `raw_output` and `exit_codes` read directly. Other agents say the same things their
own way: the command in the title or in argument JSON text, `rawInput`/`rawOutput` as JSON
strings, output in their own `_meta` key, the exit code or a cancel only in text. `read_dialect`
turns one update of such an agent into the update those rules expect, plus the few facts no
standard field can carry (a text exit code, live stderr, a shell signal). It is pure: the
update it returns is a new object, the one given is never changed.

Which agent: the hint (`agents.agent_of`), else the shape of the update (`agent_by_shape`):

- Goose: `_meta.goose`, or a `_meta.toolNotification` of type `live_output`;
- Qwen Code: `_meta.toolName` is `run_shell_command`;
- Mistral Vibe: `_meta.tool_name` is present;
- Gemini CLI: a `tool_call` of kind `execute` without `rawInput` whose `content` is its
  place text, `[current working directory ...]` or `[in ...]` (older releases: a title that
  ends with it);
- Kimi CLI: no `kind`, no `rawInput`, title `Shell` or `Shell: ...`;
- Copilot CLI (second-hand): `rawInput` with both `command` and a `commands` list;
- Cursor (second-hand): `rawOutput` with `exitCode` and `stdout` or `stderr`.

The fold keeps the agent it recognised in the state (`ShellState.agent`), so the updates that
follow (a final update carries none of these marks) are read the same way. grok needs no
translation: its cumulative output per update is the snapshot rule of `content`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from shellexec.normalize.access import JsonObject, block_texts, is_obj, obj, text_at
from shellexec.normalize.agents import agent_of
from shellexec.normalize.arguments import (
    gemini_arguments,
    is_gemini_place,
    is_gemini_title,
    json_object_text,
    kimi_arguments,
    raw_input_object,
)
from shellexec.normalize.cancel_texts import (
    gemini_cancel_output,
    is_qwen_cancel,
    is_qwen_placeholder,
    is_vibe_interrupt,
)
from shellexec.normalize.content import join_blocks
from shellexec.normalize.live_meta import goose_live_output
from shellexec.normalize.shell_tools import agent_shell_signal, tool_name
from shellexec.normalize.text_exits import (
    GeminiEnding,
    copilot_exit,
    gemini_ending,
    gemini_exit,
    goose_exit,
    is_qwen_model_text,
    kimi_exit,
    qwen_exit,
    qwen_signal,
    vibe_failure,
)
from shellexec.normalize.vocabulary import is_terminal, parse_acp_status
from shellexec.vocabulary import (
    ACP_TOOL_CALL,
    AGENT_COPILOT,
    AGENT_CURSOR,
    AGENT_GEMINI,
    AGENT_GOOSE,
    AGENT_KIMI,
    AGENT_QWEN,
    AGENT_VIBE,
    STATUS_CANCELLED,
    STATUS_FAILED,
    AgentName,
)

_Work = dict[str, object]
_Translator = Callable[[_Work], "int | None"]

_EXECUTE: Final = "execute"
_LIVE_OUTPUT: Final = "live_output"
_KIMI_TITLE: Final = "Shell"
_KIMI_TITLE_PREFIX: Final = "Shell: "
_GOOSE_EMPTY: Final = "(no output)"
_GOOSE_NOTICE_HEAD: Final = "[Output exceeded "
_GOOSE_NOTICE_SAVED: Final = " Full output saved to "
_VIBE_RESULT_KEYS: Final = frozenset({"command", "stdout", "stderr", "returncode"})
_DELTA_KEYS: Final = frozenset({"sessionUpdate", "toolCallId", "status", "_meta"})
_DELTA_META_KEYS: Final = frozenset({"terminal_output", "terminal_output_delta", "terminal_exit"})
_RAW_INPUT: Final = "rawInput"
_RAW_OUTPUT: Final = "rawOutput"
_CONTENT: Final = "content"
_STATUS: Final = "status"
# ACP v2 spells a cancelled tool call as our word: the fold reads it as `cancelled`.
_ACP_CANCELLED: Final = STATUS_CANCELLED
_ACP_FAILED: Final = STATUS_FAILED
_GEMINI_BACKGROUND: Final[GeminiEnding] = "background"


@dataclass(frozen=True, slots=True)
class AgentReading:
    """One update as the fold's rules read it, and what only an agent's dialect says."""

    update: JsonObject
    agent: AgentName | None = None
    """The agent the hint or the update's shape names."""
    shell: bool = False
    """The update says it is a shell command in a way `commands.shell_signal` does not read."""
    text_exit: int | None = None
    """An exit code the agent wrote in its own text (ranked below structured fields)."""
    stdout_delta: str | None = None
    stderr_delta: str | None = None
    """Live stderr text, appended (Goose keeps the streams apart)."""
    tool: str | None = None
    """The tool's own name, when the update's `_meta` gives it (`shell_tools.tool_name`)."""


def read_dialect(hint: str | None, update: JsonObject,
                 tool: str | None = None) -> AgentReading:
    """`update` read in the dialect of the agent `hint` or its shape names (see the module);
    `tool` is the tool's name an earlier update of the call gave."""
    agent = agent_of(hint)
    if agent is None and _only_live_output(update):
        return AgentReading(update)  # a delta of a call of the agents the rules read directly
    agent = agent or agent_by_shape(update)
    translate = _TRANSLATORS.get(agent) if agent is not None else None
    named = tool_name(update)
    if translate is None and not isinstance(update.get(_RAW_INPUT), str):
        # The common case (every delta of the agents the rules read directly): no copy.
        shell = agent_shell_signal(update, obj(update.get(_RAW_INPUT)), tool)
        return AgentReading(update, agent, shell, tool=named)
    work: _Work = dict(update)
    raw_input = raw_input_object(work.get(_RAW_INPUT))
    if raw_input is not None:
        work[_RAW_INPUT] = raw_input
    live = goose_live_output(work.get("_meta")) if agent == AGENT_GOOSE else None
    text_exit = translate(work) if translate is not None else None
    shell = agent_shell_signal(work, obj(work.get(_RAW_INPUT)), tool)
    return AgentReading(work, agent, shell, text_exit,
                        None if live is None else live.stdout,
                        None if live is None else live.stderr, named)


def _only_live_output(update: JsonObject) -> bool:
    return update.keys() <= _DELTA_KEYS and obj(update.get("_meta")).keys() <= _DELTA_META_KEYS


def agent_by_shape(update: JsonObject) -> AgentName | None:
    """The agent whose unmistakable mark this update carries (the module's table), else None."""
    meta = obj(update.get("_meta"))
    raw_input, raw_output = update.get(_RAW_INPUT), update.get(_RAW_OUTPUT)
    # Goose's own `_meta` key is its name.
    notification = obj(meta.get("toolNotification"))
    if is_obj(meta.get(AGENT_GOOSE)) or notification.get("type") == _LIVE_OUTPUT:
        return AGENT_GOOSE
    if text_at(meta, "toolName") == "run_shell_command":
        return AGENT_QWEN
    if text_at(meta, "tool_name") is not None:
        return AGENT_VIBE
    if _gemini_shaped(update, raw_input):
        return AGENT_GEMINI
    if _kimi_shaped(update, raw_input):
        return AGENT_KIMI
    if isinstance(obj(raw_input).get("commands"), list) and "command" in obj(raw_input):
        return AGENT_COPILOT
    if "exitCode" in obj(raw_output) and ("stdout" in obj(raw_output)
                                         or "stderr" in obj(raw_output)):
        return AGENT_CURSOR
    return None


def _gemini_shaped(update: JsonObject, raw_input: object) -> bool:
    if update.get("sessionUpdate") != ACP_TOOL_CALL or update.get("kind") != _EXECUTE:
        return False
    places = any(map(is_gemini_place, block_texts(update.get(_CONTENT))))
    return raw_input is None and (places or is_gemini_title(text_at(update, "title")))


def _kimi_shaped(update: JsonObject, raw_input: object) -> bool:
    title = text_at(update, "title")
    return ("kind" not in update and raw_input is None and title is not None
            and (title.strip() == _KIMI_TITLE or title.startswith(_KIMI_TITLE_PREFIX)))


def _finished(work: _Work) -> bool:
    status = parse_acp_status(work.get(_STATUS))
    return status is not None and is_terminal(status)


def _set_texts(work: _Work, texts: list[str]) -> None:
    """Replaces the update's `content` (when it has one) by these texts, blanks dropped."""
    if _CONTENT in work:
        work[_CONTENT] = [{"type": "text", "text": text} for text in texts if text.strip()]


def _gemini(work: _Work) -> int | None:
    """Command from the title, directory from the place text; cancel, ending and exit texts.

    Gemini sends its place text with the call (`tool_call`, a permission request), never with
    its result: a finished update's text is the result, even one that reads like a place."""
    finished = _finished(work)
    if not is_obj(work.get(_RAW_INPUT)) and work.get("kind") == _EXECUTE:
        places = None if finished else work.get(_CONTENT)
        arguments = gemini_arguments(text_at(work, "title"), places)
        if arguments is not None:
            work[_RAW_INPUT] = arguments
    texts = block_texts(work.get(_CONTENT))
    if not finished:
        _set_texts(work, [text for text in texts if not is_gemini_place(text)])
        return None
    _set_texts(work, texts)
    return _gemini_result(work, join_blocks(texts)) if texts else None


def _gemini_result(work: _Work, shown: str) -> int | None:
    """The final text of a Gemini call: a cancel, an ending without exit code, or an exit."""
    output = gemini_cancel_output(shown)
    if output is not None:
        work[_STATUS] = _ACP_CANCELLED
        _set_texts(work, [output])
        return None
    ending = gemini_ending(shown)
    if ending is not None:
        # A signal or an error failed the command (whatever status came with it); one sent to
        # the background ended the call with no result. No output, no exit code.
        if ending != _GEMINI_BACKGROUND:
            work[_STATUS] = _ACP_FAILED
        _set_texts(work, [])
        return None
    found = gemini_exit(shown)
    if found is None:
        return None
    _set_texts(work, [found.rest])
    return found.exit_code


def _qwen(work: _Work) -> int | None:
    """The model text in `content` is not output: its `Exit Code:` line and cancel text count."""
    texts = block_texts(work.get(_CONTENT))
    model = [text for text in texts if is_qwen_model_text(text) or is_qwen_cancel(text)]
    if not model:
        return None
    model_texts = set(model)
    _set_texts(work, [text for text in texts if text not in model_texts])
    if any(map(is_qwen_cancel, model)):
        work[_STATUS] = _ACP_CANCELLED
        display = work.get(_RAW_OUTPUT)
        if isinstance(display, str) and is_qwen_placeholder(display):
            del work[_RAW_OUTPUT]
        return None
    code = next((code for code in map(qwen_exit, model) if code is not None), None)
    if code is None and any(map(qwen_signal, model)):
        work[_STATUS] = _ACP_FAILED  # killed by a signal: no exit code, and no success
    return code


def _goose(work: _Work) -> int | None:
    """The closing exit paragraph and `(no output)` are not output; the notice stays as text."""
    texts = block_texts(work.get(_CONTENT))
    if not texts:
        return None
    first, code = texts[0], None
    found = goose_exit(first)
    if found is not None:
        first, code = found.rest, found.exit_code
    first = "" if first.strip() == _GOOSE_EMPTY else first
    notices = [text for text in texts[1:] if _is_goose_notice(text.strip())]
    notice_texts = set(notices)
    _set_texts(work, [first, *(text for text in texts[1:] if text not in notice_texts)])
    raw = work.get(_RAW_OUTPUT)
    stdout = text_at(raw, "stdout")
    if notices and isinstance(raw, dict) and stdout is not None:
        work[_RAW_OUTPUT] = {**raw, "stdout": join_blocks([stdout, *notices])}
    return code


def _is_goose_notice(text: str) -> bool:
    return (text.startswith(_GOOSE_NOTICE_HEAD) and text.endswith("]")
            and _GOOSE_NOTICE_SAVED in text)


def _kimi(work: _Work) -> int | None:
    """Until the call finishes, `content` is the argument JSON; then the output or exit text."""
    if not _finished(work):
        arguments = kimi_arguments(work.get(_CONTENT))
        if arguments is not None and not is_obj(work.get(_RAW_INPUT)):
            work[_RAW_INPUT] = arguments
        _set_texts(work, [])
        return None
    found = kimi_exit(join_blocks(block_texts(work.get(_CONTENT))))
    if found is None:
        return None
    _set_texts(work, [])
    return found.exit_code


def _vibe(work: _Work) -> int | None:
    """`rawOutput` as a JSON string, its failure text, or its interrupt text (a cancel)."""
    raw = work.get(_RAW_OUTPUT)
    if is_vibe_interrupt(raw) and parse_acp_status(work.get(_STATUS)) == STATUS_FAILED:
        work[_STATUS] = _ACP_CANCELLED
        del work[_RAW_OUTPUT]
        _set_texts(work, [])
        return None
    result = json_object_text(raw)
    if result is not None and set(result) <= _VIBE_RESULT_KEYS and "returncode" in result:
        work[_RAW_OUTPUT] = {"stdout": result.get("stdout"), "stderr": result.get("stderr"),
                             "exit_code": result.get("returncode")}
        _set_texts(work, [])  # `Ran <command>`: a summary, not output
        return None
    failure = vibe_failure(raw) if isinstance(raw, str) else None
    if failure is None:
        return None
    work[_RAW_OUTPUT] = {"stdout": failure.stdout, "stderr": failure.stderr}
    _set_texts(work, [])  # the same failure text again
    return failure.exit_code


def _copilot(work: _Work) -> int | None:
    """The closing `<exited with exit code N>` of the result text (second-hand)."""
    code = None
    raw = work.get(_RAW_OUTPUT)
    found = copilot_exit(raw) if isinstance(raw, str) else None
    if found is not None:
        work[_RAW_OUTPUT], code = found.rest, found.exit_code
    texts = block_texts(work.get(_CONTENT))
    found = copilot_exit(join_blocks(texts)) if texts else None
    if found is not None:
        _set_texts(work, [found.rest])
        code = found.exit_code if code is None else code
    return code


def _cursor(work: _Work) -> int | None:
    """`rawOutput.exitCode` is Cursor's structured exit code (second-hand)."""
    raw = work.get(_RAW_OUTPUT)
    if isinstance(raw, dict) and "exitCode" in raw and "exit_code" not in raw:
        work[_RAW_OUTPUT] = {**raw, "exit_code": raw["exitCode"]}
    return None


_TRANSLATORS: Final[dict[AgentName, _Translator]] = {
    AGENT_GEMINI: _gemini,
    AGENT_QWEN: _qwen,
    AGENT_GOOSE: _goose,
    AGENT_KIMI: _kimi,
    AGENT_VIBE: _vibe,
    AGENT_COPILOT: _copilot,
    AGENT_CURSOR: _cursor,
}
