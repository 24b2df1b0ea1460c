"""The answer to `session/request_permission`, chosen by policy since no human is asked.

`--permission` names the option kind to pick. When the agent does not offer that kind, the
other option of the same family is picked (allow_once <-> allow_always, reject_once <->
reject_always): an allow never turns into a reject or the reverse. When the family is absent
altogether, or the policy is `cancel`, or the prompt is being cancelled, the answer is the ACP
`cancelled` outcome, which every agent must accept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, get_args

from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse

from shellexec.bridge.os_text import quoted_start

PermissionAnswer = Literal["allow_once", "allow_always", "reject_once", "reject_always", "cancel"]
PERMISSION_ANSWERS: Final[tuple[str, ...]] = get_args(PermissionAnswer)
DEFAULT_ANSWER: Final[PermissionAnswer] = "allow_once"

_PREFERENCES: Final[dict[PermissionAnswer, tuple[str, ...]]] = {
    "allow_once": ("allow_once", "allow_always"),
    "allow_always": ("allow_always", "allow_once"),
    "reject_once": ("reject_once", "reject_always"),
    "reject_always": ("reject_always", "reject_once"),
    "cancel": (),
}


def cancelled() -> RequestPermissionResponse:
    """The outcome a client sends when it will not (or can no longer) choose."""
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def choose(answer: PermissionAnswer, options: Sequence[PermissionOption]
           ) -> RequestPermissionResponse:
    """The response to a permission request offering `options`, under policy `answer`."""
    for kind in _PREFERENCES[answer]:
        for option in options:
            if option.kind == kind:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))
    return cancelled()


def describe(response: RequestPermissionResponse) -> str:
    """What was answered, for the log: `selected '<option id>'` or `cancelled`. The option
    id is the agent's: quoted, so a newline in it cannot forge a log line, and by its start
    only."""
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        return f"selected {quoted_start(outcome.option_id, repr)}"
    return "cancelled"
