"""`shellexec bridge`: run an ACP agent on one prompt and record its session in shellexec.

    shellexec bridge [options] (--prompt TEXT | --prompt-file FILE) -- AGENT_COMMAND [ARGS...]

Everything after `--` is the agent command, passed as is. stdout carries exactly one JSON line
once the turn is recorded: {"session_id", "turn_id", "stop_reason", "url"} (if stdout cannot
take it, stderr names the session; the exit status is the same); the log (and the agent's
stderr, prefixed `[agent] ` and escaped) goes to stderr.

exit status:
  0        the prompt ended and the turn is recorded
  1        the agent failed: it did not start, failed the ACP handshake or the prompt, or died
  2        usage error, including a --task-id, --agent or token the service refuses and a
           TLS certificate the bridge does not trust
  3        the service could not record the session: unreachable for longer than
           --retry-for, the update buffer filled up, or a definite refusal
  130/143  SIGINT/SIGTERM: the agent was cancelled and the turn recorded as cancelled
  129      SIGHUP (the terminal closed, an ssh connection dropped): the same

See docs/bridge.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from shellexec.bridge.environment import validate_names
from shellexec.bridge.errors import BridgeError, UsageError
from shellexec.bridge.forwarder import DEFAULT_MAX_BYTES, DEFAULT_MAX_UPDATES, BufferLimits
from shellexec.bridge.log_text import escaped
from shellexec.bridge.naming import agent_name
from shellexec.bridge.options import (
    DEFAULT_CANCEL_GRACE_SECONDS,
    DEFAULT_RETRY_SECONDS,
    DEFAULT_SERVER,
    DEFAULT_TERMINAL_TIMEOUT_SECONDS,
    DEFAULT_WEB_URL,
    BridgeOptions,
)
from shellexec.bridge.permissions import DEFAULT_ANSWER, PERMISSION_ANSWERS, PermissionAnswer
from shellexec.bridge.process_guard import close_to_inspection
from shellexec.bridge.retry import RetryPolicy
from shellexec.bridge.run import BridgeRun, RunResult, new_task_id
from shellexec.bridge.service_options import ADDRESS_FORM, address_problem, token_problem
from shellexec.bridge.signals import Signals
from shellexec.bridge.stdio import Stderr, open_closed_descriptors, print_line
from shellexec.client._channel import pem_certificates
from shellexec.rules import TASK_ID_RULE, agent_problem, task_id_problem
from shellexec.rules.limits import MAX_BEARER_TOKEN_CHARS

log = logging.getLogger("shellexec.bridge")

USAGE = ("shellexec bridge [options] (--prompt TEXT | --prompt-file FILE) "
         "-- AGENT_COMMAND [ARGS...]")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shellexec bridge", usage=USAGE, description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    prompt = parser.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", metavar="TEXT", help="the prompt text")
    prompt.add_argument("--prompt-file", type=Path, metavar="FILE",
                        help="read the prompt from FILE (- = stdin)")
    parser.add_argument("--server", metavar="HOST:PORT",
                        help="the service's gRPC HOST:PORT (default: $SHELLEXEC_GRPC_ADDRESS "
                             f"or {DEFAULT_SERVER})")
    parser.add_argument("--token", metavar="TOKEN",
                        help="a bearer token with the ingest scope, when the service requires "
                             "one (default: $SHELLEXEC_TOKEN; prefer it: arguments show in ps)")
    parser.add_argument("--tls", action="store_true",
                        help="speak TLS to --server (a front door with a certificate), "
                             "checked against the system's trusted certificates")
    parser.add_argument("--tls-ca", type=Path, metavar="FILE",
                        help="speak TLS to --server, checked against the PEM certificates in "
                             "FILE alone (e.g. the front door's self-signed certificate)")
    parser.add_argument("--task-id", metavar="ID",
                        help="the task to record under (default: a new one)")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), metavar="DIR",
                        help="the agent's working directory (default: the current one)")
    parser.add_argument("--agent", metavar="NAME",
                        help="the agent name shown in the chat (default: derived from the "
                             "command, e.g. claude, codex)")
    parser.add_argument("--web-url", metavar="URL",
                        help="the web page's base URL (default: $SHELLEXEC_WEB_URL; else, with "
                             "--tls or --tls-ca, https://HOST:PORT of --server; else "
                             "http://127.0.0.1:$SHELLEXEC_REST_PORT; else "
                             f"{DEFAULT_WEB_URL})")
    _add_policy_arguments(parser)
    return parser


def _web_url(given: str | None, env: Mapping[str, str], server: str, tls: bool | bytes
             ) -> str:
    """The page's base URL when --web-url is not given: a TLS front door serves its page on
    the port it serves gRPC on, over HTTPS; a service whose REST port was moved serves its
    page there, not on 8080."""
    if given is not None:
        return given
    if url := env.get("SHELLEXEC_WEB_URL", "").strip():
        return url
    if tls is not False:
        return f"https://{server}"
    port = env.get("SHELLEXEC_REST_PORT", "").strip()
    if port.isascii() and port.isdigit() and 0 < int(port) <= 65535:
        return f"http://127.0.0.1:{int(port)}"
    return DEFAULT_WEB_URL


def _add_policy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--permission", choices=PERMISSION_ANSWERS, default=DEFAULT_ANSWER,
                        metavar="ANSWER",
                        help="the answer to session/request_permission: "
                             f"{', '.join(PERMISSION_ANSWERS)} (default: %(default)s)")
    parser.add_argument("--allow-fs-read", action="store_true",
                        help="serve fs/read_text_file inside --cwd (default: refused)")
    parser.add_argument("--allow-fs-write", action="store_true",
                        help="serve fs/write_text_file inside --cwd (default: refused)")
    parser.add_argument("--host-terminals", action="store_true",
                        help="run the agent's commands itself (ACP terminal/*), so their "
                             "output and exit codes are exact; NOT a sandbox (default: off)")
    parser.add_argument("--terminal-timeout", type=float,
                        default=DEFAULT_TERMINAL_TIMEOUT_SECONDS, metavar="SECONDS",
                        help="kill a hosted terminal's command after this long "
                             "(default: %(default)g)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME",
                        help="also pass this variable to the agent (repeatable)")
    parser.add_argument("--retry-for", type=float, default=DEFAULT_RETRY_SECONDS,
                        metavar="SECONDS", help="how long the service may be unreachable "
                                                "(default: %(default)g)")
    parser.add_argument("--cancel-grace", type=float, default=DEFAULT_CANCEL_GRACE_SECONDS,
                        metavar="SECONDS", help="how long a cancelled agent may take to end "
                                                "its prompt (default: %(default)g)")
    parser.add_argument("--max-buffered-updates", type=int, default=DEFAULT_MAX_UPDATES,
                        metavar="N", help="updates that may wait for the service "
                                          "(default: %(default)d)")
    parser.add_argument("--max-buffered-bytes", type=int, default=DEFAULT_MAX_BYTES,
                        metavar="N", help="bytes of memory that updates waiting for the "
                                          "service may hold (default: %(default)d)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")


def _split_command(argv: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
    """Options before the first `--`, the agent command after it (never parsed as ours)."""
    if "--" not in argv:
        return list(argv), ()
    at = list(argv).index("--")
    return list(argv[:at]), tuple(argv[at + 1:])


def _read_prompt(args: argparse.Namespace) -> str:
    if args.prompt is not None:
        prompt = str(args.prompt)
    elif str(args.prompt_file) == "-":
        prompt = _read_stdin()
    else:
        try:
            prompt = Path(args.prompt_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read --prompt-file: {error}") from None
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def _read_stdin() -> str:
    if sys.stdin is None:  # closed when the bridge started (`<&-`)
        raise UsageError("--prompt-file -: stdin is closed; there is no prompt to read")
    try:
        return sys.stdin.read()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read --prompt-file - (stdin): {error}") from None


def _positive(name: str, value: float) -> float:
    """A positive, finite number: `nan` passed `value <= 0`, and made a timer fire at once
    or a retry window never end."""
    if not math.isfinite(value):
        raise UsageError(f"{name} must be a finite number, not {value}")
    if value <= 0:
        raise UsageError(f"{name} must be positive")
    return value


def _server(args: argparse.Namespace, env: Mapping[str, str]) -> str:
    """--server, else $SHELLEXEC_GRPC_ADDRESS, else the default; checked before the agent
    starts (`service_options`). Set but empty, the variable is an error, as for the
    service's own `serve`."""
    if args.server is not None:
        name, server = "--server", str(args.server)
    elif "SHELLEXEC_GRPC_ADDRESS" in env:
        name, server = "SHELLEXEC_GRPC_ADDRESS", env["SHELLEXEC_GRPC_ADDRESS"]
        if not server.strip():
            raise UsageError("SHELLEXEC_GRPC_ADDRESS is set but empty: unset it for the "
                             f"default {DEFAULT_SERVER}, or set it to {ADDRESS_FORM}")
    else:
        return DEFAULT_SERVER
    if (problem := address_problem(server)) is not None:
        raise UsageError(f"{name} must be {ADDRESS_FORM} ({problem}); got {server[:80]!r}")
    return server


