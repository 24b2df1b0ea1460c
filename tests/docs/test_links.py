"""The repository's documentation stands alone: every relative link in README.md and docs/
resolves to a file of the repository (and, for a `#fragment` into Markdown, to one of its
headings), and no page names a file outside the repository such as the design notes it was
built from."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
# Paths a clone does not have; named even in a code span they send the reader nowhere.
OUTSIDE = re.compile(r"shared/|\.\./shared\b")

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[`~]*[ \t]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
_HTML = re.compile(r"<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']",
                   re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text with fenced blocks and code spans blanked: links there are not links."""
    text = _FENCE.sub("", text)
    return _CODE_SPAN.sub("", text)


def link_targets(text: str) -> list[str]:
    """Every link, image and reference-definition target of a Markdown page, in order."""
    prose = _prose(text)
    return [match.group(1) for pattern in (_INLINE, _REFERENCE, _HTML)
            for match in pattern.finditer(prose)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    kept = "".join(char for char in heading.lower()
                   if char in " -_" or unicodedata.category(char)[0] in "LN")
    return kept.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a Markdown page's headings, numbered like GitHub numbers repeats."""
    seen: Counter[str] = Counter()
    found = set()
    for match in _HEADING.finditer(_FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = _slug(match.group(1))
        found.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return frozenset(found)


def broken(page: Path, target: str) -> str | None:
    """Why a link target of `page` does not resolve inside the repository, or None."""
    if _SCHEME.match(target) or target.startswith("//"):
        return None  # a web address: not the repository's to check
    path_part, _, fragment = target.partition("#")
    path_part = unquote(path_part.split("?", 1)[0])
    base = ROOT if path_part.startswith("/") else page.parent
    resolved = (base / path_part.lstrip("/")).resolve() if path_part else page
    if not resolved.is_relative_to(ROOT):
        return f"{target}: outside the repository"
    if not resolved.exists():
        return f"{target}: no such file"
    if fragment and resolved.suffix == ".md" and fragment.lower() not in anchors(resolved):
        return f"{target}: no heading #{fragment} in {resolved.relative_to(ROOT)}"
    return None


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_relative_links_resolve(page: Path) -> None:
    problems = [problem for target in link_targets(page.read_text(encoding="utf-8"))
                if (problem := broken(page, target)) is not None]
    assert problems == []


def _outside_references(page: Path) -> Iterator[str]:
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if OUTSIDE.search(line):
            yield f"line {number}: {line.strip()}"


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_no_page_names_files_outside_the_repository(page: Path) -> None:
    assert list(_outside_references(page)) == []


def test_the_pages_are_found() -> None:
    names = {_page_id(page) for page in PAGES}
    assert {"README.md", "docs/api.md", "docs/web.md", "docs/normalization.md"} <= names


# -- the checker itself: each rule catches what it is for --------------------------------------

def test_targets_include_inline_reference_and_html_links_but_not_code() -> None:
    text = ("See [the guide](docs/a.md#top) and ![shot](img/s.png \"title\").\n"
            "[ref]: docs/b.md\n"
            '<img src="docs/c.png" width="3">\n'
            "`[not](a-link.md)`\n"
            "```md\n[nor](this.md)\n```\n")
    assert link_targets(text) == ["docs/a.md#top", "img/s.png", "docs/b.md", "docs/c.png"]


def test_broken_flags_missing_files_escapes_and_anchors() -> None:
    readme = ROOT / "README.md"
    assert broken(readme, "https://example.com/x.md") is None
    assert broken(readme, "docs/web.md") is None
    assert broken(readme, "docs/adr/") is None
    assert broken(readme, "docs/missing.md") == "docs/missing.md: no such file"
    assert broken(readme, "../outside.md") == "../outside.md: outside the repository"
    assert broken(readme, "docs/web.md#tests") is None
    assert broken(readme, "docs/web.md#no-such-heading") is not None


def test_slugs_follow_github() -> None:
    assert _slug("Run a real agent: `shellexec bridge`") == "run-a-real-agent-shellexec-bridge"
    assert _slug("Is it a shell command? (`commands.py`)") == "is-it-a-shell-command-commandspy"
    assert _slug("The `$ <command>` echo (`echo.py`)") == "the--command-echo-echopy"


def test_outside_references_are_caught_in_code_spans_too() -> None:
    assert OUTSIDE.search("see `shared/design/contract.md`")
    assert OUTSIDE.search("[x](../shared/spec.md)")
    assert OUTSIDE.search("the notes in ../shared")
    assert not OUTSIDE.search("a shared stack, shared by the run")


SOURCES = sorted(
    path for pattern in ("server/**/*.py", "web/**/*.js", "web/**/*.html", "web/**/*.css",
                         "proto/**/*.proto", "clients/python/**/*.py", "envoy/*.yaml",
                         "bench/*.py", "tests/**/*.py", "Makefile")
    for path in ROOT.glob(pattern)
    if path != Path(__file__).resolve() and ".venv" not in path.parts)


def test_no_source_file_names_files_outside_the_repository() -> None:
    """Comments and docstrings point readers at docs/, which a clone has."""
    named = {_page_id(path): lines for path in SOURCES
             if (lines := list(_outside_references(path)))}
    assert named == {}
    assert any(path.name == "vocabulary.py" for path in SOURCES)
