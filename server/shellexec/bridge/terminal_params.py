"""`terminal/create`'s params checked as the agent sent them, before the ACP SDK reads them.

The SDK reads requests leniently, as ACP's schema allows a client to: an item of `args` or
`env` that is not of its type is skipped, and a `cwd` or `outputByteLimit` that is not is
taken as absent. For a command that is the wrong thing to do: `printf` with `args` `["<%s>",
"keep1", 5, "keep2"]` ran `printf '<%s>' keep1 keep2`, a variable without a value was left
out of the environment, and an `outputByteLimit` of -1 or 1.5 became "no limit" (and one of
"10" was read as 10, pydantic's coercion, though ACP's type is an integer). The
SDK also passes the keys of a request's `_meta` to the handler as its arguments, over the
params of the same name, so `_meta.args` would stand for `args` unchecked.

So the bridge checks the raw params as each frame arrives (`agent_stream`), and marks a
request that breaks these rules with a `Refusal` under `_meta`. The SDK hands `_meta`'s keys
to the handler, which answers "invalid params" naming the field (`refuse_marked`), after its
own checks of the method and the session, as for a NUL byte in `args`. The mark is a Python
object, which no JSON the agent sends can be, so the agent cannot forge one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from acp.exceptions import RequestError

from shellexec.bridge.frames import json_type

log = logging.getLogger("shellexec.bridge")

METHOD: Final = "terminal/create"
# The `_meta` key (so the handler's keyword argument) the mark is passed under.
MARK: Final = "shellexec_refusal"
# The handler's arguments, which a `_meta` key of the same name would replace.
_ARGUMENTS: Final = frozenset({"session_id", "command", "args", "env", "cwd",
                               "output_byte_limit"})
# The SDK's own names of ACP's params, which it reads too (its models populate by name): as
# `output_byte_limit` or `field_meta` (its `_meta`) they would pass unchecked. ACP's name of
# each, to say so.
_SDK_NAMES: Final = {"session_id": "sessionId", "output_byte_limit": "outputByteLimit",
                     "field_meta": "_meta"}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A field of a `terminal/create` request that breaks ACP's schema, and how."""

    field: str
    reason: str


def mark_invalid(message: dict[str, Any]) -> None:
    """Marks `message` if it is a `terminal/create` request whose params break the schema in
    a way the SDK would not refuse but read otherwise (module docstring)."""
    params = message.get("params")
    if message.get("method") != METHOD or "id" not in message or not isinstance(params, dict):
        return
    refusal = _sdk_name(params) or invalid_field(params)
    if refusal is not None:
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), MARK: refusal}


def invalid_field(params: Mapping[str, Any]) -> Refusal | None:
    """The first field of `params` that breaks the schema, if any. Fields of a type the SDK
    refuses itself (`command` no string, `args` no array) are left to it."""
    for name in ("args", "env"):
        items = params.get(name)
        for index, item in enumerate(items if isinstance(items, list) else ()):
            reason = _arg_problem(item) if name == "args" else _env_problem(item)
            if reason is not None:
                return Refusal(f"{name}[{index}]", reason)
    cwd = params.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        return Refusal("cwd", f"is {json_type(cwd)}, not a string")
    limit = params.get("outputByteLimit")
    if limit is not None and (reason := _limit_problem(limit)) is not None:
        return Refusal("outputByteLimit", reason)
    meta = params.get("_meta")
    for key in sorted(_ARGUMENTS.intersection(meta) if isinstance(meta, dict) else ()):
        return Refusal(f"_meta.{key}", "is the name of one of the request's parameters, "
                       "which the bridge takes from the params alone")
    return None


def _sdk_name(params: Mapping[str, Any]) -> Refusal | None:
    """A param under the SDK's name rather than ACP's, which the SDK would read unchecked."""
    for name in sorted(_SDK_NAMES.keys() & params.keys()):
        return Refusal(name, f"is not a parameter of {METHOD}: ACP names it "
                             f"{_SDK_NAMES[name]}")
    return None


def refuse_marked(arguments: Mapping[str, Any]) -> None:
    """Invalid params naming the field, when the request was marked by `mark_invalid`."""
    refusal = arguments.get(MARK)
    if isinstance(refusal, Refusal):
        log.warning("terminal/create refused: %s %s", refusal.field, refusal.reason)
        raise RequestError.invalid_params({refusal.field: refusal.reason,
                                           "reason": f"{refusal.field} {refusal.reason}"})


def _arg_problem(item: object) -> str | None:
    return None if isinstance(item, str) else f"is {json_type(item)}, not a string"


def _env_problem(item: object) -> str | None:
    if not isinstance(item, dict):
        return f"is {json_type(item)}, not an object with a name and a value"
    for key in ("name", "value"):
        if key not in item:
            return f"has no {key}"
        if not isinstance(item[key], str):
            return f"has a {key} that is {json_type(item[key])}, not a string"
    return None


def _limit_problem(value: object) -> str | None:
    """What keeps `value` from being a count of bytes: a whole number from 0, as JSON may
    write one (`10`, `10.0`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"is {json_type(value)}, not a whole number of bytes"
    if value < 0 or (isinstance(value, float) and not value.is_integer()):
        return "is not a whole number of bytes from 0"
    return None
