"""Masking well-known credential forms in text a browser is served (pure, no I/O).

Each pattern names the span that is secret (a token's body, an assignment's value, a private
key block's body) and the span is replaced by `*`, one per UTF-8 byte of what it hides, and
whitespace is kept: a masked text has exactly the bytes of the original, so the byte counts
of a summary stay true for what is shown. docs/security.md lists the patterns.

A pattern runs only when a cheap literal hint of it occurs in the text, so text without any
hint (most output) costs a few substring scans. Token bodies also accept `*`: a text joined
from a stored part already masked (the first half of a token split across two deltas) and
the rest is still recognised as one token. Two edge rules cover text cut by a bound or a
delta: a token prefix at the very end of a text (its rest has not arrived yet) is masked,
and when the head of a text was cut off, its leading run of token characters (the tail of
whatever was cut) and a private key body before an orphan END line are masked.

Terminal output carries escape sequences the page does not show: `grep --color` wraps a
match in colour codes, which split a credential for the patterns while the page joins it
back. So text holding any escape sequence or control character is searched twice: as it is
stored, and as it is shown (`shown`); a secret found in the shown text is masked in the
stored one, and the escape sequences within it are left as they are (ADR 0126).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from shellexec.projection.shown import Span, outside, shown_text

MASK_CHAR = "*"

# Characters a token or key body may hold (base64, base64url, the separators tokens use).
_TOKEN_CHARS = r"A-Za-z0-9_\-"
# An assigned name ending with one of these (any case) holds a secret.
SECRET_NAME_ENDINGS = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "SECRET_KEY",
                       "SECRET_ACCESS_KEY", "TOKEN", "API_KEY", "APIKEY", "PRIVATE_KEY",
                       "ACCESS_KEY")
# The whole name, matched greedily from its first character (linear time); whether it ends
# with a secret name ending is checked on the match. A reply in Markdown may escape its
# underscores (`AWS\_SECRET\_ACCESS\_KEY=`), which the page then shows as `_`.
_NAME = r"(?P<name>(?:[A-Za-z0-9_]|\\_)+)"
_NAME_HINTS = ("pass", "secret", "token", "api_key", "apikey", "private_key", "access_key",
               "api\\_key", "private\\_key", "access\\_key")


@dataclass(frozen=True, slots=True)
class SecretPattern:
    """One documented credential form: `regex`'s group `secret` is what gets masked.

    `hints` are literals every match contains (lower case when `ignore_case_hints`): the
    regex runs only over the lines holding one, or over the whole text when `multiline`.
    """

    name: str
    hints: tuple[str, ...]
    regex: re.Pattern[str]
    ignore_case_hints: bool = False
    multiline: bool = False
    secret_name: bool = False
    """The match's group `name` must end with one of `SECRET_NAME_ENDINGS`."""

    def secret_spans(self, text: str, start: int, end: int) -> Iterator[Span]:
        for match in self.regex.finditer(text, start, end):
            if not self.secret_name or _unescaped(match["name"]).upper().endswith(
                    SECRET_NAME_ENDINGS):
                yield match.span("secret")


def _unescaped(name: str) -> str:
    return name.replace("\\_", "_")


def _pattern(name: str, hints: Iterable[str], regex: str, *, flags: int = 0,
             ignore_case_hints: bool = False, multiline: bool = False,
             secret_name: bool = False) -> SecretPattern:
    return SecretPattern(name, tuple(hints), re.compile(regex, flags), ignore_case_hints,
                         multiline, secret_name)


