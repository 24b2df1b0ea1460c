"""The REST bindings of the API, read from the descriptor set Envoy transcodes with.

Each `google.api.http` rule (and each of its `additional_bindings`) is one HTTP method on one
path template such as `/api/v1/task-sessions/{session_id}/turns/{turn_id}:complete`. The front
door derives its 405 routes from these, so a route added to the proto is never refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pb2

_VARIABLE = re.compile(r"\{[^}=]+(?:=([^}]*))?\}")
_VARIABLE_NAME = re.compile(r"\{([^}=]+)")
_STANDARD_METHODS = ("get", "put", "post", "delete", "patch")
_REGEX_SPECIAL = frozenset(r".^$*+?()[]{}|\\")
_ONE_SEGMENT = "[^/]+"


@dataclass(frozen=True)
class Segment:
    """One path segment: `literal`, or any text without `/` ending in `suffix` (a wildcard)."""

    literal: str | None = None
    suffix: str = ""

    def may_equal(self, other: Segment) -> bool:
        """Whether some request segment could match both."""
        if self.literal is not None and other.literal is not None:
            return self.literal == other.literal
        if self.literal is not None:
            return other.accepts(self.literal)
        if other.literal is not None:
            return self.accepts(other.literal)
        # Two wildcards share a value unless their suffixes (verbs) are incompatible.
        return self.suffix.endswith(other.suffix) or other.suffix.endswith(self.suffix)

    def accepts(self, text: str) -> bool:
        return len(text) > len(self.suffix) and text.endswith(self.suffix) and "/" not in text


@dataclass(frozen=True)
class PathTemplate:
    """A parsed `google.api.http` path template."""

    text: str
    segments: tuple[Segment, ...]
    any_depth: bool  # has `**`: matches any number of segments

    @classmethod
    def parse(cls, text: str) -> PathTemplate:
        path, verb = _split_verb(text)
        # A variable's own pattern (`{name=shelves/*}`) stands for its segments.
        expanded = _VARIABLE.sub(lambda found: found.group(1) or "*", path)
        parts = expanded.strip("/").split("/")
        segments = [Segment(suffix="") if part in ("*", "**") else Segment(literal=part)
                    for part in parts]
        if verb:
            last = segments[-1]
            segments[-1] = (Segment(literal=f"{last.literal}:{verb}") if last.literal is not None
                            else Segment(suffix=f":{verb}"))
        return cls(text, tuple(segments), "**" in parts)

    @property
    def verb(self) -> str:
        """The custom verb (`complete` for `...:complete`), "" when there is none."""
        return _split_verb(self.text)[1]

    @property
    def variables(self) -> tuple[str, ...]:
        """The request fields the path binds, in order (`session_id`, `turn_id`...)."""
        return tuple(_VARIABLE_NAME.findall(self.text))

    @property
    def regex(self) -> str:
        """An RE2 regex matching exactly the request paths (without query) of this template."""
        if self.any_depth:  # `**` may only end a template (before its verb)
            prefix = "".join(f"/{_segment_regex(s)}" for s in self.segments[:-1])
            return f"^{prefix}/.*{_escape(self.segments[-1].suffix)}$"
        return "^" + "".join(f"/{_segment_regex(s)}" for s in self.segments) + "$"

    @property
    def fields_regex(self) -> str:
        """A Python regex matching the request paths (without query) of this template, with a
        named group for each field it binds, holding that field's segment as sent."""
        path, verb = _split_verb(self.text)
        pieces = (_variable_group(piece) if piece.startswith("{") else re.escape(piece)
                  for piece in re.split(r"(\{[^}]*\})", path))
        return r"\A" + "".join(pieces) + (re.escape(f":{verb}") if verb else "") + r"\Z"

    def may_overlap(self, other: PathTemplate) -> bool:
        """Whether one request path could match both; errs towards yes for `**`."""
        if self.any_depth or other.any_depth:
            return True
        return len(self.segments) == len(other.segments) and all(
            mine.may_equal(theirs) for mine, theirs in zip(self.segments, other.segments,
                                                            strict=True))


@dataclass(frozen=True)
class RestBinding:
    """One HTTP method on one path template, served by `rpc`."""

    method: str
    template: PathTemplate
    rpc: str


def _split_verb(text: str) -> tuple[str, str]:
    """A template's path and its custom verb (`complete` for `...:complete`, else "").

    The verb follows the last segment; a variable cannot contain `:`."""
    if ":" not in text.rsplit("/", 1)[-1]:
        return text, ""
    path, _, verb = text.rpartition(":")
    return path, verb


def _escape(text: str) -> str:
    return "".join(f"\\{char}" if char in _REGEX_SPECIAL else char for char in text)


def _variable_group(variable: str) -> str:
    """A template variable (`{name}`, `{name=shelves/*}`) as a Python regex group named after
    its field, matching the segments its pattern stands for (`{name}`: one)."""
    name, _, pattern = variable[1:-1].partition("=")
    segments = "/".join(".+" if piece == "**" else "[^/]+" if piece == "*" else re.escape(piece)
                        for piece in (pattern or "*").split("/"))
    return f"(?P<{name}>{segments})"


def _segment_regex(segment: Segment) -> str:
    if segment.literal is not None:
        return _escape(segment.literal)
    return _ONE_SEGMENT + _escape(segment.suffix)


def _rule_bindings(rule: http_pb2.HttpRule, rpc: str) -> Iterator[RestBinding]:
    pattern = rule.WhichOneof("pattern")
    if pattern == "custom":
        yield RestBinding(rule.custom.kind.upper(), PathTemplate.parse(rule.custom.path), rpc)
    elif pattern in _STANDARD_METHODS:
        yield RestBinding(pattern.upper(), PathTemplate.parse(getattr(rule, pattern)), rpc)
    for additional in rule.additional_bindings:
        yield from _rule_bindings(additional, rpc)


def bindings_of(files: Iterable[descriptor_pb2.FileDescriptorProto]) -> list[RestBinding]:
    """Every REST binding of every service method in these files."""
    found: list[RestBinding] = []
    for file in files:
        for service in file.service:
            for method in service.method:
                if method.options.HasExtension(annotations_pb2.http):
                    rpc = f"{file.package}.{service.name}.{method.name}".lstrip(".")
                    found += _rule_bindings(method.options.Extensions[annotations_pb2.http], rpc)
    return found


def path_patterns(bindings: Iterable[RestBinding]) -> dict[str, list[re.Pattern[str]]]:
    """Each gRPC method (`/package.Service/Method`) whose paths bind fields -> the regexes
    of its templates (`PathTemplate.fields_regex`): what `api.path_binding` compares with."""
    patterns: dict[str, list[re.Pattern[str]]] = {}
    for binding in bindings:
        if binding.template.variables:
            service, _, method = binding.rpc.rpartition(".")
            patterns.setdefault(f"/{service}/{method}", []).append(
                re.compile(binding.template.fields_regex))
    return patterns


def read_bindings(descriptor_set: Path) -> list[RestBinding]:
    """The REST bindings of a `protoc --descriptor_set_out` file."""
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes()).file
    return bindings_of(files)
