"""Secrets in output, through Envoy: every browser-facing route masks credential forms with
same-length placeholders, the stored text stays as the agent sent it (unless masking at rest
is on), the setting turns it off, and Normalize masks only on request.

The fake credentials are assembled from parts so that no scanner mistakes them for leaks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from shellexec.client import ShellExecClient
from shellexec.rules.limits import MAX_STORED_TEXT_BYTES

from support.acp import agent_text, codex_delta, codex_end, codex_start
from support.rest import unique
from support.stack import Stack

GITHUB = "ghp_" + "R2d2C3p0L1ghtS4b3rXw1ngY0d4H4nS0L0Ch"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
ANTHROPIC = "sk-ant-api03-" + "Zx81_bC4dE-fG7hI0jK3lM6nO9pQ2rS5tU8vW1xY4zA7bC0dE3fG6hI9jK2lM5nOAA"
SLACK = "xoxb-" + "2048675309-4815162342-q7Rt2Yp9Lm4Kx8Vz1Nb6Wc3S"
PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"

COMMAND = f"GH_TOKEN={GITHUB} gh pr list"
ENV_OUTPUT = (f"HOME=/home/dev\nAWS_ACCESS_KEY_ID={AWS_KEY_ID}\n"
              f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nDB_PASSWORD=hunter2 two\n")
CHAT = f"I found ANTHROPIC_KEY {ANTHROPIC} and {SLACK} in .env"
# What no browser-facing payload may contain: each secret, and its longest distinctive part.
SECRETS = (GITHUB[4:], AWS_SECRET, AWS_KEY_ID[4:], "hunter2", ANTHROPIC[13:], SLACK[5:],
           PEM_BODY)


def _leaks(payload: Any, secrets: tuple[str, ...] = SECRETS) -> list[str]:
    text = json.dumps(payload)
    return [secret for secret in secrets if secret in text]


def _stored_text(stack: Stack) -> str:
    """Everything the database holds as text: chunks, message columns, fold states."""
    texts = stack.chunk_texts()
    for column in ("content", "title", "command", "work_dir", "fold_state"):
        texts += [str(row[0]) for row in stack.sql(f"SELECT {column} FROM message")]
    return "\n".join(texts)


def _plant(stack: Stack) -> tuple[dict[str, Any], str, str]:
    """A session where an agent ran `env` with secrets in its command and output, printed a
    private key and repeated a key in chat; returns the session, task and shell message id."""
    task_id = unique("task")
    session = stack.api.new_session(task_id=task_id)
    stack.api.start_turn(session["id"])
    message_id = stack.api.play(session["id"], [
        codex_start("s1", COMMAND), codex_delta("s1", ENV_OUTPUT), codex_delta("s1", PEM),
        codex_end("s1", ENV_OUTPUT + PEM, 0)])
    stack.api.publish(session["id"], agent_text(CHAT))
    return session, task_id, message_id


def _sse_events(stack: Stack, session_id: str, count: int) -> list[dict[str, Any]]:
    """The first `count` message events (turn events carry no text)."""
    events: list[dict[str, Any]] = []
    feed = stack.api.watch(session_id, "?since_revision=0")
    for event in feed:
        if "message" in event:
            events.append(event)
        if len(events) == count:
            break
    feed.close()
    return events


def test_every_browser_route_masks_the_planted_secrets(stack: Stack) -> None:
    session, task_id, message_id = _plant(stack)

    shell_output = stack.api.shell_output(session["id"], message_id)
    messages = stack.api.messages(session["id"])
    boot = stack.api.call("GET", f"/api/v1/tasks/{task_id}/boot-state")
    events = _sse_events(stack, session["id"], 5)

    for payload in (shell_output, messages, boot, events):
        assert _leaks(payload) == []
    stdout = shell_output["output"]["stdout"]
    assert stdout.startswith("HOME=/home/dev\nAWS_ACCESS_KEY_ID=AKIA" + "*" * 16 + "\n")
    assert "-----BEGIN RSA PRIVATE KEY-----\n" + "*" * len(PEM_BODY) in stdout
    shell = messages[0]["metadata"]["normalized"]["shell_exec"]
    assert shell["command"] == "GH_TOKEN=" + "*" * len(GITHUB) + " " + "*" * 2 + " " + "*" * 2 \
        + " " + "*" * 4
    assert shell["output"]["stdout_bytes"] == len((ENV_OUTPUT + PEM).encode())
    assert len(stdout.encode()) == shell["output"]["stdout_bytes"]
    assert messages[1]["content"] == CHAT.replace(ANTHROPIC[7:], "*" * len(ANTHROPIC[7:])) \
        .replace(SLACK[5:], "*" * len(SLACK[5:]))
    # The stored text is what the agent sent.
    assert _leaks(_stored_text(stack)) == list(SECRETS)


def test_the_publish_answer_and_grpc_reads_are_masked_too(stack: Stack,
                                                          client: ShellExecClient) -> None:
    session = stack.api.new_session()
    answer = stack.api.publish(session["id"], codex_start("g1", COMMAND))
    assert _leaks(answer) == []
    client.publish(session["id"], codex_delta("g1", ENV_OUTPUT))
    page = client.list_messages(session["id"])
    output = client.shell_output(session["id"], page.messages[0].id)
    assert GITHUB[4:] not in str(page)
    assert AWS_SECRET not in output.output.stdout
    assert len(output.output.stdout.encode()) == len(ENV_OUTPUT.encode())
    stream = iter(client.watch(session["id"], since_revision=0, timeout=10))
    events = [next(stream) for _ in range(3)]  # the opening heartbeat, added, updated
    stream.close()
    assert [event.type for event in events[1:]] == ["session.message.added",
                                                   "session.message.updated"]
    assert all(GITHUB[4:] not in str(event) for event in events)
    assert events[2].message.content == "GH_TOKEN=" + "*" * len(GITHUB) + " ** ** ****"


def test_a_token_split_across_two_output_deltas_is_masked_before_and_after_it_joins(
        stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("d1", "git push"))
    first = stack.api.publish(session["id"], codex_delta("d1", f"using {GITHUB[:21]}"))
    message_id = first["message"]["id"]
    halfway = stack.api.shell_output(session["id"], message_id)["output"]["stdout"]
    assert halfway == "using ghp_" + "*" * 17
    stack.api.publish(session["id"], codex_delta("d1", f"{GITHUB[21:]} for origin\n"))

    joined = stack.api.shell_output(session["id"], message_id)["output"]["stdout"]
    assert joined == "using ghp_" + "*" * 36 + " for origin\n"
    assert _leaks(_sse_events(stack, session["id"], 3)) == []


def test_a_whole_command_and_a_finished_output_keep_their_end(stack: Stack) -> None:
    """A token prefix at the end of a text is masked while more may come. It was masked at
    the end of every text: `git checkout sk-new-ui` lost its branch, and so did the last
    line of a finished output."""
    session = stack.api.new_session()
    command = "git checkout sk-new-ui"
    stack.api.publish(session["id"], codex_start("w", command))
    running = stack.api.publish(session["id"], codex_delta("w", "pip install sk-learn-extra"))
    message_id = running["message"]["id"]
    assert running["message"]["content"] == command
    assert running["message"]["metadata"]["normalized"]["shell_exec"]["command"] == command
    halfway = stack.api.shell_output(session["id"], message_id)["output"]["stdout"]
    assert halfway == "pip install sk-***********"  # a running output may go on
    stack.api.publish(session["id"], codex_end("w", "pip install sk-learn-extra", 0))
    final = stack.api.shell_output(session["id"], message_id)["output"]["stdout"]
    assert final == "pip install sk-learn-extra"
    assert stack.api.shell_exec(session["id"], message_id)["command"] == command


def test_a_command_cut_at_the_bound_inside_a_token_keeps_the_token_masked(
        stack: Stack) -> None:
    """A command is stored to its first 256 KiB: one cut inside a token ended in its first
    characters, and a whole value's end was served unmasked."""
    session = stack.api.new_session()
    head = "echo " + "a" * (MAX_STORED_TEXT_BYTES - 5 - 12) + " "
    stack.api.publish(session["id"], codex_start("long", head + GITHUB + " done"))
    command = stack.api.messages(session["id"])[0]["metadata"]["normalized"]["shell_exec"][
        "command"]
    assert command == head + "ghp_" + "*" * 7  # 11 bytes of the token were kept
    assert GITHUB[4:11] not in command[len(head):]


