"""The public surface of shellexec.normalize, pinned: other layers are written against it."""

from __future__ import annotations

import dataclasses

import shellexec.normalize as normalize
from shellexec.normalize import SHELL_STATUSES, TERMINAL_STATUSES, ShellState, new_state


def test_exported_names_are_exactly_the_documented_api() -> None:
    assert sorted(normalize.__all__) == sorted([
        "MAX_FIELD_BYTES", "SHELL_STATUSES", "TERMINAL_STATUSES", "ShellState", "new_state",
        "fold", "fold_all", "cancel", "OutputText", "ShellOutput", "OutputSummary",
        "ShellRecord", "shell_record", "summarize", "dump_state", "load_state", "Unchanged",
        "Appended", "Replaced", "body_change", "bound_tail", "bounded_head", "shell_result",
    ])
    assert all(hasattr(normalize, name) for name in normalize.__all__)


def test_vocabulary_values() -> None:
    assert normalize.MAX_FIELD_BYTES == 262_144
    assert SHELL_STATUSES == ("pending", "running", "complete", "failed", "cancelled")
    assert TERMINAL_STATUSES == ("complete", "failed", "cancelled")


def test_every_public_name_has_a_docstring() -> None:
    for name in normalize.__all__:
        value = getattr(normalize, name)
        if not name.isupper():
            assert value.__doc__, name


def test_state_is_frozen_and_exposes_read_only_streams() -> None:
    state = new_state()
    assert dataclasses.is_dataclass(ShellState)
    for attribute in ("stdout", "stderr", "command"):
        try:
            setattr(state, attribute, None)
        except dataclasses.FrozenInstanceError:
            continue
        raise AssertionError(f"{attribute} is writable")


def test_agent_hint_is_optional_and_kept() -> None:
    assert new_state().agent is None
    assert new_state("claude").agent == "claude"
