"""The words of the public contract and of ACP that the service reads or writes, in one place.

Every other module imports its words from here (a test fails on such a word written as a string
literal anywhere else: tests/test_vocabulary.py). This module is a leaf: it imports nothing from
shellexec, so any layer may use it. Each word set is a `Literal` type, one constant per word and
a tuple of them all; docs/api.md ("Vocabulary") says what the words mean. ACP's own status
spellings are translated to `ShellStatus` in `normalize.vocabulary`, not here.
"""

from __future__ import annotations

from typing import Final, Literal

# Sessions and tasks: `running` while a turn is open, else `idle`.
SessionState = Literal["idle", "running"]
SESSION_IDLE: Final[SessionState] = "idle"
SESSION_RUNNING: Final[SessionState] = "running"
SESSION_STATES: Final[tuple[SessionState, ...]] = (SESSION_IDLE, SESSION_RUNNING)

TaskState = SessionState
"""A task is `running` while any of its sessions is; the same two words."""
TASK_IDLE: Final[TaskState] = SESSION_IDLE
TASK_RUNNING: Final[TaskState] = SESSION_RUNNING

# Turns: `running`, then `complete` once the prompt ended.
TurnState = Literal["running", "complete"]
TURN_RUNNING: Final[TurnState] = "running"
TURN_COMPLETE: Final[TurnState] = "complete"
TURN_STATES: Final[tuple[TurnState, ...]] = (TURN_RUNNING, TURN_COMPLETE)

# Who wrote a message.
AuthorType = Literal["agent", "user"]
AUTHOR_AGENT: Final[AuthorType] = "agent"
AUTHOR_USER: Final[AuthorType] = "user"
AUTHOR_TYPES: Final[tuple[AuthorType, ...]] = (AUTHOR_AGENT, AUTHOR_USER)

# What a message is: a shell command, another tool call, or chat text.
MessageType = Literal["tool_execute", "tool_call", "message"]
MESSAGE_SHELL: Final[MessageType] = "tool_execute"
MESSAGE_TOOL: Final[MessageType] = "tool_call"
MESSAGE_TEXT: Final[MessageType] = "message"
MESSAGE_TYPES: Final[tuple[MessageType, ...]] = (MESSAGE_SHELL, MESSAGE_TOOL, MESSAGE_TEXT)

# The kind of a message's normalized payload.
NormalizedKind = Literal["shell_exec"]
NORMALIZED_SHELL_EXEC: Final[NormalizedKind] = "shell_exec"

# The status of a tool call, in the order a call moves through them; the last three are
# terminal. Chat text has no status (an empty string).
ShellStatus = Literal["pending", "running", "complete", "failed", "cancelled"]
STATUS_PENDING: Final[ShellStatus] = "pending"
STATUS_RUNNING: Final[ShellStatus] = "running"
STATUS_COMPLETE: Final[ShellStatus] = "complete"
STATUS_FAILED: Final[ShellStatus] = "failed"
STATUS_CANCELLED: Final[ShellStatus] = "cancelled"
SHELL_STATUSES: Final[tuple[ShellStatus, ...]] = (
    STATUS_PENDING, STATUS_RUNNING, STATUS_COMPLETE, STATUS_FAILED, STATUS_CANCELLED,
)
"""Every status a shell tool call can have, in the order a call moves through them."""
TERMINAL_STATUSES: Final[tuple[ShellStatus, ...]] = (
    STATUS_COMPLETE, STATUS_FAILED, STATUS_CANCELLED,
)
"""The statuses after which a command no longer runs."""
UNFINISHED_STATUSES: Final[tuple[ShellStatus, ...]] = tuple(
    status for status in SHELL_STATUSES if status not in TERMINAL_STATUSES)
"""The statuses of a command that may still change: every status but the terminal ones (the
tool calls a completed turn cancels)."""