def test_only_a_stream_cut_at_the_bound_has_its_head_masked_and_only_a_token_s_length(
        stack: Stack) -> None:
    """A cut stream may begin inside a token whose start was cut off. But stdout lost its
    first word because stderr was cut, and a cut run of 300,000 `y` was served as 262,144
    `*`, where the spec promises the newest text."""
    session = stack.api.new_session()
    stack.api.publish(session["id"], codex_start("cut", "yes"))
    final = codex_end("cut", "Build finished OK\n", 0)
    final["rawOutput"] = {"stdout": "Build finished OK\n", "stderr": "y" * 300_000,
                          "exit_code": 0}
    message_id = stack.api.publish(session["id"], final)["message"]["id"]
    output = stack.api.shell_output(session["id"], message_id)["output"]
    assert output["truncated"] is True
    assert output["stdout"] == "Build finished OK\n"
    assert output["stderr"] == "*" * 8192 + "y" * (262_144 - 8192)


def test_a_key_right_after_a_colour_code_the_cut_began_inside_is_masked(stack: Stack) -> None:
    """The newest 262,144 bytes of `... ESC [1;31m AKIA... ESC [0m ...` began `[1;31mAKIA...`
    (the cut fell after the ESC): the key followed a letter, so no pattern saw a word, and it
    was served in clear."""
    kept = f"[1;31m{AWS_KEY_ID}\x1b[0m\n" + "ok\n" * 87_000
    kept += "y" * (MAX_STORED_TEXT_BYTES - len(kept))
    session = stack.api.new_session()
    message_id = stack.api.play(session["id"], [
        codex_start("esc", "make"), codex_delta("esc", "lines\n" * 100 + "\x1b" + kept)])
    output = stack.api.shell_output(session["id"], message_id)["output"]
    assert output["truncated"] is True
    assert output["stdout"].startswith("[1;31mAKIA****************\x1b[0m\nok\n")
    assert len(output["stdout"]) == len(kept)