def _token(args: argparse.Namespace, env: Mapping[str, str]) -> str:
    """--token, else $SHELLEXEC_TOKEN (empty: none), checked before the agent starts; the
    message never shows the token."""
    name, token = (("--token", str(args.token)) if args.token is not None
                   else ("SHELLEXEC_TOKEN", env.get("SHELLEXEC_TOKEN", "")))
    if (problem := token_problem(token)) is not None:
        cause = (" (read from a file with Windows line endings?)"
                 if problem.startswith("ends with a carriage return") else "")
        raise UsageError(f"{name} {problem}{cause}: a token is at most "
                         f"{MAX_BEARER_TOKEN_CHARS} visible ASCII characters")
    return token


def _task_id(args: argparse.Namespace) -> str:
    """--task-id, checked by the service's own rule: a refusal must come before the agent
    starts, not after it has begun working."""
    if args.task_id is None:
        return new_task_id()
    task_id = str(args.task_id)
    if task_id_problem(task_id) is not None:
        raise UsageError(f"--task-id must be {TASK_ID_RULE}; got {task_id!r}")
    return task_id


def _tls(args: argparse.Namespace) -> bool | bytes:
    """--tls, or the certificates of --tls-ca, read once: the file is checked now (found
    wanting after the agent has started, every publish would fail), and a reconnect does not
    read it again."""
    if args.tls_ca is None:
        return bool(args.tls)
    try:
        return pem_certificates(args.tls_ca)
    except OSError as error:
        raise UsageError(f"cannot read --tls-ca: {error}") from None
    except ValueError as refused:
        raise UsageError(f"--tls-ca {refused}") from None


