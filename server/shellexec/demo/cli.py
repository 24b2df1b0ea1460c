"""`python -m shellexec.demo` (what `make demo` runs).

Finds the service on SHELLEXEC_REST_PORT (default 8080) or starts `shellexec up`, plays a
scripted session with realistic payloads from several agents through the public REST API,
and prints the address of its chat page. Open the address while it plays to watch the
commands run. A service the demo started keeps running until Ctrl-C, then stops cleanly.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from http import HTTPStatus
from types import FrameType

from shellexec.app.settings import Settings
from shellexec.demo import service
from shellexec.demo.player import Player
from shellexec.demo.rest import RestApi, RestError
from shellexec.demo.script import demo_script
from shellexec.demo.steps import Pause

AGENT = "demo"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m shellexec.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pace", type=float, default=1.0,
                        help="scale the pauses between updates (0 plays instantly)")
    parser.add_argument("--task", default="", help="task id (default: demo-<time>)")
    parser.add_argument("--exit", action="store_true",
                        help="stop a service the demo started as soon as the script ends")
    return parser.parse_args(argv)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    # Ctrl-C and SIGTERM both end the demo through KeyboardInterrupt (even when started in
    # the background, where SIGINT would otherwise be ignored).
    previous = (signal.signal(signal.SIGINT, signal.default_int_handler),
                signal.signal(signal.SIGTERM, _interrupt))
    try:
        return _demo(args)
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])


def _demo(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    print(f"Looking for shellexec on {service.front_door_url(settings)} ...", flush=True)
    try:
        running = service.ensure(settings)
    except service.ServiceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    try:
        return _run(running, args)
    except KeyboardInterrupt:
        return 130
    except RestError as error:
        print(f"error: {error}", file=sys.stderr)
        if error.response is not None and error.response.status == HTTPStatus.UNAUTHORIZED:
            print("The service has authentication on: set SHELLEXEC_TOKEN to a token with "
                  "the ingest scope (`.venv/bin/shellexec token create --name demo --scope "
                  "ingest`).", file=sys.stderr)
        return 1
    finally:
        if running.started_here:
            print("Stopping the service the demo started ...", flush=True)
            running.stop()
            print("Stopped.", flush=True)


def _run(running: service.Service, args: argparse.Namespace) -> int:
    if running.started_here:
        print(f"Started `shellexec up` (log: {service.LOG}).", flush=True)
    else:
        print("Using the service that is already running.", flush=True)
    task = args.task or time.strftime("demo-%Y%m%d-%H%M%S")
    # A service with authentication on needs a token with the ingest scope.
    token = os.environ.get("SHELLEXEC_TOKEN", "")
    player = Player(RestApi(running.url, token=token), pace=max(args.pace, 0.0))
    session_id = player.create(task, AGENT)
    url = f"{running.url}/?session={session_id}"
    print(f"\nOpen the chat:  {url}\n(also {running.url}/?task={task})\n", flush=True)
    steps = demo_script()
    seconds = sum(step.seconds for step in steps if isinstance(step, Pause)) * player.pace
    print(f"Playing the session (about {seconds:.0f} s) ...", flush=True)
    player.play(session_id, steps)
    print(f"Done. The whole session is at:\n\n  {url}\n", flush=True)
    if not running.started_here or args.exit:
        return 0
    print("The demo started the service and keeps it running: press Ctrl-C to stop it.",
          flush=True)
    while running.running():
        time.sleep(0.5)
    print("error: the service stopped on its own; see " + str(service.LOG), file=sys.stderr)
    return 1