def test_a_key_split_across_two_chat_chunks_is_masked_in_the_list_and_the_feed(
        stack: Stack) -> None:
    session = stack.api.new_session()
    stack.api.start_turn(session["id"])
    cut = len(ANTHROPIC) // 2
    first = stack.api.publish(session["id"], agent_text(f"Your key is {ANTHROPIC[:cut]}"))
    second = stack.api.publish(session["id"], agent_text(f"{ANTHROPIC[cut:]}, rotate it."))

    masked = "Your key is sk-ant-" + "*" * (len(ANTHROPIC) - 7) + ", rotate it."
    assert stack.api.messages(session["id"])[0]["content"] == masked
    assert second["message"]["content"] == masked
    assert ANTHROPIC[13:cut] not in first["message"]["content"]
    events = _sse_events(stack, session["id"], 2)
    assert [event["message"]["content"] for event in events][-1] == masked
    assert _leaks(events, (ANTHROPIC[13:cut], ANTHROPIC[cut:])) == []


def test_a_url_password_streamed_before_its_at_sign_is_masked_in_the_feed_and_output(
        stack: Stack) -> None:
    """The `@` that makes a URL's password one arrived in the next chunk: until then the
    password was served in clear, in the chat reply and in a running command's output."""
    session = stack.api.new_session()
    stack.api.start_turn(session["id"])
    first = stack.api.publish(session["id"], agent_text("Connect with postgres://admin:Sup3rS3"))
    assert first["message"]["content"] == "Connect with postgres://admin:*******"
    stack.api.publish(session["id"], agent_text("cretPw@db.internal:5432/app"))
    assert stack.api.messages(session["id"])[0]["content"] == (
        "Connect with postgres://admin:" + "*" * 13 + "@db.internal:5432/app")
    stack.api.publish(session["id"], codex_start("url", "psql"))
    message_id = stack.api.publish(
        session["id"], codex_delta("url", "dsn=postgres://admin:Sup3rS3"))["message"]["id"]
    output = stack.api.shell_output(session["id"], message_id)["output"]["stdout"]
    assert output == "dsn=postgres://admin:*******"
    assert "Sup3r" not in json.dumps(_sse_events(stack, session["id"], 4))


