"""The Host values and origins the rendered Envoy configuration allows, and the admin socket's
private folder (the behaviour through the real Envoy: tests/service/test_browser_boundary.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellexec.app import admin_socket, envoy
from shellexec.app.browser_boundary import AllowedHostError, allowed_hosts, allowed_origins
from shellexec.app.settings import Settings


def test_the_default_hosts_are_the_loopback_names_with_the_port() -> None:
    assert allowed_hosts("127.0.0.1", 8080, ()) == [
        "127.0.0.1:8080", "localhost:8080", "[::1]:8080"]


def test_a_configured_host_without_a_port_gets_the_listener_s() -> None:
    hosts = allowed_hosts("0.0.0.0", 8080, ("Shellexec.Internal", "10.0.0.5:9000"))
    assert hosts[3:] == ["shellexec.internal:8080", "10.0.0.5:9000"]


def test_a_specific_listener_address_is_allowed_and_default_ports_may_be_left_out() -> None:
    assert allowed_hosts("192.168.1.5", 80, ())[-2:] == ["192.168.1.5:80", "192.168.1.5"]


@pytest.mark.parametrize("value", ["*", "*.example.com", "evil.example/x", "a b", "host:port"])
def test_a_configured_host_must_be_a_host(value: str) -> None:
    with pytest.raises(AllowedHostError, match="SHELLEXEC_ALLOWED_HOSTS"):
        allowed_hosts("127.0.0.1", 8080, (value,))


def test_the_page_s_origins_come_first_then_the_cors_origins() -> None:
    assert allowed_origins(["localhost:8080"], ["http://dash.example"]) == [
        "http://localhost:8080", "https://localhost:8080", "http://dash.example"]


def test_the_rendered_admin_interface_is_a_unix_socket_owner_only() -> None:
    rendered = envoy.render(Settings(admin_socket="/run/x/admin.sock"), 50051)
    admin = rendered.split("\nadmin:\n", 1)[1].splitlines()[:2]
    assert admin == ["  address:", f'    pipe: {{path: "/run/x/admin.sock", mode: {0o600}}}']
    assert rendered.count("socket_address") == 2  # the front door and the gRPC server only


def test_the_admin_socket_folder_is_made_private(tmp_path: Path) -> None:
    socket = tmp_path / "run" / "envoy" / "admin.sock"
    admin_socket.prepare(socket)
    assert socket.parent.stat().st_mode & 0o777 == 0o700


def test_an_admin_socket_folder_others_can_enter_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with pytest.raises(admin_socket.AdminSocketError, match="private"):
        admin_socket.prepare(shared / "admin.sock")


def test_an_admin_socket_path_too_long_for_a_socket_is_refused(tmp_path: Path) -> None:
    with pytest.raises(admin_socket.AdminSocketError, match="SHELLEXEC_ADMIN_SOCKET"):
        admin_socket.prepare(tmp_path / ("x" * 120) / "admin.sock")


def test_an_ipv6_listener_address_is_allowed_in_brackets() -> None:
    assert allowed_hosts("fd00::5", 8080, ())[-1] == "[fd00::5]:8080"