# The result of a shell command (ADR 0017); `unknown` is drawn neutral.
Result = Literal["running", "success", "failure", "unknown"]
RESULT_RUNNING: Final[Result] = "running"
RESULT_SUCCESS: Final[Result] = "success"
RESULT_FAILURE: Final[Result] = "failure"
RESULT_UNKNOWN: Final[Result] = "unknown"
RESULTS: Final[tuple[Result, ...]] = (
    RESULT_RUNNING, RESULT_SUCCESS, RESULT_FAILURE, RESULT_UNKNOWN,
)

# The types of the message feed's events (ADR 0004).
FeedEventType = Literal[
    "session.message.added", "session.message.updated", "heartbeat", "end_of_stream",
    "session_deleted", "reset", "session.turn.started", "session.turn.completed",
]
EVENT_MESSAGE_ADDED: Final[FeedEventType] = "session.message.added"
EVENT_MESSAGE_UPDATED: Final[FeedEventType] = "session.message.updated"
EVENT_HEARTBEAT: Final[FeedEventType] = "heartbeat"
EVENT_END_OF_STREAM: Final[FeedEventType] = "end_of_stream"
# The session was deleted: its watchers' streams end with this event (ADR 0062).
EVENT_SESSION_DELETED: Final[FeedEventType] = "session_deleted"
# The events a watcher asked to resume after were compacted away: reload the boot state.
EVENT_RESET: Final[FeedEventType] = "reset"
# A turn started or completed: the event carries the turn (ADR 0090).
EVENT_TURN_STARTED: Final[FeedEventType] = "session.turn.started"
EVENT_TURN_COMPLETED: Final[FeedEventType] = "session.turn.completed"
FEED_EVENT_TYPES: Final[tuple[FeedEventType, ...]] = (
    EVENT_MESSAGE_ADDED, EVENT_MESSAGE_UPDATED, EVENT_HEARTBEAT, EVENT_END_OF_STREAM,
    EVENT_SESSION_DELETED, EVENT_RESET, EVENT_TURN_STARTED, EVENT_TURN_COMPLETED,
)

# ACP `sessionUpdate` values: a tool call's first update and its later ones...
AcpToolUpdate = Literal["tool_call", "tool_call_update"]
ACP_TOOL_CALL: Final[AcpToolUpdate] = "tool_call"
ACP_TOOL_CALL_UPDATE: Final[AcpToolUpdate] = "tool_call_update"
ACP_TOOL_UPDATES: Final[tuple[AcpToolUpdate, ...]] = (ACP_TOOL_CALL, ACP_TOOL_CALL_UPDATE)

# ... and the chat text chunks, which become agent and user messages.
AcpChatChunk = Literal["agent_message_chunk", "user_message_chunk"]
ACP_AGENT_MESSAGE_CHUNK: Final[AcpChatChunk] = "agent_message_chunk"
ACP_USER_MESSAGE_CHUNK: Final[AcpChatChunk] = "user_message_chunk"
ACP_CHAT_CHUNKS: Final[tuple[AcpChatChunk, ...]] = (
    ACP_AGENT_MESSAGE_CHUNK, ACP_USER_MESSAGE_CHUNK,
)

# ... and the ACP v2 "Terminal Output" updates, folded into the tool call whose content
# names their terminal (`{"type": "terminal", "terminalId": ...}`, ADR 0085).
AcpTerminalUpdate = Literal["terminal_update", "terminal_output_chunk"]
ACP_TERMINAL_UPDATE: Final[AcpTerminalUpdate] = "terminal_update"
ACP_TERMINAL_OUTPUT_CHUNK: Final[AcpTerminalUpdate] = "terminal_output_chunk"
ACP_TERMINAL_UPDATES: Final[tuple[AcpTerminalUpdate, ...]] = (
    ACP_TERMINAL_UPDATE, ACP_TERMINAL_OUTPUT_CHUNK,
)
# The `_meta` key with which a client that hosts a terminal (the bridge) names the tool call
# its terminal updates belong to, when no content names the terminal (ADR 0087).
META_TERMINAL_TOOL_CALL: Final = "shellexec_tool_call_id"
# The `_meta` mark of a `tool_call` the bridge made from a permission request's `toolCall`
# (Gemini CLI reports a call that needs approval nowhere else): it says what the call is,
# never what it printed (ADR 0131).
META_PERMISSION_REQUEST: Final = "shellexec_permission_request"