def test_a_value_before_a_long_run_of_blanks_is_masked_in_the_answer_and_the_list(
        stack: Stack) -> None:
    # Its value used to be ended lazily: every read of this 60 KB message held the server
    # for about nine seconds, other callers' reads too (ADR 0145).
    text = "TOKEN=s3cr3t" + " \t" * 30_000 + "x"
    masked = "TOKEN=******" + " \t" * 30_000 + "*"
    session = stack.api.new_session()
    stack.api.start_turn(session["id"])
    answer = stack.api.publish(session["id"], agent_text(text))
    assert answer["message"]["content"] == masked
    assert stack.api.messages(session["id"])[0]["content"] == masked


@pytest.mark.slow
def test_with_masking_off_the_routes_serve_the_text_as_sent(
        stack_with: Callable[..., Stack]) -> None:
    plain = stack_with(SHELLEXEC_MASK_SECRETS="off")
    session, task_id, message_id = _plant(plain)
    assert plain.api.shell_output(session["id"], message_id)["output"]["stdout"] \
        == ENV_OUTPUT + PEM
    boot = plain.api.call("GET", f"/api/v1/tasks/{task_id}/boot-state")
    assert _leaks(boot) == [GITHUB[4:], ANTHROPIC[13:], SLACK[5:]]


@pytest.mark.slow
def test_masking_at_rest_stores_no_secret_and_keeps_the_byte_counts(
        stack_with: Callable[..., Stack]) -> None:
    at_rest = stack_with(SHELLEXEC_MASK_AT_REST="on", SHELLEXEC_MASK_SECRETS="off")
    session, _, message_id = _plant(at_rest)
    at_rest.api.publish(session["id"], codex_start("s2", "git push"))
    at_rest.api.publish(session["id"], codex_delta("s2", f"using {GITHUB[:21]}"))
    at_rest.api.publish(session["id"], codex_delta("s2", f"{GITHUB[21:]} for origin\n"))
    # Long repetitive output is packed (ADR 0150): masked before it is.
    at_rest.api.publish(session["id"], codex_delta(
        "s2", f"remote: token {GITHUB} accepted\n" + "remote: Counting objects\n" * 200))
    assert at_rest.packed_chunks() > 0
    cut = len(ANTHROPIC) // 2
    at_rest.api.publish(session["id"], agent_text(f" again {ANTHROPIC[:cut]}"))
    at_rest.api.publish(session["id"], agent_text(f"{ANTHROPIC[cut:]}."))

    assert _leaks(_stored_text(at_rest), (*SECRETS, GITHUB[21:], ANTHROPIC[cut:])) == []
    shell_output = at_rest.api.shell_output(session["id"], message_id)
    assert len(shell_output["output"]["stdout"].encode()) == len((ENV_OUTPUT + PEM).encode())
    shell = at_rest.api.messages(session["id"])[0]["metadata"]["normalized"]["shell_exec"]
    assert shell["output"]["stdout_bytes"] == len((ENV_OUTPUT + PEM).encode())
    assert shell["command"].startswith("GH_TOKEN=****")


@pytest.mark.slow
def test_masking_at_rest_masks_the_rest_of_a_secret_begun_more_than_512_bytes_back(
        stack_with: Callable[..., Stack]) -> None:
    """A delta was masked in the context of the last 512 bytes of its stream only: the rest
    of a longer JWT was stored in clear, in output and in a chat message."""
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJ" + "c3ViIjoiMTIzNDU2Nzg5MCJ9" * 36 + ".SflKxwRJSMeKKF2QT4fw"
    at_rest = stack_with(SHELLEXEC_MASK_AT_REST="on", SHELLEXEC_MASK_SECRETS="off")
    session = at_rest.api.new_session()
    at_rest.api.start_turn(session["id"])
    at_rest.api.play(session["id"], [
        codex_start("j1", "curl -v api"),
        codex_delta("j1", "ls\n" * 300 + "Authorization: Bearer " + jwt[:700]),
        codex_delta("j1", jwt[700:] + "\nok\n")])
    at_rest.api.publish(session["id"], agent_text("Use Bearer " + jwt[:700]))
    at_rest.api.publish(session["id"], agent_text(jwt[700:] + " for the call."))

    stored = _stored_text(at_rest)
    assert _leaks(stored, (jwt[700:720], jwt[-20:])) == []
    assert "\nok\n" in stored
    assert " for the call." in stored


