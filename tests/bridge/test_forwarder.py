"""Ordering, sequencing, buffering and retrying between the agent and the service, including
answers lost between the service's commit and the bridge."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import grpc
import pytest
from bridge.harness import Finished, Launched, Step, Update, assert_recorded, launch, run_bridge
from bridge.provider_scripts import say, steps, unfinished

from shellexec.client import ShellExecClient
from shellexec.v1 import shell_exec_service_pb2 as pb

from support.acp import codex_delta, codex_start
from support.lossy_proxy import LossyProxy
from support.stack import Stack, free_port

pytestmark = pytest.mark.slow

PROMPT = "Build it."


def _burst(call_id: str, count: int) -> list[Update]:
    """A command announced, then `count` deltas; it ends with only an exit code, so its output
    is exactly the concatenation of the deltas, in order."""
    end: Update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                   "status": "completed",
                   "_meta": {"terminal_exit": {"terminal_id": call_id, "exit_code": 0,
                                               "signal": None}}}
    deltas = [codex_delta(call_id, f"chunk {n:04d}\n") for n in range(count)]
    return [codex_start(call_id, "make burst"), *deltas, end]


def test_a_burst_of_500_deltas_is_stored_in_arrival_order(stack: Stack, client: ShellExecClient,
                                                          tmp_path: Path) -> None:
    updates = [*_burst("burst-1", 500), say("Interleaved text, "), say("then more.")]
    finished = run_bridge(stack, tmp_path, steps(updates), "--agent", "codex",
                          "--prompt", PROMPT)

    assert finished.code == 0, finished.stderr
    session_id = finished.result()["session_id"]
    [tool] = [m for m in client.messages(session_id) if m.type == "tool_execute"]
    output = client.shell_output(session_id, tool.id).output
    assert output.stdout == "".join(f"chunk {n:04d}\n" for n in range(500))
    assert "published 505 update(s); 0 already stored" in finished.stderr
    assert_recorded(client, session_id, PROMPT, updates, "codex")


def _paused_after_kill(before: list[Update], after: list[Step], killed: Path) -> list[Step]:
    """The agent sends `before`, marks `streaming`, waits until the test has killed the
    server (it creates `killed`), then plays `after`: its later updates meet the outage."""
    return [*steps(before), {"mark": "streaming"}, {"wait_for_file": str(killed)}, *after]


def _killed_mid_stream(stack: Stack, tmp_path: Path, script: list[Step], killed: Path,
                       *options: str) -> Launched:
    """Launches the bridge on a `_paused_after_kill` script, kills the server once the agent
    streams, then lets the agent go on into the outage."""
    bridge = launch(stack, tmp_path, script, "--agent", "codex", *options, "--prompt", PROMPT)
    bridge.wait_for_mark("streaming")
    stack.kill_server()
    killed.touch()
    return bridge


def _assert_gave_up(finished: Finished, reason: str) -> None:
    """The bridge failed loudly: exit 3, nothing on stdout, `reason` on stderr, and the agent
    cancelled once."""
    assert finished.code == 3
    assert finished.stdout == ""
    assert reason in finished.stderr
    assert len(finished.record["session/cancel"]) == 1


def test_service_restart_mid_stream_loses_and_duplicates_nothing(
        own_stack: Stack, tmp_path: Path) -> None:
    updates = _burst("outage-1", 60)
    killed = tmp_path / "killed"
    script = _paused_after_kill(updates[:20], steps(updates[20:], pause_every=1, pause=0.02),
                                killed)
    bridge = _killed_mid_stream(own_stack, tmp_path, script, killed)
    time.sleep(0.5)  # the agent keeps streaming into the buffer meanwhile
    own_stack.start_server()
    finished = bridge.finish()

    assert finished.code == 0, finished.stderr
    assert "service unreachable" in finished.stderr
    assert "service reachable again" in finished.stderr
    session_id = finished.result()["session_id"]
    with own_stack.client() as client:
        [tool] = [m for m in client.messages(session_id) if m.type == "tool_execute"]
        output = client.shell_output(session_id, tool.id).output
        assert output.stdout == "".join(f"chunk {n:04d}\n" for n in range(60))
        assert_recorded(client, session_id, PROMPT, updates, "codex")


def test_service_gone_longer_than_the_window_fails_loudly_and_cancels_the_agent(
        own_stack: Stack, tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    script = _paused_after_kill(unfinished("codex", "gone-1", lines=2), [
        {"update": codex_delta("gone-1", "more\n")}, {"wait_for_cancel": 30}], killed)
    bridge = _killed_mid_stream(own_stack, tmp_path, script, killed, "--retry-for", "1.5")
    finished = bridge.finish(timeout=30)

    _assert_gave_up(finished, "service unreachable for 1.5 s (--retry-for) while trying to "
                              "publish update #")


def test_a_wait_for_the_service_after_ctrl_c_says_so_and_another_ends_it(
        own_stack: Stack, tmp_path: Path) -> None:
    """An agent that ignores the cancel takes the second Ctrl-C; the bridge then waited for
    the service through the rest of --retry-for, saying nothing, and only a third ended it."""
    killed = tmp_path / "killed"
    script = _paused_after_kill(unfinished("codex", "away-1", lines=2), [
        {"update": codex_delta("away-1", "more\n")}, {"mark": "sent"}, {"sleep": 60}], killed)
    bridge = _killed_mid_stream(own_stack, tmp_path, script, killed, "--retry-for", "600",
                                "--cancel-grace", "600")
    bridge.wait_for_mark("sent")
    bridge.process.send_signal(signal.SIGINT)
    bridge.wait_for_stderr("cancelling the agent's prompt")
    bridge.process.send_signal(signal.SIGINT)  # stop waiting for the agent
    bridge.wait_for_stderr("still to reach the service; waiting for them (Ctrl-C stops waiting")
    bridge.process.send_signal(signal.SIGINT)
    finished = bridge.finish_unhung(timeout=30)

    assert finished.code == 130, finished.stderr
    assert re.search(r"SIGINT: stopped waiting for [1-9]\d* update\(s\) to reach the service",
                     finished.stderr), finished.stderr


def test_service_unreachable_at_start_fails_after_the_window(stack: Stack,
                                                             tmp_path: Path) -> None:
    # The message names the window the bridge kept to (no clock is read here: a loaded
    # machine takes its time to start a bridge).
    nowhere = f"127.0.0.1:{free_port()}"
    finished = run_bridge(stack, tmp_path, [], "--server", nowhere, "--retry-for", "1",
                          "--prompt", PROMPT, addresses=False)
    assert finished.code == 3
    assert finished.stdout == ""
    assert ("service unreachable for 1 s (--retry-for) while trying to create the session"
            in finished.stderr)
    assert "Start it with `make run`" in finished.stderr


def test_buffer_limit_while_the_service_is_away_fails_loudly(own_stack: Stack,
                                                             tmp_path: Path) -> None:
    updates = _burst("full-1", 40)
    killed = tmp_path / "killed"
    script = _paused_after_kill(updates[:1], [*steps(updates[1:]), {"wait_for_cancel": 30}],
                                killed)
    bridge = _killed_mid_stream(own_stack, tmp_path, script, killed,
                                "--max-buffered-updates", "10")
    finished = bridge.finish(timeout=30)

    _assert_gave_up(finished, "update buffer full (updates limit 10, --max-buffered-updates)")


def _lost_ids(proxy: LossyProxy) -> tuple[str, str]:
    """The session and turn ids of the answers the proxy threw away."""
    [created] = proxy.lost_answers("CreateSession")
    [started] = proxy.lost_answers("StartTurn")
    return (pb.CreateSessionResponse.FromString(created).session.id,
            pb.StartTurnResponse.FromString(started).turn.id)


def _assert_recorded_once(client: ShellExecClient, finished: Finished,
                          session_id: str, turn_id: str) -> None:
    result = finished.result()
    assert (result["session_id"], result["turn_id"]) == (session_id, turn_id)
    session = client.get_session(session_id)
    assert (session.state, session.current_turn_id) == ("idle", "")  # the turn was completed
    assert client.boot_state(session.task_id).session.id == session_id  # no later session
    assert_recorded(client, session_id, PROMPT, [say("Hello.")], "codex")


def test_lost_answers_to_create_session_and_start_turn_record_one_session_and_turn(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    with LossyProxy(stack.grpc_target, {"CreateSession": 1, "StartTurn": 1}) as proxy:
        finished = run_bridge(stack, tmp_path, steps([say("Hello.")]), "--server", proxy.target,
                              "--web-url", stack.rest_url, "--agent", "codex",
                              "--prompt", PROMPT, addresses=False)
        session_id, turn_id = _lost_ids(proxy)

    assert finished.code == 0, finished.stderr
    _assert_recorded_once(client, finished, session_id, turn_id)


def test_a_publish_cancelled_by_a_stopping_server_is_sent_again(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    # A server that stops cancels the calls that reach it as it stops (ADR 0144): a graceful
    # restart under a streaming agent ended 2 of 10 bridges with exit 3. The proxy answers the
    # first publish CANCELLED after the server stored it, the worse of the two cases.
    with LossyProxy(stack.grpc_target, {"PublishUpdate": 1},
                    lost_as=grpc.StatusCode.CANCELLED) as proxy:
        finished = run_bridge(stack, tmp_path, steps([say("Hello.")]), "--server", proxy.target,
                              "--web-url", stack.rest_url, "--agent", "codex",
                              "--prompt", PROMPT, addresses=False)
        [lost] = proxy.lost_answers("PublishUpdate")

    assert finished.code == 0, finished.stderr
    assert "1 already stored" in finished.stderr
    session_id = pb.PublishUpdateResponse.FromString(lost).message.session_id
    assert_recorded(client, session_id, PROMPT, [say("Hello.")], "codex")


def _without_request_id(request: bytes) -> bytes:
    message = pb.StartTurnRequest.FromString(request)
    message.ClearField("request_id")
    rewritten: bytes = message.SerializeToString()
    return rewritten


def test_turn_opened_by_a_lost_attempt_is_adopted_when_its_request_id_is_unknown(
        stack: Stack, client: ShellExecClient, tmp_path: Path) -> None:
    # The service does not see the turn's request id (as one that forgot it or predates
    # request ids): the retry meets the open turn, and the bridge adopts it.
    with LossyProxy(stack.grpc_target, {"CreateSession": 1, "StartTurn": 1},
                    rewrite={"StartTurn": _without_request_id}) as proxy:
        finished = run_bridge(stack, tmp_path, steps([say("Hello.")]), "--server", proxy.target,
                              "--web-url", stack.rest_url, "--agent", "codex",
                              "--prompt", PROMPT, addresses=False)
        session_id, turn_id = _lost_ids(proxy)

    assert finished.code == 0, finished.stderr
    assert f"adopting turn {turn_id}" in finished.stderr
    _assert_recorded_once(client, finished, session_id, turn_id)
