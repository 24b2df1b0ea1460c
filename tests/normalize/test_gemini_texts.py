"""Gemini CLI's own texts: every form of its place text (`[in dir]` or `[current working
directory ...]`, a description, `[background]`), in `content` and in an older release's title,
and its fixed result texts for a command without output (a signal, an error, the background,
its inactivity timeout). Only the whole text counts, and only for a Gemini call."""

from __future__ import annotations

from typing import Any

import pytest

from shellexec.normalize import ShellOutput, fold_all, shell_record
from shellexec.normalize.arguments import gemini_place, is_gemini_title

Update = dict[str, Any]


def _text(text: str) -> Update:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _start(title: str, place: str | None = None) -> Update:
    return {"sessionUpdate": "tool_call", "toolCallId": "run_shell_command-1",
            "status": "in_progress", "title": title, "kind": "execute",
            "content": [] if place is None else [_text(place)], "locations": []}


def _final(text: str | None, status: str = "completed") -> Update:
    return {"sessionUpdate": "tool_call_update", "toolCallId": "run_shell_command-1",
            "status": status, "content": [] if text is None else [_text(text)]}


@pytest.mark.parametrize(("place", "work_dir", "description"), [
    ("[in src]", "src", None),
    ("[in src] (List files)", "src", "List files"),
    ("[in src] [background]", "src", None),
    ("[in src/app] (Start the server) [background]", "src/app", "Start the server"),
    ("[current working directory /repo] [background]", "/repo", None),
    ("[current working directory /repo] (Start dev server) [background]", "/repo",
     "Start dev server"),
    ("[in a b] (a (nested) [in x] description)", "a b", "a (nested) [in x] description"),
    ("[in .] (ends in [background])", ".", "ends in [background]"),
    ("  [in src] (List files)\n", "src", "List files"),
])
@pytest.mark.parametrize("hint", [None, "gemini"])
def test_every_place_form_names_the_directory_and_is_not_output(
        place: str, work_dir: str, description: str | None, hint: str | None) -> None:
    state = fold_all([_start("ls", place), _final(None)], agent=hint)
    record = shell_record(state)
    assert (record.is_shell, record.command, record.work_dir) == (True, "ls", work_dir)
    assert state.description == description
    assert (record.output.stdout, record.status, record.result) == (None, "complete", "unknown")


@pytest.mark.parametrize("text", [
    "[in src] and more", "[in ]", "[in src", "[in src] (List files", "[in src]\n(List files)",
    "[in src] (a)[background]", "[in src] [background] (a)", "x [in src]", "[on src]",
])
def test_other_texts_are_no_place(text: str) -> None:
    assert gemini_place(text) is None


@pytest.mark.parametrize(("title", "command", "work_dir", "description"), [
    ("ls [in src] (List files)", "ls", "src", "List files"),
    ("npm run dev [in web] [background]", "npm run dev", "web", None),
    ("npm run dev [current working directory /r] (Serve) [background]", "npm run dev", "/r",
     "Serve"),
    # The command holds a mark: the last mark after which the rest is a whole place wins.
    ('grep -rn " [in " docs [in src] (Find it)', 'grep -rn " [in " docs', "src", "Find it"),
    # The last mark is inside the description: an earlier mark makes the rest whole.
    ("ls [in src] (look [in here])", "ls", "src", "look [in here]"),
    ("echo '[in a]' [current working directory /r]", "echo '[in a]'", "/r", None),
    ("printf 'a\\n'\necho b [in src]", "printf 'a\\n'\necho b", "src", None),
])
def test_an_older_title_splits_at_the_last_mark_that_leaves_a_whole_place(
        title: str, command: str, work_dir: str, description: str | None) -> None:
    state = fold_all([_start(title), _final("out\n")])
    assert (state.command, state.work_dir, state.description) == (command, work_dir,
                                                                  description)
    assert shell_record(state).output.stdout == "out\n"


@pytest.mark.parametrize(("title", "place", "work_dir", "description"), [
    ("echo status [in progress]", "[current working directory /repo] (Print a marker)",
     "/repo", "Print a marker"),
    ("./run.sh [in a] (b)", "[in src]", "src", None),
])
@pytest.mark.parametrize("hint", [None, "gemini"])
def test_a_current_title_is_the_whole_command_even_one_that_ends_like_a_place(
        title: str, place: str, work_dir: str, description: str | None,
        hint: str | None) -> None:
    """Since v0.42 the title is the command as the model gave it, and the place is in
    `content`: a title is read in the older form only when `content` has no place."""
    state = fold_all([_start(title, place), _final(None)], agent=hint)
    assert (state.command, state.work_dir, state.description) == (title, work_dir,
                                                                  description)