# ACP `ToolCallStatus` as ACP v1 spells it (what the demo sends; agents' other spellings are
# in `normalize.vocabulary`).
AcpToolStatus = Literal["pending", "in_progress", "completed", "failed"]
ACP_PENDING: Final[AcpToolStatus] = "pending"
ACP_IN_PROGRESS: Final[AcpToolStatus] = "in_progress"
ACP_COMPLETED: Final[AcpToolStatus] = "completed"
ACP_FAILED: Final[AcpToolStatus] = "failed"

# The ACP stop reason of a prompt the client cancelled.
ACP_STOP_CANCELLED: Final = "cancelled"

# The agents whose ACP dialects the normalizer knows (docs/normalization.md, "Per agent"): the
# canonical names of a session's `agent` and the Normalize `agent` hint. A hint is optional:
# every rule also works from the shape of the updates.
AgentName = Literal["codex", "claude", "opencode", "auggie", "omp", "gemini", "qwen", "goose",
                    "kimi", "vibe", "cursor", "copilot", "grok"]
AGENT_CODEX: Final[AgentName] = "codex"
AGENT_CLAUDE: Final[AgentName] = "claude"
AGENT_OPENCODE: Final[AgentName] = "opencode"
AGENT_AUGGIE: Final[AgentName] = "auggie"
AGENT_OMP: Final[AgentName] = "omp"
AGENT_GEMINI: Final[AgentName] = "gemini"
AGENT_QWEN: Final[AgentName] = "qwen"
AGENT_GOOSE: Final[AgentName] = "goose"
AGENT_KIMI: Final[AgentName] = "kimi"
AGENT_VIBE: Final[AgentName] = "vibe"
AGENT_CURSOR: Final[AgentName] = "cursor"
AGENT_COPILOT: Final[AgentName] = "copilot"
AGENT_GROK: Final[AgentName] = "grok"
AGENT_NAMES: Final[tuple[AgentName, ...]] = (
    AGENT_CLAUDE, AGENT_CODEX, AGENT_OPENCODE, AGENT_AUGGIE, AGENT_OMP, AGENT_GEMINI, AGENT_QWEN,
    AGENT_GOOSE, AGENT_KIMI, AGENT_VIBE, AGENT_CURSOR, AGENT_COPILOT, AGENT_GROK,
)
"""Every known agent, in the order a name that holds several of them is read."""
AGENT_ALIASES: Final[dict[str, AgentName]] = {
    "gemini-cli": AGENT_GEMINI, "google-gemini": AGENT_GEMINI,
    "qwen-code": AGENT_QWEN, "qwen-cli": AGENT_QWEN,
    "goose-cli": AGENT_GOOSE, "block-goose": AGENT_GOOSE,
    "kimi-cli": AGENT_KIMI, "kimi-code": AGENT_KIMI, "moonshot-kimi": AGENT_KIMI,
    "mistral-vibe": AGENT_VIBE, "vibe-acp": AGENT_VIBE,
    "cursor-agent": AGENT_CURSOR, "cursor-cli": AGENT_CURSOR,
    "copilot-cli": AGENT_COPILOT, "github-copilot": AGENT_COPILOT, "gh-copilot": AGENT_COPILOT,
    "grok-cli": AGENT_GROK, "xai-grok": AGENT_GROK,
    "claude-code": AGENT_CLAUDE, "claude-agent-acp": AGENT_CLAUDE, "codex-acp": AGENT_CODEX,
    "oh-my-pi": AGENT_OMP, "augment": AGENT_AUGGIE,
}
"""Other spellings people give an agent (lower case, as a whole name): each means that agent."""

# How the identifiers the server assigns begin (then hex digits, see `rules.limits`).
IdPrefix = Literal["ses_", "turn_", "msg_"]
SESSION_ID_PREFIX: Final[IdPrefix] = "ses_"
TURN_ID_PREFIX: Final[IdPrefix] = "turn_"
MESSAGE_ID_PREFIX: Final[IdPrefix] = "msg_"