def _goose_live(call_id: str, stream: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "_meta": {"toolNotification": {"type": "live_output", "params": {
                "sequence": 1, "truncated": False,
                "chunks": [{"stream": stream, "output": text}]}}}}


@pytest.mark.slow
def test_masking_at_rest_masks_a_token_split_across_goose_s_stderr_chunks(
        stack_with: Callable[..., Stack]) -> None:
    """Goose's live chunks were masked in the context of stdout's end whatever their stream:
    the rest of a token split across two stderr chunks was stored in clear."""
    at_rest = stack_with(SHELLEXEC_MASK_AT_REST="on", SHELLEXEC_MASK_SECRETS="off")
    session = at_rest.api.new_session(agent="goose")
    message_id = at_rest.api.play(session["id"], [
        {"sessionUpdate": "tool_call", "toolCallId": "g1", "status": "pending",
         "title": "shell · gh auth status", "rawInput": {"command": "gh auth status"},
         "_meta": {"goose": {"toolCall": {"toolName": "shell", "extensionName": "developer"}}}},
        _goose_live("g1", "stdout", "checking\n"),
        _goose_live("g1", "stderr", "warn token " + GITHUB[:15]),
        _goose_live("g1", "stderr", GITHUB[15:] + " expired\n"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "g1", "status": "completed"}])

    both = _goose_live("g2", "stderr", "again " + GITHUB[:20])  # two chunks in one notice
    both["_meta"]["toolNotification"]["params"]["chunks"].append(
        {"stream": "stderr", "output": GITHUB[20:] + "\n"})
    at_rest.api.play(session["id"], [
        {"sessionUpdate": "tool_call", "toolCallId": "g2", "status": "pending",
         "title": "shell · env", "rawInput": {"command": "env"}},
        both, {"sessionUpdate": "tool_call_update", "toolCallId": "g2", "status": "completed"}])

    assert _leaks(_stored_text(at_rest), (GITHUB[15:], GITHUB[20:])) == []
    output = at_rest.api.shell_output(session["id"], message_id)["output"]
    assert output["stderr"] == "warn token ghp_" + "*" * (len(GITHUB) - 4) + " expired\n"
    assert output["stdout"] == "checking\n"


NORMALIZE_UPDATES = [codex_start("n1", COMMAND), codex_delta("n1", ENV_OUTPUT),
                     codex_end("n1", ENV_OUTPUT, 0)]


def test_normalize_answers_the_text_as_sent_unless_asked_to_mask(stack: Stack) -> None:
    plain = stack.api.call("POST", "/api/v1/shell-exec:normalize",
                           {"updates": NORMALIZE_UPDATES, "agent": "codex"})
    assert plain["output"]["stdout"] == ENV_OUTPUT
    assert plain["shell_exec"]["command"] == COMMAND

    masked = stack.api.call("POST", "/api/v1/shell-exec:normalize",
                            {"updates": NORMALIZE_UPDATES, "agent": "codex",
                             "mask_secrets": True})
    assert _leaks(masked) == []
    assert masked["shell_exec"]["output"] == plain["shell_exec"]["output"]
    assert len(masked["output"]["stdout"].encode()) == len(ENV_OUTPUT.encode())


def test_normalize_over_grpc_masks_on_request(client: ShellExecClient) -> None:
    assert client.normalize(NORMALIZE_UPDATES).output.stdout == ENV_OUTPUT
    masked = client.normalize(NORMALIZE_UPDATES, mask_secrets=True)
    assert AWS_SECRET not in masked.output.stdout
    assert GITHUB not in masked.shell_exec.command
