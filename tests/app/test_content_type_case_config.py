"""The two front-door rules on gRPC content types agree (the behaviour through the real Envoy:
tests/service/test_grpc_codecs.py): what ADR 0121's route lets through as Protobuf, ADR 0134's
rules rewrite, leave to Envoy as gRPC, or refuse as misspelt; what it refuses as another codec,
they leave alone. Python's `re` reads these patterns as RE2 does."""

from __future__ import annotations

import re

import pytest

from shellexec.app import content_type_case
from shellexec.app.grpc_codecs import PROTOBUF_CONTENT_TYPES

SPELLINGS = [
    "application/grpc", "application/grpc+proto", "application/grpc+PROTO", "Application/GRPC",
    "application/grpc; charset=utf-8", "APPLICATION/GRPC+PROTO", "application/grpc-web",
    "Application/GRPC-Web+Proto", "application/grpc-web-text", "APPLICATION/GRPC-WEB-TEXT+PROTO",
    "application/grpc-web+proto; charset=utf-8", "application/grpc+json",
    "application/GRPC-Web+JSON", "application/grpc-web-text+json", "application/grpc+cbor",
]


def _handled(content_type: str) -> list[str]:
    """The ADR 0134 rules that take `content_type` up on a gRPC path."""
    rules = [value for pattern, value in content_type_case.CONTENT_TYPES
             if re.fullmatch(pattern, content_type) and "grpc" in value]
    if re.fullmatch(content_type_case.ENVOY_GRPC, content_type):
        rules.append("Envoy's gRPC")
    elif re.fullmatch(content_type_case.GRPC_PROTOBUF, content_type):
        rules.append("refused")
    return rules


@pytest.mark.parametrize("content_type", SPELLINGS)
def test_a_protobuf_spelling_gets_one_rule_and_another_codec_none(content_type: str) -> None:
    handled = _handled(content_type)
    if re.fullmatch(PROTOBUF_CONTENT_TYPES, content_type):
        assert len(handled) == 1, handled
    else:
        assert handled in ([], ["Envoy's gRPC"]), handled  # ADR 0121's route answers first