@pytest.mark.parametrize("title", [
    "[in src] (List files)", "ls [in src] trailing", "ls [in src]\nmore", "ls [in ] (x)",
])
def test_a_title_without_a_whole_place_after_a_command_is_no_older_gemini_title(
        title: str) -> None:
    assert not is_gemini_title(title)


@pytest.mark.parametrize("title", [
    "x" + " [in " * 100_000,
    "x" + " [in a]" * 50_000 + " trailing",
    "x" + " [in a] (" * 40_000 + ")",
    "x" + " [current working directory ]" * 20_000,
])
def test_a_hostile_title_is_read_in_one_pass(title: str) -> None:
    # Trying each mark against the rest with a pattern costs the square of the title's
    # length: minutes at these sizes.
    state = fold_all([_start(title), _final(None)])
    assert state.stdout is None


@pytest.mark.parametrize(("text", "status", "result"), [
    ("Command terminated by signal: SIGKILL", "failed", "failure"),
    ("Command terminated by signal: 9", "failed", "failure"),
    ("Command failed: spawn /bin/bash ENOENT", "failed", "failure"),
    ("Command failed: spawn /bin/bash ENOENT\n", "failed", "failure"),
    ("Command moved to background (PID: 4242). Output hidden. Press Ctrl+B to view.",
     "complete", "unknown"),
    ("Background process started with PID 4242.", "complete", "unknown"),
])
@pytest.mark.parametrize("hint", [None, "gemini"])
def test_a_fixed_result_text_is_how_the_command_ended_not_its_output(
        text: str, status: str, result: str, hint: str | None) -> None:
    record = shell_record(fold_all([_start("./run", "[in .] (Run)"), _final(text)], agent=hint))
    assert (record.status, record.result) == (status, result)
    assert record.output == ShellOutput(exit_code=None, stdout=None, stderr=None,
                                        truncated=False)


def test_a_failure_text_on_a_failed_update_is_a_failure_without_output() -> None:
    record = shell_record(fold_all([_start("./run", "[in .]"),
                                    _final("Command failed: spawn sh EACCES", "failed")]))
    assert (record.status, record.output.stdout, record.output.stderr) == ("failed", None, None)


@pytest.mark.parametrize("text", [
    "Command terminated by signal: SIGKILL",
    "Command failed: spawn /bin/bash ENOENT",
    "Command moved to background (PID: 4242). Output hidden. Press Ctrl+B to view.",
    "Background process started with PID 4242.",
    "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes "
    "without output.",
])
def test_the_same_words_among_output_or_from_another_agent_are_output(text: str) -> None:
    among = fold_all([_start("./run", "[in .]"), _final(f"starting\n{text}")])
    assert (shell_record(among).output.stdout, among.status) == (f"starting\n{text}",
                                                                "complete")
    claude = fold_all([{"sessionUpdate": "tool_call", "toolCallId": "c", "kind": "execute",
                        "title": "./run", "rawInput": {"command": "./run"}},
                       {"sessionUpdate": "tool_call_update", "toolCallId": "c",
                        "status": "completed", "rawOutput": text}])
    assert (shell_record(claude).output.stdout, claude.status) == (text, "complete")


@pytest.mark.parametrize(("text", "stdout"), [
    ("Command was automatically cancelled because it exceeded the timeout of 5.0 minutes "
     "without output.", None),
    ("Command was automatically cancelled because it exceeded the timeout of 0.5 minutes "
     "without output.\n\nOutput before cancellation:\nwaiting...\n", "waiting...\n"),
    ("Command cancelled by user.\n\nOutput before cancellation:\nok 1\n", "ok 1\n"),
    ("Command cancelled by user.", None),
])
def test_the_inactivity_timeout_cancels_as_the_user_does(text: str,
                                                         stdout: str | None) -> None:
    record = shell_record(fold_all([_start("npm test", "[in .] (Test)"), _final(text)]))
    assert (record.status, record.result, record.output.stdout) == ("cancelled", "unknown",
                                                                    stdout)


def test_a_cancel_sentence_that_starts_more_output_is_output() -> None:
    text = "Command cancelled by user.\nnext line the command printed\n"
    place = "[current working directory /r]"
    record = shell_record(fold_all([_start("./run", place), _final(text)]))
    assert (record.status, record.output.stdout) == ("complete", text)


@pytest.mark.parametrize("output", ["[in progress]", "[in src] (List files)\n",
                                    "[current working directory /r]"])
def test_a_result_that_reads_like_a_place_is_output(output: str) -> None:
    # Gemini sends its place text with the call, never with the result.
    state = fold_all([_start("echo", "[in .] (Say it)"), _final(output)])
    assert (state.work_dir, shell_record(state).output.stdout) == (".", output)
