"""The OpenAPI document of the REST routes: protoc-gen-openapiv2's output from proto/, corrected
where Envoy's front door differs from grpc-gateway's conventions or knows more than the proto
says (ADR 0109).

- The watch route answers `text/event-stream`: one `data: <JSON event>` block per event, not
  grpc-gateway's newline-delimited `{"result": ...}` objects.
- Every error is `{code, message, details}` (`details` absent on the front door's own errors),
  with the statuses docs/api.md lists per case.
- Request fields carry the bounds and patterns `api/validation.py` enforces, from
  `shellexec.rules.limits`, so the document allows no value the server rightly rejects.
  Request bodies are closed: the transcoder ignores most fields a request message lacks, but
  rejects some (an empty name), so callers send only the documented ones.
- A body whose fields are all optional (StartTurn, CompleteTurn) may be left out.

`make generate` writes the result to docs/openapi.json; Envoy serves it at OPENAPI_PATH. The
functions here are pure: they take the generator's document and return a new one.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final

from shellexec.rules.limits import (
    ID_CHARACTERS,
    MAX_AGENT_CHARS,
    MAX_NORMALIZE_UPDATES,
    MAX_REQUEST_ID_CHARS,
    MAX_STOP_REASON_CHARS,
    MAX_SUMMARIZE_FIELD_BYTES,
    MAX_TASK_ID_CHARS,
    MAX_TOOL_CALL_ID_CHARS,
    MIN_NORMALIZE_UPDATES,
    MIN_REQUEST_ID_CHARS,
    MIN_SEQUENCE,
    MIN_SINCE_REVISION,
    MIN_TASK_ID_CHARS,
    SERVER_ID_HEX_DIGITS,
)
from shellexec.vocabulary import MESSAGE_ID_PREFIX, SESSION_ID_PREFIX, TURN_ID_PREFIX, IdPrefix

Schema = dict[str, Any]

OPENAPI_PATH: Final = "/api/v1/openapi.json"
TITLE: Final = "shellexec REST API"
API_VERSION: Final = "v1"
WATCH_PATH: Final = "/api/v1/task-sessions/{session_id}/messages:watch"
EVENT_STREAM: Final = "text/event-stream"
JSON: Final = "application/json"
_INT32_MAX: Final = 2**31 - 1
# A sequence is int64, which proto3 JSON writes as a string. The contract sends it as a JSON
# number, which the transcoder takes exactly up to int64's largest; it takes a decimal string
# too, which Swagger 2.0 (no `oneOf`) cannot offer beside the number.
_SEQUENCE: Final[Schema] = {
    "type": "integer", "format": "int64", "minimum": MIN_SEQUENCE, "maximum": 2**63 - 1}
_ERROR: Final = "rpcStatus"
_ERROR_REF: Final = {"$ref": f"#/definitions/{_ERROR}"}


def _server_id(prefix: IdPrefix) -> Schema:
    return {"pattern": f"^{prefix}[0-9a-f]{{{SERVER_ID_HEX_DIGITS}}}$"}


def _optional_id(prefix: IdPrefix) -> Schema:
    """A server id or "" (no cursor)."""
    return {"pattern": f"^({prefix}[0-9a-f]{{{SERVER_ID_HEX_DIGITS}}})?$"}


_TASK_ID: Final = {"pattern": f"^[{ID_CHARACTERS}]{{{MIN_TASK_ID_CHARS},{MAX_TASK_ID_CHARS}}}$"}
_REQUEST_ID: Final = {
    "pattern": f"^([{ID_CHARACTERS}]{{{MIN_REQUEST_ID_CHARS},{MAX_REQUEST_ID_CHARS}}})?$"}

# Constraints on the parameters of every operation, by name.
PARAMETER_CONSTRAINTS: Final[dict[str, Schema]] = {
    "session_id": _server_id(SESSION_ID_PREFIX),
    "turn_id": _server_id(TURN_ID_PREFIX),
    "message_id": _server_id(MESSAGE_ID_PREFIX),
    "task_id": _TASK_ID,
    "limit": {"minimum": 0, "maximum": _INT32_MAX},
    "before": _optional_id(MESSAGE_ID_PREFIX),
    "after": _optional_id(MESSAGE_ID_PREFIX),
    "sort": {"enum": ["", "asc", "desc"]},
    "since_revision": {"minimum": MIN_SINCE_REVISION, "maximum": _INT32_MAX},
}
# Where an operation's parameter of that name means something else: List sessions' cursors
# are session ids.
OPERATION_PARAMETER_CONSTRAINTS: Final[dict[str, dict[str, Schema]]] = {
    "ShellExecService_ListSessions": {"before": _optional_id(SESSION_ID_PREFIX),
                                      "after": _optional_id(SESSION_ID_PREFIX)},
}

# `toolCallId` is required of tool updates only, which Swagger 2.0 cannot say: described.
_ACP_UPDATE: Final[Schema] = {
    "type": "object",
    "required": ["sessionUpdate"],
    "properties": {"sessionUpdate": {"type": "string", "minLength": 1}},
    "additionalProperties": True,
    "description": "An ACP update object, passed as the agent sent it. `tool_call` and "
                   "`tool_call_update` updates need a `toolCallId` of 1 to "
                   f"{MAX_TOOL_CALL_ID_CHARS} characters.",
}
_SHELL_TEXT: Final[Schema] = {"maxLength": MAX_SUMMARIZE_FIELD_BYTES}
_INT32: Final[Schema] = {"minimum": -(2**31), "maximum": _INT32_MAX}
# Request bodies: callers send only the fields of the request message.
CLOSED_DEFINITIONS: Final = (
    "v1CreateSessionRequest", "ShellExecServiceStartTurnBody",
    "ShellExecServicePublishUpdateBody", "ShellExecServiceCompleteTurnBody",
    "v1NormalizeShellExecRequest", "v1SummarizeShellOutputRequest", "v1ShellOutput",
)
# Operations whose body has no required field: an absent body is an empty one.
OPTIONAL_BODY_OPERATIONS: Final = ("ShellExecService_StartTurn", "ShellExecService_CompleteTurn")

# Constraints on request fields: definition -> property -> what to add to its schema.
PROPERTY_CONSTRAINTS: Final[dict[str, dict[str, Schema]]] = {
    "v1CreateSessionRequest": {"task_id": _TASK_ID, "agent": {"maxLength": MAX_AGENT_CHARS},
                               "request_id": _REQUEST_ID},
    "ShellExecServiceStartTurnBody": {"request_id": _REQUEST_ID},
    "ShellExecServicePublishUpdateBody": {"update": _ACP_UPDATE,
                                          "sequence": _SEQUENCE},
    "ShellExecServiceCompleteTurnBody": {"stop_reason": {"maxLength": MAX_STOP_REASON_CHARS}},
    "v1NormalizeShellExecRequest": {
        "updates": {"minItems": MIN_NORMALIZE_UPDATES, "maxItems": MAX_NORMALIZE_UPDATES,
                    "items": {"type": "object", "additionalProperties": True}},
        "agent": {"maxLength": MAX_AGENT_CHARS},
    },
    "v1ShellOutput": {"exit_code": _INT32, "stdout": _SHELL_TEXT, "stderr": _SHELL_TEXT},
}
# Statuses every operation may answer (docs/api.md, "Errors"); 409 and 429 only where they
# can happen.
ERROR_STATUSES: Final = {
    "400": "INVALID_ARGUMENT (a malformed field, named at the start of `message`; a body "
           "that is not JSON; an unknown query parameter) or FAILED_PRECONDITION",
    "401": "UNAUTHENTICATED: no valid bearer token (authentication on; reason TOKEN_MISSING "
           "or TOKEN_UNKNOWN)",
    "403": "PERMISSION_DENIED: the token lacks the scope (reason SCOPE_MISSING), or does "
           "not cover the task of a session it creates (reason TASK_NOT_COVERED), or a "
           "cross-site request",
    "404": "NOT_FOUND: an unknown session, turn, task or message, or an id that cannot exist",
}
_CONFLICT: Final = {"409": "ALREADY_EXISTS (reason SEQUENCE_CONFLICT): the sequence was "
                           "stored for another update"}
_CONFLICT_OPERATIONS: Final = ("ShellExecService_PublishUpdate",)
_TOO_MANY_WATCHERS: Final = {"429": "RESOURCE_EXHAUSTED (reason TOO_MANY_WATCHERS): the caller "
                                    "already holds as many open feeds as it may (docs/api.md, "
                                    "\"Limits\"); close some first"}
_WATCH_OPERATIONS: Final = ("ShellExecService_WatchMessages",)
_ERROR_PROPERTIES: Final[Schema] = {
    "code": {"type": "integer", "format": "int32"},
    "message": {"type": "string"},
    "details": {"type": "array", "items": {"$ref": "#/definitions/protobufAny"}},
}
_ERROR_SCHEMA: Final[Schema] = {
    "type": "object",
    "description": "An error: `code` is the google.rpc.Code number, `message` is for people "
                   "(programs read `details`), `details` are google.rpc messages named by "
                   "`@type` (ErrorInfo, BadRequest, ResourceInfo). Errors the front door "
                   "answers itself have no `details`, but for its token check's 401.",
    # The front door's own errors have no details (but the token check's 401); every error
    # has the other two.
    "required": [name for name in _ERROR_PROPERTIES if name != "details"],
    "properties": _ERROR_PROPERTIES,
}
_BEARER: Final = "bearer"
_BEARER_SCHEME: Final[Schema] = {
    "type": "apiKey", "in": "header", "name": "authorization",
    "description": "`Bearer <token>` when authentication is on (docs/api.md, "
                   "\"Authentication\"); each route needs the scope docs/api.md names."}
_EVENT_DESCRIPTION: Final = (
    "A server-sent event stream (`text/event-stream`): each event is one `data:` line "
    "holding a WatchMessagesResponse as JSON (the `x-event-data` schema), followed by a "
    "blank line. A heartbeat event comes at least every heartbeat interval; the stream ends "
    "after `end_of_stream`, `session_deleted` or `reset`. An error before the first event "
    "is an HTTP error status with the JSON error body.")


def corrected(generated: Schema) -> Schema:
    """protoc-gen-openapiv2's document as Envoy serves the routes it describes."""
    document = copy.deepcopy(generated)
    document["info"] = {"title": TITLE, "version": API_VERSION,
                        "description": "The REST/JSON routes of the shellexec front door "
                                       "(Envoy); see docs/api.md."}
    document["securityDefinitions"] = {_BEARER: _BEARER_SCHEME}
    # Authentication is off on loopback with no tokens configured (docs/api.md).
    document["security"] = [{}, {_BEARER: []}]
    definitions: dict[str, Schema] = document["definitions"]
    definitions[_ERROR] = copy.deepcopy(_ERROR_SCHEMA)
    _constrain_properties(definitions)
    for name in CLOSED_DEFINITIONS:
        definitions[name]["additionalProperties"] = False
    constrained: set[str] = set()
    for path, operations in document["paths"].items():
        for operation in operations.values():
            constrained |= _constrain_parameters(operation)
            _error_responses(operation)
            if path == WATCH_PATH:
                _event_stream(operation)
    if unused := PARAMETER_CONSTRAINTS.keys() - constrained:
        raise ValueError(f"no parameter of the document is named {sorted(unused)}")
    return document


