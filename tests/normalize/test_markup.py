"""Auggie's `<return-code>`, `<output>` and `<stderr>` markup."""

from __future__ import annotations

from shellexec.normalize.markup import Markup, has_markup, parse_markup

HEAD = "Here are the results from executing the command.\n"


def test_finished_command_gives_output_and_return_code() -> None:
    text = HEAD + "<return-code>\n2\n</return-code>\n<output>\nboom\n\n</output>"
    assert parse_markup(text) == Markup(stdout="boom\n", stderr=None, exit_code=2)


def test_killed_process_return_code_minus_one_is_known() -> None:
    text = "<return-code>\n-1\n</return-code>\n<output>\n\n</output>"
    assert parse_markup(text).exit_code == -1


def test_still_running_form_has_output_so_far_and_no_return_code() -> None:
    text = ("Command may still be running. You can use read-process to get more output.\n"
            "Terminal ID 3\nOutput so far:\n<output>\nserving\n\n</output>")
    assert parse_markup(text) == Markup(stdout="serving\n", stderr=None, exit_code=None)


def test_read_process_form_with_output_before_return_code() -> None:
    text = ("Here is the output from terminal 3 (status: completed):\n<output>\nhi\n</output>\n"
            "<return-code>\n0\n</return-code>\n")
    assert parse_markup(text) == Markup(stdout="hi", stderr=None, exit_code=0)


def test_stderr_section_is_explicit_stderr() -> None:
    text = "<return-code>\n1\n</return-code>\n<output>\nout\n</output>\n<stderr>\nerr\n</stderr>"
    assert parse_markup(text) == Markup(stdout="out", stderr="err", exit_code=1)


def test_unclosed_output_keeps_everything_after_the_tag() -> None:
    text = "<return-code>\n0\n</return-code>\n<output>\npartial\nlines"
    assert parse_markup(text) == Markup(stdout="partial\nlines", stderr=None, exit_code=0)


def test_markup_without_sections_is_kept_whole_as_combined_text() -> None:
    text = "<return-code>\n0\n</return-code>\nno output section"
    assert parse_markup(text) == Markup(stdout=text, stderr=None, exit_code=0)


def test_malformed_return_code_is_unknown() -> None:
    for code in ("zero", "", "1.5", "<b>1</b>"):
        text = f"<return-code>\n{code}\n</return-code>\n<output>\nx\n</output>"
        assert parse_markup(text).exit_code is None


def test_output_containing_a_closing_tag_is_kept_up_to_the_last_one() -> None:
    text = "<output>\nprint('</output>')\n</output>"
    assert parse_markup(text).stdout == "print('</output>')"


def test_has_markup_needs_a_tag_on_its_own_line_or_an_inline_return_code() -> None:
    assert has_markup("x\n<output>\ny\n</output>")
    assert not has_markup("an <output> tag inside a sentence")
    # The specification's own form: the code written inline, at the start of a line.
    assert has_markup(HEAD + "<return-code>0</return-code>\n<output>a.txt\n</output>")
    assert has_markup("<return-code> -1 </return-code>")
    for plain in ("see <return-code>0</return-code> here", "<return-code>x</return-code>",
                  "<output>inline</output>"):
        assert not has_markup(plain), plain


def test_an_inline_return_code_and_sections_are_read() -> None:
    """Only a tag alone on its line made a text markup: the specification's
    `<return-code>0</return-code>` left the whole text, tags included, as output with no
    exit code."""
    text = HEAD + "<return-code>0</return-code>\n<output>a.txt\n</output>"
    assert parse_markup(text) == Markup(stdout="a.txt", stderr=None, exit_code=0)
    text = "<return-code>1</return-code>\n<stderr>err</stderr>"
    assert parse_markup(text) == Markup(stdout=None, stderr="err", exit_code=1)


def test_a_return_code_the_command_printed_is_not_its_exit_code() -> None:
    """The still-running form has no return code, whatever the output so far holds; the
    read-process form's comes after the output, whatever the output holds."""
    printed = "step 1\n<return-code>\n0\n</return-code>\n"
    still_running = ("Command may still be running. You can use read-process to get more "
                     f"output.\nTerminal ID 3\nOutput so far:\n<output>\n{printed}\n</output>")
    assert parse_markup(still_running) == Markup(stdout=printed, stderr=None, exit_code=None)
    read_process = ("Here is the output from terminal 3 (status: completed):\n<output>\n"
                    "<return-code>7</return-code>\n</output>\n<return-code>\n0\n</return-code>\n")
    assert parse_markup(read_process).exit_code == 0
    finished = HEAD + f"<return-code>\n3\n</return-code>\n<output>\n{printed}\n</output>"
    assert parse_markup(finished) == Markup(stdout=printed, stderr=None, exit_code=3)


def test_a_stderr_section_the_command_printed_stays_in_its_output() -> None:
    """Auggie interleaves both streams in `<output>`: a `<stderr>` inside it is text."""
    logged = "<log>\n<stderr>\nwarning: x\n</stderr>\n</log>\n"
    text = HEAD + f"<return-code>\n0\n</return-code>\n<output>\n{logged}\n</output>"
    assert parse_markup(text) == Markup(stdout=logged, stderr=None, exit_code=0)