def _agent(args: argparse.Namespace, command: tuple[str, ...]) -> str:
    agent = str(args.agent or "")
    if (problem := agent_problem(agent)) is not None:
        raise UsageError(f"--agent {problem}")
    return agent or agent_name(command)


def _options(args: argparse.Namespace, command: tuple[str, ...]) -> BridgeOptions:
    cwd = Path(args.cwd).resolve()
    if not cwd.is_dir():
        raise UsageError(f"--cwd is not a directory: {cwd}")
    permission: PermissionAnswer = args.permission
    server, tls = _server(args, os.environ), _tls(args)
    return BridgeOptions(
        command=command, prompt=_read_prompt(args), server=server,
        token=_token(args, os.environ), tls=tls, task_id=_task_id(args), cwd=cwd,
        agent=_agent(args, command), web_url=_web_url(args.web_url, os.environ, server, tls),
        permission=permission,
        allow_fs_read=args.allow_fs_read, allow_fs_write=args.allow_fs_write,
        env_names=validate_names(args.env),
        retry=RetryPolicy(window=_positive("--retry-for", args.retry_for)),
        limits=BufferLimits(
            max_updates=int(_positive("--max-buffered-updates", args.max_buffered_updates)),
            max_bytes=int(_positive("--max-buffered-bytes", args.max_buffered_bytes))),
        cancel_grace=_positive("--cancel-grace", args.cancel_grace),
        host_terminals=args.host_terminals,
        terminal_timeout=_positive("--terminal-timeout", args.terminal_timeout))