def _constrain_properties(definitions: dict[str, Schema]) -> None:
    for definition, properties in PROPERTY_CONSTRAINTS.items():
        for name, constraint in properties.items():
            definitions[definition]["properties"][name].update(copy.deepcopy(constraint))


def _constrain_parameters(operation: Schema) -> set[str]:
    """Adds the constraints of the operation's parameters; returns the names constrained."""
    constrained = set()
    constraints = {**PARAMETER_CONSTRAINTS,
                   **OPERATION_PARAMETER_CONSTRAINTS.get(operation["operationId"], {})}
    for parameter in operation.get("parameters", ()):
        if parameter["in"] == "body" and operation["operationId"] in OPTIONAL_BODY_OPERATIONS:
            parameter["required"] = False
        if parameter["in"] in ("path", "query") and parameter["name"] in constraints:
            parameter.update(copy.deepcopy(constraints[parameter["name"]]))
            constrained.add(parameter["name"])
    return constrained


def _error_responses(operation: Schema) -> None:
    statuses = dict(ERROR_STATUSES)
    if operation["operationId"] in _CONFLICT_OPERATIONS:
        statuses.update(_CONFLICT)
    if operation["operationId"] in _WATCH_OPERATIONS:
        statuses.update(_TOO_MANY_WATCHERS)
    responses = operation["responses"]
    for status, description in statuses.items():
        responses[status] = {"description": description, "schema": dict(_ERROR_REF)}
    responses["default"] = {"description": "Any other error, in the same shape.",
                            "schema": dict(_ERROR_REF)}


def _event_stream(operation: Schema) -> None:
    operation["produces"] = [EVENT_STREAM, JSON]
    operation["responses"]["200"] = {
        "description": _EVENT_DESCRIPTION,
        "schema": {"type": "string", "format": "binary",
                   "x-event-data": {"$ref": "#/definitions/v1WatchMessagesResponse"}},
    }


def render(document: Schema) -> str:
    """The document as the checked-in file holds it: stable key order, one trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