PATTERNS: tuple[SecretPattern, ...] = (
    _pattern("aws-access-key-id", ("AKIA", "ASIA"),
             r"\b(?:AKIA|ASIA)(?P<secret>[A-Z0-9*]{16})(?![A-Za-z0-9])"),
    _pattern("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
             r"\bgh[pousr]_(?P<secret>[A-Za-z0-9*]{36,255})"),
    _pattern("github-fine-grained-token", ("github_pat_",),
             r"\bgithub_pat_(?P<secret>[A-Za-z0-9_*]{22,255})"),
    _pattern("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-"),
             rf"\bgl(?:pat|dt|rt|ptt|soat)-(?P<secret>[{_TOKEN_CHARS}*]{{20,}})"),
    _pattern("anthropic-key", ("sk-ant-",),
             rf"\bsk-ant-(?P<secret>[{_TOKEN_CHARS}*]{{20,}})"),
    _pattern("openai-key", ("sk-",),
             rf"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?(?P<secret>[{_TOKEN_CHARS}*]{{20,}})"),
    _pattern("slack-token", ("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"),
             r"\bxox[abprs]-(?P<secret>[A-Za-z0-9\-*]{10,})"),
    # From the start of a run of token characters, or after one `-` or `*` there
    # (`${JWT:-eyJ...}`): a body reads the whole run before it finds no `.eyJ`, so each
    # `-eyJ` of a long run of them began a scan of its rest.
    _pattern("jwt", ("eyJ",),
             rf"eyJ(?<![A-Za-z0-9_]eyJ)(?<![{_TOKEN_CHARS}*][\-*]eyJ)(?P<secret>[{_TOKEN_CHARS}*]{{8,}}\.eyJ[{_TOKEN_CHARS}*]{{8,}}"
             rf"\.[{_TOKEN_CHARS}*]*)"),
    _pattern("private-key-block", ("PRIVATE KEY",),
             r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
             r"(?P<secret>[\s\S]*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
             multiline=True),
    _pattern("bearer-token", ("bearer",),
             r"\b[Bb]earer[ \t]+(?P<secret>[A-Za-z0-9_\-.~+/*]{16,}=*)",
             ignore_case_hints=True),
    # Found from its `://`, not from the scheme's first letter: a scheme matched from every
    # word start in a long run of `a.a.a.` cost a scan of the run each, so one 64 KB line
    # held the interpreter for seconds on every read (ADR 0141).
    _pattern("url-password", ("://",),
             r"(?<=[A-Za-z0-9+.\-])://[^\s/:@]+:(?P<secret>[^\s/@]+)@"),
    # An env-style line (optionally after a `$ ` prompt or `export`): the value to the end
    # of the line; elsewhere (`docker run -e X=v`, `X=v cmd`), a quoted or unbroken value.
    # The value runs to its last character that is not a blank (a CRLF line's `\r` ends it
    # too). The blanks after `=` are taken whole (possessive), and the value is not ended
    # lazily: either way, each blank of a long run read the blanks after it again.
    _pattern("env-assignment-line",
             _NAME_HINTS,
             rf"^[ \t]*(?:[$#>][ \t]+)?(?:export[ \t]+)?{_NAME}[ \t]*=[ \t]*+"
             r"(?P<secret>(?:[^\r\n]*[^ \t\r\n])?)[ \t]*\r?$",
             flags=re.MULTILINE, ignore_case_hints=True, secret_name=True),
    _pattern("env-assignment",
             _NAME_HINTS,
             rf"(?<![A-Za-z0-9_]){_NAME}=(?P<secret>\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"']\S*)",
             ignore_case_hints=True, secret_name=True),
)

# A token whose rest has not arrived yet: its known prefix and what came of it so far.
_PARTIAL_TAIL = re.compile(
    r"(?<![A-Za-z0-9_])(?:AKIA|ASIA|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|soat)-"
    r"|sk-(?:ant-|proj-|svcacct-|admin-)?|xox[abprs]-|eyJ|[Bb]earer[ \t]+)"
    rf"(?P<secret>[{_TOKEN_CHARS}.*]*)\Z")
# A URL's password whose `@` has not arrived yet (`postgres://admin:Sup3r` of a streamed
# reply): masked until it does. One of digits only is a port (`http://localhost:8080`), which a
# text may well end with.
_PARTIAL_URL_PASSWORD = re.compile(
    r"(?<=[A-Za-z0-9+.\-])://[^\s/:@]+:(?P<secret>(?=[^\s/@]*[^\s/@0-9])[^\s/@]+)\Z")