def parse(argv: Sequence[str]) -> tuple[BridgeOptions, bool]:
    """The options of a run and whether to log verbosely; raises UsageError."""
    ours, command = _split_command(argv)
    args = _parser().parse_args(ours)
    if not command:
        raise UsageError("missing `-- AGENT_COMMAND [ARGS...]` after the options")
    return _options(args, command), bool(args.verbose)


class _OneLine(logging.Formatter):
    """Each message escaped (`log_text`): whatever text of the agent's reached it, a log line
    stays one line, with no control character that could rewrite a terminal. A traceback
    (the SDK's, or `-v`'s) keeps its lines, each escaped and indented, so that none reads as
    a line of the bridge's even if an exception's message holds a newline."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        return escaped(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:  # noqa: N802 (logging's name)
        return _indented(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 (logging's name)
        return _indented(super().formatStack(stack_info))


def _indented(text: str) -> str:
    return "\n".join(f"  {escaped(line)}" for line in text.split("\n"))


class _StderrHandler(logging.Handler):
    """Writes each record, a line, to the bridge's stderr, which may be lost (`stdio`)."""

    def __init__(self, stderr: Stderr) -> None:
        super().__init__()
        self._stderr = stderr

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a malformed record: logging's own way of saying so
            self.handleError(record)
            return
        self._stderr.write((line + "\n").encode("utf-8", "backslashreplace"))


def _configure_logging(verbose: bool, stderr: Stderr) -> None:
    handler = _StderrHandler(stderr)
    handler.setFormatter(_OneLine("shellexec bridge: %(message)s"))
    handler.addFilter(_drop_sdk_update_errors)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    log.setLevel(logging.DEBUG if verbose else logging.INFO)


def _drop_sdk_update_errors(record: logging.LogRecord) -> bool:
    """The SDK logs a traceback for each update type its models do not know; the bridge
    forwards those raw from the stream observer, so the traceback is noise."""
    return not (record.msg == "Unhandled error while handling notification method=%s"
                and record.args == ("session/update",))


def _print_result(result: RunResult, options: BridgeOptions) -> None:
    """The JSON line; when stdout cannot take it (closed, its reader gone), the log says so
    and names the session, and the exit status stays the run's: the turn is recorded."""
    url = options.session_url(result.turn.session_id)
    line = {"session_id": result.turn.session_id, "turn_id": result.turn.turn_id,
            "stop_reason": result.stop_reason, "url": url}
    failure = print_line(json.dumps(line))
    if failure is not None:
        log.error("cannot print the result line (%s); the turn is recorded: session %s (%s)",
                  failure, result.turn.session_id, url)


async def _run(options: BridgeOptions) -> int:
    signals = Signals()
    signals.install()
    try:
        result = await BridgeRun(options, signals).execute()
    except BridgeError as error:
        log.error("%s", error)
        return error.exit_code
    finally:
        signals.uninstall()
    _print_result(result, options)
    if result.error is not None:
        log.error("%s", result.error)
    return result.exit_code


def main(argv: list[str]) -> int:
    """Runs `shellexec bridge ARGV`; returns the exit status (see the module docstring)."""
    open_closed_descriptors()  # before anything opens a file or a socket (`stdio`)
    # An ignored SIGCHLD survives exec, and with it the kernel reaps every child at its exit:
    # the bridge could no longer keep an exited guard's pid its own (`child_exit`), nor tell
    # the agent's exit status. The bridge's children are its own to reap.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    stderr = Stderr.of_process()
    try:
        options, verbose = parse(argv)
    except UsageError as error:
        stderr.write(f"usage: {USAGE}\nshellexec bridge: error: {error}\n".encode(
            "utf-8", "backslashreplace"))
        return error.exit_code
    except SystemExit as exit_:  # argparse: --help (0) or a bad option (2, already printed)
        return int(exit_.code or 0)
    _configure_logging(verbose, stderr)
    close_to_inspection()  # before the agent exists: it must never see this process's /proc
    return asyncio.run(_run(options))
