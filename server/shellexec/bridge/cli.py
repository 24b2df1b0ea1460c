"""`shellexec bridge`: run an ACP agent on one prompt and record its session in shellexec.

    shellexec bridge [options] (--prompt TEXT | --prompt-file FILE) -- AGENT_COMMAND [ARGS...]

Everything after `--` is the agent command, passed as is. stdout carries exactly one JSON line
once the turn is recorded: {"session_id", "turn_id", "stop_reason", "url"}; the log (and the
agent's stderr, prefixed `[agent] `) goes to stderr.

exit status:
  0        the prompt ended and the turn is recorded
  1        the agent failed: it did not start, failed the ACP handshake or the prompt, or died
  2        usage error, including a --task-id or --agent the service refuses
  3        the service could not record the session: unreachable for longer than
           --retry-for, the update buffer filled up, or a definite refusal
  130/143  SIGINT/SIGTERM: the agent was cancelled and the turn recorded as cancelled

See docs/bridge.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from shellexec.bridge.environment import validate_names
from shellexec.bridge.errors import BridgeError, UsageError
from shellexec.bridge.forwarder import DEFAULT_MAX_BYTES, DEFAULT_MAX_UPDATES, BufferLimits
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
from shellexec.bridge.run import BridgeRun, RunResult
from shellexec.bridge.signals import Signals
from shellexec.client._channel import pem_certificates
from shellexec.rules import TASK_ID_RULE, agent_problem, task_id_problem

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
                        default=os.environ.get("SHELLEXEC_GRPC_ADDRESS", DEFAULT_SERVER),
                        help="the service's gRPC HOST:PORT (default: $SHELLEXEC_GRPC_ADDRESS "
                             f"or {DEFAULT_SERVER})")
    parser.add_argument("--token", metavar="TOKEN",
                        default=os.environ.get("SHELLEXEC_TOKEN", ""),
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
    parser.add_argument("--web-url", metavar="URL", default=_default_web_url(os.environ),
                        help="the web page's base URL (default: $SHELLEXEC_WEB_URL, else "
                             "http://127.0.0.1:$SHELLEXEC_REST_PORT, else "
                             f"{DEFAULT_WEB_URL})")
    _add_policy_arguments(parser)
    return parser


def _default_web_url(env: Mapping[str, str]) -> str:
    """The page's base URL when --web-url is not given: a service whose REST port was moved
    serves its page there, not on 8080."""
    if url := env.get("SHELLEXEC_WEB_URL", "").strip():
        return url
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
        prompt = sys.stdin.read()
    else:
        try:
            prompt = Path(args.prompt_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"cannot read --prompt-file: {error}") from None
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def _positive(name: str, value: float) -> float:
    if value <= 0:
        raise UsageError(f"{name} must be positive")
    return value


def _task_id(args: argparse.Namespace) -> str:
    """--task-id, checked by the service's own rule: a refusal must come before the agent
    starts, not after it has begun working."""
    if args.task_id is None:
        return f"bridge-{uuid.uuid4().hex[:12]}"
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
    return BridgeOptions(
        command=command, prompt=_read_prompt(args), server=args.server, token=args.token,
        tls=_tls(args), task_id=_task_id(args), cwd=cwd,
        agent=_agent(args, command), web_url=args.web_url, permission=permission,
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


def _configure_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("shellexec bridge: %(message)s"))
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
    line = {"session_id": result.turn.session_id, "turn_id": result.turn.turn_id,
            "stop_reason": result.stop_reason, "url": options.session_url(result.turn.session_id)}
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


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
    try:
        options, verbose = parse(argv)
    except UsageError as error:
        sys.stderr.write(f"usage: {USAGE}\nshellexec bridge: error: {error}\n")
        return error.exit_code
    except SystemExit as exit_:  # argparse: --help (0) or a bad option (2, already printed)
        return int(exit_.code or 0)
    _configure_logging(verbose)
    close_to_inspection()  # before the agent exists: it must never see this process's /proc
    return asyncio.run(_run(options))
