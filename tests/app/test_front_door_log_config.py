"""The rendered front door logs what SHELLEXEC_LOG asks for, reads none of a request's
headers but its request id, method and path (no query), and counts header fields before any
filter adds to them (tests/service/test_front_door_access_log.py and
test_front_door_header_count.py drive them through Envoy)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from shellexec.api.call_log import LogLevel
from shellexec.app import token_check
from shellexec.app.envoy import ACCESS_LOG_FORMAT, HEADER_FIELDS_READ, render
from shellexec.app.settings import Settings
from shellexec.rules.limits import MAX_REQUEST_HEADER_FIELDS


def _manager(settings: Settings) -> dict[str, Any]:
    rendered = yaml.safe_load(render(settings, 50051, 50052))
    listener = rendered["static_resources"]["listeners"][0]
    manager: dict[str, Any] = listener["filter_chains"][0]["filters"][0]["typed_config"]
    return manager


@pytest.mark.parametrize(("level", "logs", "filtered"), [
    ("calls", True, False), ("errors", True, True), ("off", False, False)])
def test_the_log_setting_chooses_envoys_access_log(level: LogLevel, logs: bool,
                                                   filtered: bool) -> None:
    access_log = _manager(Settings(log=level))["access_log"]
    assert len(access_log) == logs
    if logs:
        [entry] = access_log
        assert entry["name"] == "envoy.access_loggers.stderr"
        assert ("filter" in entry) == filtered


def test_the_access_log_reads_no_header_but_the_request_id_method_and_path() -> None:
    operators = re.findall(r"%([A-Z_]+)(?:\(([^)]*)\))?", " ".join(ACCESS_LOG_FORMAT.values()))
    read = {argument for name, argument in operators if name in ("REQ", "RESP", "TRAILER")}
    assert read == {"X-REQUEST-ID", "X-ENVOY-ORIGINAL-METHOD?:METHOD"}
    assert ACCESS_LOG_FORMAT["path"].startswith("%PATH(NQ:")  # never the query


def test_header_fields_are_counted_first_and_envoy_reads_several_times_as_many() -> None:
    manager = _manager(Settings(auth=True))
    filters = [item["name"] for item in manager["http_filters"]]
    # After the security headers and CORS only (neither adds to a request's fields), so that
    # the refusal has both.
    assert filters[:3] == ["envoy.filters.http.header_mutation", "envoy.filters.http.cors",
                           "envoy.filters.http.lua"]
    assert filters.index("envoy.filters.http.lua") < filters.index(token_check.FILTER_NAME)
    read = manager["common_http_protocol_options"]["max_headers_count"]
    # A request of the most fields, with its pseudo-headers, Envoy's request id and
    # x-forwarded-proto and the token check's ticket, stays far inside what Envoy reads.
    assert read == HEADER_FIELDS_READ >= 2 * (MAX_REQUEST_HEADER_FIELDS + 8)
