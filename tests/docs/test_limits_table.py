"""The "Limits" table of docs/api.md and `shellexec.rules.limits` say the same.

Each row of the table names its numbers in its "limit" cell; ROWS says, number by number, which
constants of the module hold it. A row added to the table, a constant added to the module, or a
number changed on one side only fails here. Text in parentheses and in code spans is not a
limit (the 413 of "Envoy answers 413", the `0-9` of an alphabet).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shellexec.app.envoy import render
from shellexec.app.settings import Settings
from shellexec.client import _values as client_values
from shellexec.rules import limits

API = Path(__file__).resolve().parents[2] / "docs" / "api.md"

# Row ("what" cell) -> for each number of its "limit" cell, in order, the constants equal to it.
ROWS: dict[str, list[tuple[str, ...]]] = {
    "one ACP update": [("MAX_UPDATE_BYTES",)],
    "a Normalize request": [("MIN_NORMALIZE_UPDATES",), ("MAX_NORMALIZE_UPDATES",)],
    "one REST body": [("MAX_REST_BODY_BYTES",), ("MAX_GRPC_MESSAGE_BYTES",)],
    "each output stream": [("MAX_OUTPUT_STREAM_BYTES",)],
    "Summarize input": [("MAX_SUMMARIZE_FIELD_BYTES",)],
    "list page": [("DEFAULT_PAGE_SIZE",), ("MAX_PAGE_SIZE",)],
    "boot state": [("BOOT_STATE_MESSAGES",)],
    "`task_id`": [("MIN_TASK_ID_CHARS",), ("MAX_TASK_ID_CHARS",)],
    "`agent`, `stop_reason`": [("MAX_AGENT_CHARS", "MAX_STOP_REASON_CHARS")],
    "`toolCallId`": [("MAX_TOOL_CALL_ID_CHARS",)],
    "`sequence`": [("MIN_SEQUENCE",)],
    "`request_id`": [("MIN_REQUEST_ID_CHARS",), ("MAX_REQUEST_ID_CHARS",),
                     ("REQUEST_ID_WINDOW_SECONDS",)],
    "command, title, work dir, chat text (stored, and in Normalize's answer)": [
        ("MAX_STORED_TEXT_BYTES",)],
    "a list or boot-state page": [("MAX_PAGE_BYTES",)],
    "`since_revision`": [("MIN_SINCE_REVISION",)],
    "`session_id`, `turn_id`, `message_id`, cursors `before` and `after`": [
        ("SERVER_ID_HEX_DIGITS",)],
    "input quoted in an error message": [("MAX_QUOTED_INPUT_CHARS",)],
    "an error message from the server": [("MAX_ERROR_MESSAGE_CHARS",)],
    "bearer token": [("MAX_BEARER_TOKEN_CHARS",), ("MAX_TOKEN_NAME_CHARS",)],
    "a Normalize request's updates in all": [("MAX_NORMALIZE_BYTES",)],
    "JSON values in a request": [("MAX_REQUEST_VALUES",), ("MAX_UPDATE_DEPTH",)],
    "a watcher's queue of live events": [("FEED_QUEUE_EVENTS",), ("FEED_QUEUE_BYTES",)],
    "one read of the log in a replay": [("REPLAY_BATCH_EVENTS",), ("REPLAY_BATCH_BYTES",)],
    "the front door's buffer per stream and per client connection": [
        ("FRONT_DOOR_STREAM_BUFFER_BYTES",)],
    "a watcher that stopped reading": [("STALLED_WATCHER_SECONDS",)],
    "feed watchers one caller holds open": [("MAX_WATCHERS_PER_CALLER",)],
    "streams of one client connection through the front door": [
        ("FRONT_DOOR_STREAMS_PER_CONNECTION",)],
    "streams the front door carries to the servers at once, per pool and per replica": [
        ("FRONT_DOOR_POOL_STREAMS_PER_REPLICA",)],
    "requests a server holds at once": [("REQUEST_BUDGET_BYTES",),
                                        ("REQUEST_BUDGET_BYTES_PER_CALLER",),
                                        ("MAX_GRPC_MESSAGE_BYTES",)],
    "request streams a server serves at once": [("MAX_REQUEST_STREAMS",)],
    "calls without a valid token a server runs at once, with authentication on": [
        ("MAX_TOKENLESS_CALLS",)],
    "a call's request message, once the call is admitted": [("MESSAGE_ARRIVAL_SECONDS",)],
    "calls of one token waiting for room in that budget": [("MAX_WAITING_CALLS_PER_CALLER",)],
    "connections to a server's own gRPC port": [("MAX_GRPC_CONNECTIONS",),
                                                 ("GRPC_HANDSHAKE_SECONDS",),
                                                 ("GRPC_CONNECTION_IDLE_SECONDS",)],
    "calls a server runs at once": [("MAX_SERVER_CALLS",),
                                    ("FRONT_DOOR_POOL_STREAMS_PER_REPLICA",)],
    "a request that opens a stream (a feed, a health watch)": [("MAX_STREAM_REQUEST_BYTES",)],
    "a request's headers through the front door": [("MAX_REQUEST_HEADERS_BYTES",)],
    "a request's header fields through the front door": [("MAX_REQUEST_HEADER_FIELDS",)],
    "a health request through the front door": [("MAX_HEALTH_REQUEST_BYTES",),
                                                ("FRONT_DOOR_STREAM_BUFFER_BYTES",)],
    "retention and compaction": [("HOUSEKEEPING_BATCH_SESSIONS",)],
    "publish receipts": [("RECEIPT_WINDOW_SECONDS",)],
    "a terminal update's `terminalId`": [("MAX_TERMINAL_ID_CHARS",)],
    "the terminals one tool update names (its `content` blocks of `\"type\": \"terminal\"`)": [
        ("MAX_TERMINALS_PER_TOOL_UPDATE",), ("MAX_TERMINAL_ID_CHARS",)],
    "a terminal update's data (`data`, `output.data`)": [("MAX_TERMINAL_DATA_BYTES",),
                                                         ("MAX_TERMINAL_SIGNAL_CHARS",)],
    "terminal updates held before their terminal is linked": [
        ("MAX_HELD_TERMINAL_UPDATES",), ("MAX_HELD_TERMINAL_BYTES",)],
}
# Rows whose limit names the characters an identifier may use, as ID_CHARACTERS allows them.
ALPHABET_ROWS = ("`task_id`", "`request_id`")
UNITS = {"": 1, "MiB": 1024 * 1024, "hours": 60 * 60}

_ROW = re.compile(r"^\| (.+?) \| (.+?) \|$")
# A number or a range ("1-128"), with its unit; the 8 of "UTF-8" is part of a name.
_NUMBER = re.compile(r"(?<![\w.-])(\d[\d,]*)(?:-(\d[\d,]*))?(?:\s+(MiB|hours)\b)?")
_ALPHABET = re.compile(r"\bof `([^`]+)`")


def table() -> dict[str, str]:
    """The Limits table of docs/api.md: "what" cell -> "limit" cell."""
    section = API.read_text().split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = [(match[1], match[2]) for line in section.splitlines()
            if (match := _ROW.match(line))]
    assert rows[:2] == [("what", "limit"), ("---", "---")], "the table's header changed"
    return dict(rows[2:])


def numbers(cell: str) -> list[int]:
    """The numbers a limit cell states, in order, in bytes, characters, counts or seconds."""
    prose = re.sub(r"\([^)]*\)", "", re.sub(r"`[^`]*`", "", cell))
    return [int(digits.replace(",", "")) * UNITS[unit]
            for *bounds, unit in _NUMBER.findall(prose) for digits in bounds if digits]


def constant(name: str) -> object:
    return getattr(limits, name)


def test_numbers_read_units_and_skip_code_and_asides() -> None:
    assert numbers("8 MiB (Envoy answers 413); one gRPC message 16 MiB") == [
        8 * 1024 * 1024, 16 * 1024 * 1024]
    assert numbers("1-64 of `A-Z 0-9`; remembered for 24 hours") == [1, 64, 86_400]
    assert numbers("1 to 1,000 updates") == [1, 1000]
    assert numbers("262,144 bytes of UTF-8 each") == [262_144]


def test_every_row_of_the_table_is_mapped_and_every_mapping_is_a_row() -> None:
    assert sorted(table()) == sorted(ROWS)


@pytest.mark.parametrize("what", sorted(ROWS))
def test_each_rows_numbers_are_the_modules_constants(what: str) -> None:
    stated = numbers(table()[what])
    held = [[constant(name) for name in names] for names in ROWS[what]]
    assert len(stated) == len(held), f"{what}: the table states {stated}"
    for number, values, names in zip(stated, held, ROWS[what], strict=True):
        assert values == [number] * len(names), f"{what}: {names} = {values}, table: {number}"


@pytest.mark.parametrize("what", ALPHABET_ROWS)
def test_identifier_alphabets_are_the_modules(what: str) -> None:
    match = _ALPHABET.search(table()[what])
    assert match is not None, what
    stated: set[str] = set()
    for item in match.group(1).split():
        first, _, last = item.partition("-") if len(item) == 3 else (item, "", item)
        stated.update(chr(code) for code in range(ord(first), ord(last) + 1))
    allowed = {chr(code) for code in range(32, 127)
               if re.fullmatch(f"[{limits.ID_CHARACTERS}]", chr(code))}
    assert stated == allowed


def test_every_constant_of_the_module_is_in_the_table() -> None:
    public = {name for name in vars(limits) if name.isupper() and not name.startswith("_")}
    mapped = {name for slots in ROWS.values() for names in slots for name in names}
    assert public == mapped | {"ID_CHARACTERS"}


def test_copies_outside_the_server_package_equal_the_module() -> None:
    """The Python client installs without the server, and Envoy reads YAML: both hold the
    number themselves, so it is checked here."""
    assert client_values.MAX_MESSAGE_BYTES == limits.MAX_GRPC_MESSAGE_BYTES
    assert client_values.MAX_VALUE_DEPTH == limits.MAX_UPDATE_DEPTH
    config = render(Settings(), grpc_port=50051)
    found = sorted(re.findall(r"(max_request_bytes|max_request_body_size): (\d+)", config))
    assert found == sorted([("max_request_bytes", str(limits.MAX_REST_BODY_BYTES)),
                            ("max_request_bytes", str(limits.MAX_HEALTH_REQUEST_BYTES)),
                            ("max_request_body_size", str(limits.MAX_GRPC_MESSAGE_BYTES))])
    assert f"max_request_headers_kb: {limits.MAX_REQUEST_HEADERS_BYTES // 1024}\n" in config
    # The header count filter's script holds the number; Envoy reads several times as many.
    assert re.findall(r"local MOST = (\d+)", config) == [str(limits.MAX_REQUEST_HEADER_FIELDS)]
    [read] = re.findall(r'"max_headers_count": (\d+)', config)
    assert int(read) >= 2 * limits.MAX_REQUEST_HEADER_FIELDS
    assert re.findall(r"max_concurrent_streams: (\d+)", config) == [
        str(limits.FRONT_DOOR_STREAMS_PER_CONNECTION)]
    # One bound shared by the four pools' clusters (a YAML anchor), scaled by the replicas.
    for replicas in (1, 3):
        config = render(Settings(), 50051, *range(50052, 50051 + replicas))
        assert re.findall(r"max_requests: (\d+)", config) == [
            str(limits.FRONT_DOOR_POOL_STREAMS_PER_REPLICA * replicas)]
        assert re.findall(r"max_retries: (\d+)", config) == [
            str(limits.FRONT_DOOR_POOL_STREAMS_PER_REPLICA * replicas)]
        assert config.count("circuit_breakers: *upstream_streams") == 3
