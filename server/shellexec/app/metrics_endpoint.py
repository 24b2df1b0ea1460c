"""Serving a registry's metrics over HTTP on a loopback port of their own.

Only `GET /metrics` (and `HEAD`) answers with the Prometheus text format; any other path is
404, any other method 405, and a Host that is not a loopback name with the port 421 (a page
on a name rebound to 127.0.0.1 must not read it). The endpoint runs on a thread of its own
(the standard library's WSGI server, one thread per scrape), so a slow scraper never holds
the event loop; the metrics it reads are thread-safe, and the callbacks behind the gauges
read an int or stat a file. It never goes through the public listener (ADR 0061).

Any local process can connect, token or not, so what a connection may hold is bounded: at
most MAX_CONNECTIONS are served at once (another is closed at once), and each is closed
CONNECTION_SECONDS after it was accepted, whatever it sends (a client trickling a byte now
and then held its slot for as long as it liked).
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable, Collection, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from shellexec.app.browser_boundary import loopback_hosts
from shellexec.app.ports import PortInUseError

METRICS_HOST = "127.0.0.1"
METRICS_PATH = "/metrics"
_READ_METHODS = ("GET", "HEAD")
# A scraper needs one connection at a time; a few more leave room for a probe and a person.
MAX_CONNECTIONS = 8
# A scrape's request arrives at once and its answer takes milliseconds: a connection still
# open this long after it was accepted is not a scraper's.
CONNECTION_SECONDS = 10.0

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    """A thread per connection, for at most MAX_CONNECTIONS connections at once: each held
    one costs a thread, and a local process could otherwise open thousands."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread started: nobody else releases the slot
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        # Shutting the socket down ends whatever read or write the handler is blocked in.
        deadline = threading.Timer(CONNECTION_SECONDS, _shut, (request,))
        deadline.daemon = True
        deadline.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            deadline.cancel()
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection cut, timed out or shut at its deadline is the client's doing: no
        traceback on the server's log for it (any local process could fill the log)."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _shut(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        connection.shutdown(socket.SHUT_RDWR)


class _QuietHandler(WSGIRequestHandler):
    timeout = CONNECTION_SECONDS

    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not worth a log line each."""


def _refusal(status: str, start_response: StartResponse) -> Iterable[bytes]:
    body = f"{status}\n".encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"),
                            ("Content-Length", str(len(body)))])
    return [body]


def metrics_app(registry: CollectorRegistry, hosts: Collection[str]) -> WsgiApp:
    """The WSGI application serving `registry` at METRICS_PATH to requests naming one of
    `hosts`, and refusing the rest."""
    exposition = make_wsgi_app(registry)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("HTTP_HOST") not in hosts:
            return _refusal("421 Misdirected Request", start_response)
        if environ.get("PATH_INFO") != METRICS_PATH:
            return _refusal("404 Not Found", start_response)
        method = environ.get("REQUEST_METHOD")
        if method not in _READ_METHODS:
            return _refusal("405 Method Not Allowed", start_response)
        # The client library answers only GET: a HEAD gets GET's headers and no body.
        result: Iterable[bytes] = exposition({**environ, "REQUEST_METHOD": "GET"},
                                             start_response)
        return [] if method == "HEAD" else result

    return app


class MetricsEndpoint:
    """`registry` served on METRICS_HOST:`port` by a thread, from `start()` to `stop()`."""

    def __init__(self, registry: CollectorRegistry, port: int) -> None:
        try:
            self._server = make_server(METRICS_HOST, port,
                                       metrics_app(registry, loopback_hosts(port)),
                                       server_class=_ThreadingServer,
                                       handler_class=_QuietHandler)
        except OSError as error:
            raise PortInUseError(
                f"cannot serve metrics on {METRICS_HOST}:{port}: the port is in use (set "
                "SHELLEXEC_METRICS_PORT to choose another, 0 turns metrics off)") from error
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name="metrics-endpoint", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{METRICS_HOST}:{self._server.server_port}{METRICS_PATH}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() waits for a serve_forever that never ran
            self._server.shutdown()
        self._server.server_close()
