"""Cumulative output carried in ACP `content[]` text blocks.

OpenCode, OMP and Codex outside terminal mode put *all output so far* in `content` (ACP
`content` replaces the previous collection, it is never appended to). This module turns one
`content` list into the output text it shows, or None when it shows no output:

1. keep `text` blocks, bare or in a `{"type": "content"}` wrapper; terminal, diff, image and
   resource items are not output;
2. remove a Markdown fence wrapping a whole block (```` ```sh ... ``` ````): Codex fences
   its live output, Claude and Auggie fence their final text;
3. drop blocks equal to the call's description: Claude (plain mode) shows it as content;
   steps 2 and 3 are only for those three and for agents not known (`PRESENTING_AGENTS`):
   for any other agent a fenced file or a line equal to the description is output like the
   rest;
4. drop empty blocks and blocks equal, once trimmed, to an earlier block: OMP repeats the
   output raw and trimmed;
5. join the rest, with a line break between blocks that lack one.

The `$ <command>` presentation block is not dropped here: it is removed once from the joined
text by `echo.strip_presentation`, which also handles output glued to it.
"""

from __future__ import annotations

import re
from typing import Final

from shellexec.normalize.access import block_texts
from shellexec.vocabulary import AGENT_AUGGIE, AGENT_CLAUDE, AGENT_CODEX, AgentName

_FENCE_OPEN = re.compile(r"(`{3,})[^`\n]*\n")

# The agents that fence their output or show the description as content. Every other agent
# the rules know shows what the command printed; an agent not known (no hint, no shape) is
# read as one of these, as it always was.
PRESENTING_AGENTS: Final[frozenset[AgentName]] = frozenset({
    AGENT_CODEX, AGENT_CLAUDE, AGENT_AUGGIE})


def content_output(content: object, description: str | None,
                   agent: AgentName | None = None) -> str | None:
    """The output shown by a `content` list of `agent`'s (None: not known), or None when it
    shows no output."""
    plain = agent is not None and agent not in PRESENTING_AGENTS
    blocks = block_texts(content) if plain else [strip_fence(text) for text in block_texts(content)]
    kept: list[str] = []
    seen: set[str] = set()
    for block in blocks:
        trimmed = block.strip()
        if (not trimmed or trimmed in seen
                or (not plain and _is_description(trimmed, description))):
            continue
        seen.add(trimmed)
        kept.append(block)
    return join_blocks(kept) if kept else None


def _is_description(trimmed: str, description: str | None) -> bool:
    return description is not None and trimmed == description.strip()


def join_blocks(blocks: list[str]) -> str:
    """The blocks in order, with a line break between two when the first does not end one."""
    parts: list[str] = []
    for block in filter(None, blocks):
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        parts.append(block)
    return "".join(parts)


def strip_fence(text: str) -> str:
    """The body of a Markdown code fence that wraps all of `text`; else `text` unchanged.

    The opening fence may name a language; the closing fence must stand on its own line.
    """
    opening = _FENCE_OPEN.match(text)
    if opening is None:
        return text
    fence = opening.group(1)
    body = text[opening.end() :].rstrip()
    if not body.endswith(fence):
        return text
    inner = body[: -len(fence)]
    if inner and not inner.endswith("\n"):
        return text
    return inner.removesuffix("\n")