_TAIL_WINDOW = 512
_LEADING_RUN = re.compile(rf"\A[{_TOKEN_CHARS}+/=.*]+")
# The most of a leading run masked: what is left of a token whose start was cut off is shorter
# than the token (GitHub's are at most 255 characters, JWTs rarely reach a few KiB), and a
# 256 KiB run of `y` was served as 256 KiB of `*`. The bridge keeps so many bytes more than a
# stream's bound when it cuts waiting output, so that such a rest never reaches what is kept.
LONGEST_CUT_TOKEN = 8192
# What a cut inside a CSI sequence may have left of it (`[1;31m` after its ESC, `;31m`,
# `33m`, `m`): `\x1b[1;31mAKIA...` drawn red, then cut after the ESC, began `[1;31mAKIA...`,
# and a key or a `Bearer` after `m` is no word of its own to the patterns. The patterns also
# search the text after such a head, as if it began there (at worst a first letter taken for
# one: more is masked, never less).
_CUT_CSI_REST = re.compile(r"\A\[?[0-?]*[ -/]*[@-~]")
_PARTIAL_END = re.compile(r"(?m)^(?:-{1,5}|-----EN?|-----END[A-Z0-9 ]*-{0,4})\Z")
_PARTIAL_END_REACH = 128
_ORPHAN_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

# A short text (a command, a title) is first checked for any hint in one search.
_SHORT_TEXT = 4096
# Every pattern's hints, lower case, contains one of these (a test keeps them in step).
SHORT_HINTS = ("akia", "asia", "gh", "github", "gl", "sk-", "xox", "eyj", "private", "bearer", "://",
               "pass", "secret", "token", "api", "access_key", "access\\_key")


# Hinted lines this dense (one per so many characters) make the whole text one stretch: a
# regex scans a character in tens of nanoseconds, and finding a hinted line takes microseconds.
_DENSE_HINTS = 64


def _line_windows(text: str, haystack: str, hints: tuple[str, ...]) -> list[Span]:
    """The stretches of whole lines of `text` on which `haystack` (the text or its lower case)
    holds a hint. Neighbouring hinted lines make one stretch: no pattern but a `multiline`
    one matches across a line end, so a stretch finds what its lines would one by one, and
    calling a regex once per line of a long listing of assignments cost more than its search."""
    dense = len(text) // _DENSE_HINTS
    starts: set[int] = set()
    for hint in hints:
        found = haystack.find(hint)
        while found != -1:
            if len(starts) > dense:
                return [(0, len(text))]
            starts.add(text.rfind("\n", 0, found) + 1)
            line_end = text.find("\n", found)
            found = -1 if line_end == -1 else haystack.find(hint, line_end)
    windows: list[Span] = []
    for start in sorted(starts):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        if windows and windows[-1][1] + 1 == start:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def _pattern_spans(text: str) -> list[Span]:
    # Lower case keeps the offsets of ASCII text; other text is searched whole instead.
    lowered = text.lower() if text.isascii() else None
    spans: list[Span] = []
    found: dict[tuple[bool, tuple[str, ...]], list[Span]] = {}  # patterns may share hints
    for pattern in PATTERNS:
        haystack = text if not pattern.ignore_case_hints else lowered
        key = (pattern.ignore_case_hints, pattern.hints)
        if pattern.multiline or haystack is None:
            windows = [(0, len(text))]
        elif key in found:
            windows = found[key]
        else:
            windows = found[key] = _line_windows(text, haystack, pattern.hints)
        for start, end in windows:
            spans.extend(pattern.secret_spans(text, start, end))
    return spans


def _tail_spans(text: str) -> list[Span]:
    start = max(0, len(text) - _TAIL_WINDOW)
    found = (_PARTIAL_TAIL.search(text, start), _PARTIAL_URL_PASSWORD.search(text, start))
    return [match.span("secret") for match in found if match is not None]


def _head_spans(text: str) -> list[Span]:
    """What may be the rest of a secret whose beginning was cut off, and a secret right after
    the rest of a colour code the cut began inside."""
    spans: list[Span] = []
    end = _ORPHAN_END.search(text)
    begin = _BEGIN.search(text)
    if end is not None and (begin is None or begin.start() > end.start()):
        spans.append((0, end.start()))
    run = _LEADING_RUN.match(text)
    if run is not None:
        spans.append((0, min(run.end(), LONGEST_CUT_TOKEN)))
    rest = _CUT_CSI_REST.match(text)
    if rest is not None:
        after = rest.end()
        spans += [(start + after, end + after) for start, end
                  in _pattern_spans(text[after:after + LONGEST_CUT_TOKEN])]
    return spans


