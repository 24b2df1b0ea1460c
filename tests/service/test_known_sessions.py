"""The facts of sessions kept between units of work, bounded by SHELLEXEC_KNOWN_SESSIONS; 0
keeps none (docs/operations.md, "Configuration")."""

from __future__ import annotations

from pathlib import Path

from shellexec.service.known_sessions import KnownSessions, SessionFacts

from support.acp import agent_text
from support.stack import running_stack


def facts(number: int) -> SessionFacts:
    return SessionFacts(f"ses_{number}", "task", "codex")


def test_the_oldest_facts_go_first_past_the_capacity() -> None:
    known = KnownSessions(capacity=2)
    for number in range(3):
        known.put(facts(number))
    assert [known.get(f"ses_{number}") for number in range(3)] == [None, facts(1), facts(2)]


def test_a_capacity_of_zero_keeps_nothing() -> None:
    # It raised StopIteration, which no future takes: every publish waited for ever.
    known = KnownSessions(capacity=0)
    known.put(facts(1))
    assert known.get("ses_1") is None


def test_a_service_that_keeps_no_session_facts_stores_publishes(tmp_path: Path) -> None:
    with running_stack(tmp_path, SHELLEXEC_KNOWN_SESSIONS="0") as stack:
        session_id = stack.api.new_session()["id"]
        stack.api.publish(session_id, agent_text("one"), sequence=1)
        stack.api.publish(session_id, agent_text(" two"), sequence=2)
        assert stack.api.session(session_id)["revision"] == 2
