"""The 405 routes come from the proto's HTTP rules and never shadow a served method, including
routes added later on the same paths."""

from __future__ import annotations

import re
from typing import Any

import pytest
from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pb2

from shellexec.app.envoy import DESCRIPTOR
from shellexec.app.front_door_errors import method_not_allowed_routes
from shellexec.app.rest_bindings import PathTemplate, RestBinding, bindings_of, read_bindings


def descriptor_file(rules: dict[str, http_pb2.HttpRule]) -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name="t.proto", package="t.v1")
    service = file.service.add(name="Things")
    for name, rule in rules.items():
        method = service.method.add(name=name, input_type=".t.v1.R", output_type=".t.v1.R")
        method.options.Extensions[annotations_pb2.http].CopyFrom(rule)
    return file


def answer(routes: list[dict[str, Any]], method: str, path: str) -> dict[str, Any] | None:
    """The 405 route Envoy would pick for this request, or None (RE2 full matches, like
    Python's for these patterns)."""
    for route in routes:
        match = route["match"]
        methods = match["headers"][0]["string_match"]["safe_regex"]["regex"]
        if re.fullmatch(match["safe_regex"]["regex"], path) and not re.fullmatch(methods, method):
            return route
    return None


def sample_path(template: PathTemplate) -> str:
    """A request path of this template: every variable segment becomes `x1`."""
    return "/" + "/".join(segment.literal if segment.literal is not None
                          else "x1" + segment.suffix for segment in template.segments)


def allow(route: dict[str, Any] | None) -> str:
    assert route is not None
    return str(route["response_headers_to_add"][0]["header"]["value"])


def test_bindings_are_read_from_the_descriptor_envoy_uses() -> None:
    found = {(b.method, b.template.text): b.rpc for b in read_bindings(DESCRIPTOR)}
    assert found[("POST", "/api/v1/task-sessions")] == "shellexec.v1.ShellExecService.CreateSession"
    assert found[("GET", "/api/v1/agent-sessions/{session_id}/messages")] == (
        "shellexec.v1.ShellExecService.ListMessages")  # an additional binding
    assert found[("DELETE", "/api/v1/tasks/{task_id}")] == (
        "shellexec.v1.ShellExecService.DeleteTask")
    assert found[("GET", "/api/v1/task-sessions")] == (
        "shellexec.v1.ShellExecService.ListSessions")
    assert len(found) == 15


def test_no_served_request_of_the_api_meets_a_405_route() -> None:
    bindings = read_bindings(DESCRIPTOR)
    routes = method_not_allowed_routes(bindings)
    for binding in bindings:
        path = sample_path(binding.template)
        assert answer(routes, binding.method, path) is None, (binding.method, path)
        assert answer(routes, "PUT", path) is not None, path


def test_one_route_per_path_allowing_every_method_of_it() -> None:
    file = descriptor_file({
        "Create": http_pb2.HttpRule(post="/v1/things", body="*"),
        "List": http_pb2.HttpRule(get="/v1/things"),
        "Get": http_pb2.HttpRule(get="/v1/things/{id}"),
        "Delete": http_pb2.HttpRule(delete="/v1/things/{thing_id}"),
        "Touch": http_pb2.HttpRule(custom=http_pb2.CustomHttpPattern(kind="touch",
                                                                     path="/v1/things/{id}")),
    })
    routes = method_not_allowed_routes(bindings_of([file]))
    assert len(routes) == 2
    assert answer(routes, "GET", "/v1/things") is None
    assert answer(routes, "POST", "/v1/things") is None
    assert allow(answer(routes, "PUT", "/v1/things")) == "GET, POST"
    for method in ("GET", "DELETE", "TOUCH"):
        assert answer(routes, method, "/v1/things/a") is None
    assert allow(answer(routes, "POST", "/v1/things/a")) == "DELETE, GET, TOUCH"


def test_templates_that_can_match_the_same_path_share_their_methods() -> None:
    file = descriptor_file({
        "Get": http_pb2.HttpRule(get="/v1/things/{id}"),
        "Cancel": http_pb2.HttpRule(post="/v1/things/{id}:cancel", body="*"),
        "Watch": http_pb2.HttpRule(get="/v1/things/{id}:watch"),
    })
    routes = method_not_allowed_routes(bindings_of([file]))
    # `/v1/things/a:cancel` is both a thing called `a:cancel` and the cancel verb on `a`.
    assert answer(routes, "GET", "/v1/things/a:cancel") is None
    assert answer(routes, "POST", "/v1/things/a:cancel") is None
    # The two verbs never share a path: POST is served on `:cancel` paths, not `:watch` ones.
    assert allow(answer(routes, "POST", "/v1/things/a:watch")) == "GET"


@pytest.mark.parametrize(("template", "path", "matches"), [
    ("/v1/{name=shelves/*}/books", "/v1/shelves/s1/books", True),
    ("/v1/{name=shelves/*}/books", "/v1/racks/s1/books", False),
    ("/v1/things/{id}", "/v1/things/a/b", False),
    ("/v1/things/{id}:cancel", "/v1/things/a:cancel", True),
    ("/v1/things/{id}:cancel", "/v1/things/:cancel", False),
    ("/v1/files/{path=**}", "/v1/files/a/b/c", True),
    ("/v1/a.b+c", "/v1/aXb+c", False),
])
def test_template_regex(template: str, path: str, matches: bool) -> None:
    assert bool(re.fullmatch(PathTemplate.parse(template).regex, path)) is matches


def test_a_binding_knows_its_rpc() -> None:
    file = descriptor_file({"Get": http_pb2.HttpRule(get="/v1/things/{id}")})
    assert bindings_of([file]) == [
        RestBinding("GET", PathTemplate.parse("/v1/things/{id}"), "t.v1.Things.Get")]