def may_hold_secrets(text: str) -> bool:
    """False when no pattern can match `text`: the cheap check made before any regex runs."""
    lowered = text.lower()
    return any(hint in lowered for hint in SHORT_HINTS)


def _stored_text_spans(text: str, head_cut: bool, open_end: bool) -> list[Span]:
    hinted = len(text) > _SHORT_TEXT or may_hold_secrets(text)
    spans = _pattern_spans(text) + (_tail_spans(text) if open_end else []) if hinted else []
    if head_cut:
        spans += _head_spans(text)
    if open_end and spans:
        spans = _before_partial_end(text, spans)
    return spans


def _before_partial_end(text: str, spans: list[Span]) -> list[Span]:
    """`spans` stopped before the start of a key block's END line that the text still
    growing ends with (`-----EN`): masked as the key's body, the line never closed the block
    once its rest came, and masking at rest hid the output after it."""
    partial = _PARTIAL_END.search(text, max(0, len(text) - _PARTIAL_END_REACH))
    if partial is None:
        return spans
    # Only a key block's body reaches the last line from a line before it; a span on the last
    # line alone is another secret's (`-----END AKIA...` holds a key id).
    cut = partial.start()
    return [(start, cut) if start < cut and end == len(text) else (start, end)
            for start, end in spans]


def secret_spans(text: str, *, head_cut: bool = False, open_end: bool = True) -> list[Span]:
    """The spans of `text` to mask, sorted and merged. `head_cut`: the text's beginning was
    cut off (a bounded output), so it may start inside a secret. `open_end`: more may still
    be appended (a running command's output, a reply being written), so a token's known
    prefix at the very end is masked before its rest arrives; a whole value (a command, a
    finished output) ends where it ends."""
    spans = _merged(_stored_text_spans(text, head_cut, open_end))
    shown = shown_text(text)
    if shown is None:
        return spans
    found = _merged(shown.stored_span(span)
                    for span in _stored_text_spans(shown.text, head_cut, open_end)
                    if span[1] > span[0])
    # What the stored text's own spans mask whole needs no carving round hidden sequences.
    uncovered = list(outside(found, spans, [start for start, _ in spans]))
    return _merged([*spans, *shown.unhidden(uncovered)]) if uncovered else spans


