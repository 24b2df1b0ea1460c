"""`terminal/create` params of the wrong type are "invalid params" naming the field, checked
as the agent sent them: the ACP SDK reads them leniently, skipping an item of `args` or `env`
that is not of its type and taking a bad `cwd` or `outputByteLimit` as absent, so the bridge
ran another command than the one asked for (`printf '<%s>' keep1 keep2` for `args`
`["<%s>", "keep1", 5, "keep2"]`), without a variable, or without the limit (ADR 0122, since
2026-12-06)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge.hostile import INVALID_PARAMS, error_of, request, run_raw

from shellexec.bridge.terminal_params import MARK, Refusal, invalid_field

from support.stack import Stack

BAD: list[tuple[dict[str, Any], str, str]] = [  # (params, field, reason)
    ({"args": ["<%s>", "keep1", 5, "keep2"]}, "args[2]", "is a number, not a string"),
    ({"args": ["a", {"x": 1}]}, "args[1]", "is an object, not a string"),
    ({"args": [None]}, "args[0]", "is null, not a string"),
    ({"env": [{"name": "KEEP", "value": "1"}, {"name": "DROPPED"}]}, "env[1]",
     "has no value"),
    ({"env": [{"name": "ALSO", "value": 7}]}, "env[0]",
     "has a value that is a number, not a string"),
    ({"env": [{"value": "x"}]}, "env[0]", "has no name"),
    ({"env": ["A=1"]}, "env[0]", "is a string, not an object with a name and a value"),
    ({"cwd": 5}, "cwd", "is a number, not a string"),
    ({"outputByteLimit": -1}, "outputByteLimit", "is not a whole number of bytes from 0"),
    ({"outputByteLimit": 1.5}, "outputByteLimit", "is not a whole number of bytes from 0"),
    ({"outputByteLimit": "10"}, "outputByteLimit", "is a string, not a whole number of bytes"),
    ({"outputByteLimit": True}, "outputByteLimit",
     "is a boolean, not a whole number of bytes"),
    # The SDK passes `_meta`'s keys as the handler's arguments, over the params.
    ({"_meta": {"args": [5]}}, "_meta.args",
     "is the name of one of the request's parameters, which the bridge takes from the "
     "params alone"),
]


@pytest.mark.parametrize(("params", "field", "reason"), BAD, ids=[field for _, field, _ in BAD])
def test_a_field_the_sdk_would_read_otherwise_is_named(params: dict[str, Any], field: str,
                                                       reason: str) -> None:
    assert invalid_field({"sessionId": "s", "command": "printf", **params}) == Refusal(
        field, reason)


@pytest.mark.parametrize("params", [
    {}, {"args": None, "env": None, "cwd": None, "outputByteLimit": None},
    {"args": ["a", ""], "env": [{"name": "A", "value": "", "_meta": {}}], "cwd": "sub",
     "outputByteLimit": 10},
    {"outputByteLimit": 10.0}, {"outputByteLimit": 0},
    {"args": "notalist"},  # the SDK refuses it itself
    {"_meta": {"trace": "x", MARK: "the agent's own"}},
])
def test_params_of_the_schema_s_types_pass(params: dict[str, Any]) -> None:
    assert invalid_field({"sessionId": "s", "command": "echo", **params}) is None


@pytest.mark.slow
def test_a_wrongly_typed_item_is_invalid_params_and_runs_nothing(stack: Stack,
                                                                 tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    finished, record = run_raw(stack, tmp_path, [
        request("terminal/create", command="touch", args=[str(marker), 5]),
        request("terminal/create", command=f"touch {marker}",
                env=[{"name": "KEEP", "value": "1"}, {"name": "DROPPED"}]),
        request("terminal/create", command=f"touch {marker}", outputByteLimit=-1),
        # A mark is a Python object: the agent's own `_meta` key of its name is no mark.
        request("terminal/create", command="true", _meta={MARK: {"reason": "forged"}}),
        # The SDK's own names of the params, which it reads too, and would pass unchecked (a
        # review: `field_meta.args` ran `touch` on another file).
        request("terminal/create", command="touch", args=["/nonexistent/x"],
                field_meta={"args": [str(marker)]}),
        request("terminal/create", command=f"touch {marker}", output_byte_limit=-5),
    ], "--host-terminals")

    assert finished.code == 0, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr
    answers = record["answers"]
    assert [error_of(answer) for answer in answers[:3]] == [
        (INVALID_PARAMS, {"args[1]": "is a number, not a string",
                          "reason": "args[1] is a number, not a string"}),
        (INVALID_PARAMS, {"env[1]": "has no value", "reason": "env[1] has no value"}),
        (INVALID_PARAMS, {"outputByteLimit": "is not a whole number of bytes from 0",
                          "reason": "outputByteLimit is not a whole number of bytes from 0"}),
    ]
    assert "terminalId" in answers[3]["result"]
    assert [error_of(answer) for answer in answers[4:]] == [
        (INVALID_PARAMS, {"field_meta": "is not a parameter of terminal/create: ACP names it "
                                        "_meta",
                          "reason": "field_meta is not a parameter of terminal/create: ACP "
                                    "names it _meta"}),
        (INVALID_PARAMS, {"output_byte_limit": "is not a parameter of terminal/create: ACP "
                                               "names it outputByteLimit",
                          "reason": "output_byte_limit is not a parameter of terminal/create: "
                                    "ACP names it outputByteLimit"}),
    ]
    assert not marker.exists()
    assert "terminal/create refused: args[1] is a number, not a string" in finished.stderr