# The `reason` of a google.rpc.ErrorInfo in an error's details: conditions a caller acts on
# (docs/api.md, "Error reasons"). The domain of every one of them is ERROR_DOMAIN.
ErrorReason = Literal["TURN_ALREADY_RUNNING", "SEQUENCE_CONFLICT", "REQUEST_ID_REUSED",
                      "REVISION_AHEAD", "TOO_MANY_WATCHERS", "TOKEN_MISSING", "TOKEN_UNKNOWN",
                      "SCOPE_MISSING", "TASK_NOT_COVERED"]
REASON_TURN_ALREADY_RUNNING: Final[ErrorReason] = "TURN_ALREADY_RUNNING"
REASON_SEQUENCE_CONFLICT: Final[ErrorReason] = "SEQUENCE_CONFLICT"
REASON_REQUEST_ID_REUSED: Final[ErrorReason] = "REQUEST_ID_REUSED"
REASON_REVISION_AHEAD: Final[ErrorReason] = "REVISION_AHEAD"
# The caller already holds as many open feed watchers on this replica as it may (ADR 0135).
REASON_TOO_MANY_WATCHERS: Final[ErrorReason] = "TOO_MANY_WATCHERS"
# The refusals of a call's token (ADR 0050, since 2026-12-06): UNAUTHENTICATED without an
# `authorization` header, and with one that names no valid token (unknown, revoked, another
# scheme than Bearer, too long); PERMISSION_DENIED for a valid token without the scope the
# method needs, and for a session created in a task the token's patterns do not cover.
REASON_TOKEN_MISSING: Final[ErrorReason] = "TOKEN_MISSING"
REASON_TOKEN_UNKNOWN: Final[ErrorReason] = "TOKEN_UNKNOWN"
REASON_SCOPE_MISSING: Final[ErrorReason] = "SCOPE_MISSING"
REASON_TASK_NOT_COVERED: Final[ErrorReason] = "TASK_NOT_COVERED"
ERROR_REASONS: Final[tuple[ErrorReason, ...]] = (
    REASON_TURN_ALREADY_RUNNING, REASON_SEQUENCE_CONFLICT, REASON_REQUEST_ID_REUSED,
    REASON_REVISION_AHEAD, REASON_TOO_MANY_WATCHERS, REASON_TOKEN_MISSING, REASON_TOKEN_UNKNOWN,
    REASON_SCOPE_MISSING, REASON_TASK_NOT_COVERED,
)
ERROR_DOMAIN: Final = "shellexec"

# The `resource_type` of a google.rpc.ResourceInfo in a NOT_FOUND error's details.
ResourceType = Literal["shellexec.v1.Session", "shellexec.v1.Turn", "shellexec.v1.Message",
                       "shellexec.v1.Task"]
RESOURCE_SESSION: Final[ResourceType] = "shellexec.v1.Session"
RESOURCE_TURN: Final[ResourceType] = "shellexec.v1.Turn"
RESOURCE_MESSAGE: Final[ResourceType] = "shellexec.v1.Message"
RESOURCE_TASK: Final[ResourceType] = "shellexec.v1.Task"


def is_terminal(status: ShellStatus) -> bool:
    """Whether a command with this status has stopped running."""
    return status in TERMINAL_STATUSES


def as_shell_status(word: str) -> ShellStatus:
    """`word` as a `ShellStatus` (e.g. a stored column); ValueError for any other word."""
    for status in SHELL_STATUSES:
        if word == status:
            return status
    raise ValueError(f"not a shell status: {word!r}")

# What a bearer token allows (docs/api.md, "Authentication"): `ingest` writes sessions, turns
# and updates, `read` reads them, `admin` does both.
Scope = Literal["ingest", "read", "admin"]
SCOPE_INGEST: Final[Scope] = "ingest"
SCOPE_READ: Final[Scope] = "read"
SCOPE_ADMIN: Final[Scope] = "admin"
SCOPES: Final[tuple[Scope, ...]] = (SCOPE_INGEST, SCOPE_READ, SCOPE_ADMIN)