def _merged(spans: Iterable[Span]) -> list[Span]:
    """`spans` without empty ones, sorted, and those that overlap or touch joined."""
    merged: list[Span] = []
    for start, end in sorted(span for span in spans if span[1] > span[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# Every ASCII character that is not white space (as the regex `\s` says) becomes `*`.
_ASCII_HIDDEN = str.maketrans({chr(code): MASK_CHAR for code in range(128)
                               if not chr(code).isspace()})
_NON_SPACE_RUN = re.compile(r"\S+")


# A complete CSI sequence (7- or 8-bit), captured so that splitting on it keeps it.
_CSI = re.compile(r"((?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~])")


def _hidden(part: str) -> str:
    """`part` with every non-space character replaced by one `*` per UTF-8 byte, but for the
    CSI sequences wholly in it. Those hold only numbers and a final character, never text,
    and a `*` in place of one is drawn where the page drew nothing and loses what it did: a
    colour reset masked in `TOKEN=abc\\x1b[m` left the rest of the output coloured (ADR 0143)."""
    if "\x1b" not in part and "\x9b" not in part:
        return _starred(part)
    pieces = _CSI.split(part)
    pieces[::2] = [_starred(piece) for piece in pieces[::2]]
    return "".join(pieces)


def _starred(part: str) -> str:
    if part.isascii():
        return part.translate(_ASCII_HIDDEN)
    # Terminal data is decoded with `surrogateescape`: a byte of a character a chunk cut in
    # two is a lone surrogate here, and one byte.
    return _NON_SPACE_RUN.sub(
        lambda run: MASK_CHAR * len(run.group().encode("utf-8", "surrogateescape")), part)


def apply_spans(text: str, spans: Iterable[Span]) -> str:
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        pieces.append(text[position:start])
        pieces.append(_hidden(text[start:end]))
        position = end
    if position == 0:
        return text
    pieces.append(text[position:])
    return "".join(pieces)


def mask_secrets(text: str, *, head_cut: bool = False, open_end: bool = True) -> str:
    """`text` with every documented credential form masked (same UTF-8 byte length); see
    `secret_spans` for `head_cut` and `open_end`."""
    if not text:
        return text
    return apply_spans(text, secret_spans(text, head_cut=head_cut, open_end=open_end))


# How much of a stream's end a continuation is to be given: the window, and as far again as
# the longest token a cut leaves, for a secret the window begins inside.
CONTEXT_BYTES = _TAIL_WINDOW + LONGEST_CUT_TOKEN
# Read backwards from the window: the stars of a masked secret, then what its pattern kept of
# it (`ghp_`, `AKIA`, `eyJ`: its prefix), at most this long.
_PREFIX_KEPT = 16
_PREFIX_BACK = re.compile(rf"[{_TOKEN_CHARS}]{{0,{_PREFIX_KEPT}}}")
_STARS_KEPT = 64
# The line before the window or the masked secret, for what names it (`Bearer `, `NAME =`):
# looked at this far back, its long runs of blanks cut short, and its end kept.
_LINE_REACH = 1024
_LONG_BLANKS = re.compile(r"[ \t]{9,}")
_LINE_KEPT = 256
# An open key block's start as the patterns need it (its own BEGIN line may be long).
_OPEN_KEY_BLOCK = "-----BEGIN PRIVATE KEY-----\n"
# The most `_context` gives: each string of an update is masked with it.
CONTEXT_CHARS = _LINE_KEPT + _PREFIX_KEPT + _STARS_KEPT + _TAIL_WINDOW + len(_OPEN_KEY_BLOCK)


def _context(before: str) -> str:
    """What of `before` a continuation is masked with: its last `_TAIL_WINDOW` characters;
    before them the masked secret they begin inside (its kept prefix and at most
    `_STARS_KEPT` of its stars); before that the end of its line, its blanks cut short; and
    a private key block's BEGIN when one is still open. A 900-character JWT or a key body
    sent in pieces had its start outside the window, and its rest was stored in clear at
    rest. Every string of an update is masked with the context, so it is kept under
    `CONTEXT_CHARS`: one update of 3,000 strings after an open key once took 4.3 s."""
    window_start = max(0, len(before) - _TAIL_WINDOW)
    reach_start = max(0, len(before) - CONTEXT_BYTES)
    start, run = window_start, ""
    if reach_start < window_start and before[window_start - 1] == MASK_CHAR:
        back = before[reach_start:window_start][::-1]
        stars = len(back) - len(back.lstrip(MASK_CHAR))
        prefix = _PREFIX_BACK.match(back, stars)
        kept = 0 if prefix is None else prefix.end() - stars
        start = window_start - stars - kept
        run = before[start:start + kept] + MASK_CHAR * min(stars, _STARS_KEPT)
    line_from = max(reach_start, start - _LINE_REACH)
    line_start = before.rfind("\n", line_from, start) + 1 or line_from
    line = _LONG_BLANKS.sub(" " * 8, before[line_start:start])[-_LINE_KEPT:]
    context = line + run + before[window_start:]
    if before.find("PRIVATE KEY", reach_start) >= 0:
        blocks = [*_BEGIN.finditer(before, reach_start)]
        if blocks and _ORPHAN_END.search(before, blocks[-1].end()) is None:
            context = _OPEN_KEY_BLOCK + context
    return context


def mask_continuation(before: str, text: str) -> str:
    """`text`, appended to `before` (already masked), masked as part of the joined text:
    the rest of a token whose start `before` ends with is masked too."""
    return _masked_after(_context(before), text)


def _masked_after(context: str, text: str) -> str:
    if not text:
        return text
    offset = len(context)
    spans = [(max(start, offset) - offset, end - offset)
             for start, end in secret_spans(context + text) if end > offset]
    return apply_spans(text, spans)


def mask_json(value: object, context: str = "") -> object:
    """A JSON value with every string in it masked as a continuation of `context` (keys are
    names, not text, and stay as they are)."""
    return _masked_json(value, _context(context))


def _masked_json(value: object, context: str) -> object:
    if isinstance(value, str):
        return _masked_after(context, value)
    if isinstance(value, dict):
        return {key: _masked_json(item, context) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked_json(item, context) for item in value]
    return value
