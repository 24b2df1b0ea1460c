"""What a web page the user visits can no longer do to the loopback service, through the real
Envoy (docs/security.md, "The browser boundary"; ADRs 0055-0057): a rebound Host gets 421, a
foreign Origin or a cross-site request 403, a browser's form or text body 415; requests
without an Origin (curl, services) work as before; every answer carries the security headers;
Envoy's admin interface listens on no TCP port."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shellexec.app.browser_boundary import SECURITY_HEADERS
from shellexec.demo.rest import RestResponse

from support.rest import unique
from support.stack import Stack

PERMISSION_DENIED, INVALID_ARGUMENT = 7, 3
CREATE = "/api/v1/task-sessions"
GRPCURL = str(Path(sys.executable).parent / "grpcurl")
WEB = Path(__file__).resolve().parents[2] / "web"
StackWith = Callable[..., Stack]


def assert_refused(response: RestResponse, status: int, code: int) -> None:
    assert response.status == status, response.body
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["code"] == code
    assert body["message"]


def boot_state_status(stack: Stack, task_id: str) -> int:
    """404 while no session of `task_id` exists: a refused create stored nothing."""
    return stack.api.request("GET", f"/api/v1/tasks/{task_id}/boot-state").status


def create(stack: Stack, task_id: str, headers: dict[str, str], *,
           raw: bytes | None = None) -> RestResponse:
    body = raw if raw is not None else json.dumps({"task_id": task_id}).encode()
    return stack.api.request("POST", CREATE, raw=body, headers=headers)


# ---- Host: DNS rebinding ------------------------------------------------------------------

@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1:1",
                                  "localhost.evil.example:{port}", "10.0.0.5:{port}"])
def test_a_foreign_host_is_421_and_reads_nothing(stack: Stack, host: str) -> None:
    session = stack.api.new_session()
    rebound = {"host": host.format(port=stack.rest_port)}
    read = stack.api.request("GET", f"{CREATE}/{session['id']}", headers=rebound)
    assert_refused(read, 421, PERMISSION_DENIED)
    assert session["id"] not in read.body.decode()
    page = stack.api.request("GET", "/", headers=rebound)
    assert page.status == 421


def test_a_foreign_host_creates_nothing(stack: Stack) -> None:
    task_id = unique("rebound")
    response = create(stack, task_id, {"host": f"evil.example:{stack.rest_port}"})
    assert_refused(response, 421, PERMISSION_DENIED)
    assert boot_state_status(stack, task_id) == 404


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"])
def test_the_loopback_names_with_the_port_are_served(stack: Stack, name: str) -> None:
    session = stack.api.new_session()
    response = stack.api.request("GET", f"{CREATE}/{session['id']}",
                                 headers={"host": f"{name}:{stack.rest_port}"})
    assert response.status == 200, response.body


@pytest.mark.slow
def test_configured_hosts_are_served_and_their_page_is_same_origin(
        stack_with: StackWith) -> None:
    own = stack_with(SHELLEXEC_ALLOWED_HOSTS="shellexec.internal, 10.0.0.5:9000")
    named = {"host": f"shellexec.internal:{own.rest_port}"}
    assert own.api.request("GET", "/", headers=named).status == 200
    assert own.api.request("GET", "/", headers={"host": "10.0.0.5:9000"}).status == 200
    same_origin = {**named, "origin": f"http://shellexec.internal:{own.rest_port}"}
    assert create(own, unique("named"), same_origin).status == 200
    other = own.api.request("GET", "/", headers={"host": f"evil.example:{own.rest_port}"})
    assert other.status == 421


def test_grpc_through_envoy_checks_the_authority(stack: Stack) -> None:
    front_door = f"127.0.0.1:{stack.rest_port}"
    served = subprocess.run([GRPCURL, "-plaintext", front_door, "grpc.health.v1.Health/Check"],
                            capture_output=True, text=True, timeout=30, check=False)
    assert served.returncode == 0, served.stderr
    refused = subprocess.run([GRPCURL, "-plaintext", "-authority",
                              f"evil.example:{stack.rest_port}", front_door,
                              "grpc.health.v1.Health/Check"],
                             capture_output=True, text=True, timeout=30, check=False)
    assert refused.returncode != 0
    assert "does not serve that Host" in refused.stderr


# ---- Origin and Sec-Fetch-Site: cross-site requests -----------------------------------------

@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://localhost:3000",
                                    "http://127.0.0.1"])
def test_a_foreign_origin_is_403_and_creates_nothing(stack: Stack, origin: str) -> None:
    task_id = unique("csrf")
    response = create(stack, task_id, {"origin": origin})
    assert_refused(response, 403, PERMISSION_DENIED)
    assert boot_state_status(stack, task_id) == 404


def test_a_foreign_origin_reads_nothing(stack: Stack) -> None:
    session = stack.api.new_session()
    response = stack.api.request("GET", f"{CREATE}/{session['id']}",
                                 headers={"origin": "http://evil.example"})
    assert_refused(response, 403, PERMISSION_DENIED)


def test_a_cross_site_request_is_403(stack: Stack) -> None:
    task_id = unique("cross-site")
    response = create(stack, task_id, {"sec-fetch-site": "cross-site"})
    assert_refused(response, 403, PERMISSION_DENIED)
    assert boot_state_status(stack, task_id) == 404
    session = stack.api.new_session()
    embedded = stack.api.request("GET", f"{CREATE}/{session['id']}/messages",
                                 headers={"sec-fetch-site": "cross-site",
                                          "sec-fetch-mode": "no-cors"})
    assert_refused(embedded, 403, PERMISSION_DENIED)
    script = stack.api.request("GET", "/app.js", headers={"sec-fetch-site": "cross-site",
                                                           "sec-fetch-mode": "no-cors"})
    assert script.status == 403


def test_a_link_from_another_site_opens_the_page_but_not_the_api(stack: Stack) -> None:
    navigate = {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}
    assert stack.api.request("GET", "/sessions/ses_x", headers=navigate).status == 200
    session = stack.api.new_session()
    api = stack.api.request("GET", f"{CREATE}/{session['id']}", headers=navigate)
    assert_refused(api, 403, PERMISSION_DENIED)


@pytest.mark.parametrize("content_type", ["text/plain", "text/plain;charset=UTF-8",
                                          "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "Text/Plain"])
def test_a_browser_form_or_text_body_is_415_even_from_the_page_itself(
        stack: Stack, content_type: str) -> None:
    task_id = unique("text-plain")
    response = create(stack, task_id, {"origin": stack.rest_url, "content-type": content_type})
    assert_refused(response, 415, INVALID_ARGUMENT)
    assert boot_state_status(stack, task_id) == 404


def test_the_page_s_own_json_request_is_served(stack: Stack) -> None:
    headers = {"origin": stack.rest_url, "sec-fetch-site": "same-origin"}
    assert create(stack, unique("same-origin"), headers).status == 200


def test_curl_d_without_an_origin_still_works(stack: Stack) -> None:
    """The README's example: curl -d sends `application/x-www-form-urlencoded`."""
    task_id = unique("curl")
    done = subprocess.run(
        ["curl", "-s", "-X", "POST", f"{stack.rest_url}{CREATE}",
         "-d", json.dumps({"task_id": task_id})],
        capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(done.stdout)["session"]["task_id"] == task_id


@pytest.mark.slow
def test_a_configured_cors_origin_may_call_cross_site(stack_with: StackWith) -> None:
    origin = "http://dashboard.example"
    own = stack_with(SHELLEXEC_CORS_ORIGINS=origin)
    headers = {"origin": origin, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors"}
    response = create(own, unique("cors"), headers)
    assert response.status == 200, response.body
    assert response.headers["access-control-allow-origin"] == origin
    assert_refused(create(own, unique("cors"), {"origin": "http://evil.example"}), 403,
                   PERMISSION_DENIED)


@pytest.mark.slow
def test_a_configured_cors_origin_may_send_its_token(stack_with: StackWith) -> None:
    """With authentication on, the preflight allows `authorization`, and the token then
    passes the front door's check from that origin."""
    origin = "http://dashboard.example"
    own = stack_with(SHELLEXEC_CORS_ORIGINS=origin, SHELLEXEC_AUTH="on")
    preflight = own.api.request("OPTIONS", CREATE, headers={
        "origin": origin, "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type"})
    assert preflight.status == 200, preflight.body
    lowered = {key.lower(): value for key, value in preflight.headers.items()}
    assert "authorization" in lowered["access-control-allow-headers"].split(", ")
    token = own.create_token(unique("dashboard"), "ingest")
    headers = {"origin": origin, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors"}
    response = own.api_as(token).request("POST", CREATE, {"task_id": unique("cors")},
                                         headers=headers)
    assert response.status == 200, response.body
    assert response.headers["access-control-allow-origin"] == origin


# ---- security headers -------------------------------------------------------------------

def test_every_answer_carries_the_security_headers(stack: Stack) -> None:
    session = stack.api.new_session()
    answers = {
        "page": stack.api.request("GET", "/"),
        "script": stack.api.request("GET", "/app.js"),
        "api": stack.api.request("GET", f"{CREATE}/{session['id']}"),
        "server error": stack.api.request("GET", f"{CREATE}/ses_missing"),
        "envoy error": stack.api.request("GET", "/api/v1/nope"),
        "refusal": create(stack, unique("x"), {"origin": "http://evil.example"}),
    }
    for name, answer in answers.items():
        lowered = {key.lower(): value for key, value in answer.headers.items()}
        for header, value in SECURITY_HEADERS.items():
            assert lowered.get(header) == value, (name, header)
    policy = answers["page"].headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "'unsafe-inline'" not in policy


def test_the_page_has_no_inline_script_or_style() -> None:
    """The policy allows only scripts and styles from files; the page must need no more."""
    html = (WEB / "index.html").read_text()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.DOTALL)
    assert scripts
    assert all(" src=" in attributes and not body.strip() for attributes, body in scripts)
    assert not re.search(r"<style|\sstyle=|\son[a-z]+=|javascript:", html, re.IGNORECASE)


# ---- Envoy's admin interface ----------------------------------------------------------------

def listening_tcp_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on, read from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_envoy_listens_on_the_front_door_only(stack: Stack) -> None:
    assert stack.envoy is not None
    assert listening_tcp_ports(stack.envoy.pid) == {stack.rest_port}


def test_the_admin_socket_is_private(stack: Stack) -> None:
    socket_mode = stack.admin_socket.stat().st_mode
    assert stat.S_ISSOCK(socket_mode)
    assert stat.S_IMODE(socket_mode) & 0o077 == 0
    assert stat.S_IMODE(stack.admin_socket.parent.stat().st_mode) == 0o700


def test_a_cross_origin_form_post_to_quitquitquit_leaves_envoy_running(stack: Stack) -> None:
    form = {"origin": "http://evil.example", "sec-fetch-site": "cross-site",
            "content-type": "application/x-www-form-urlencoded"}
    response = stack.api.request("POST", "/quitquitquit", raw=b"", headers=form)
    assert response.status == 403
    assert stack.api.request("POST", "/quitquitquit", raw=b"").status == 404
    assert stack.envoy is not None
    assert stack.envoy.poll() is None
    assert stack.api.request("GET", "/").status == 200
