"""The demo session: an agent chases a failing CI job through commands reported the way
Codex, Claude, OpenCode, Auggie and OMP report them. Every kind of row the page draws shows
up once: a command too long for one line, a command streaming coloured test output (as in a
PTY) for a few seconds and then failing, a progress bar redrawn with carriage returns, failure
behind an ACP `completed`, an unknown exit code, a success without output, a 300 KiB output
that is truncated, a command cancelled when the turn ends, and agent replies in Markdown."""

from __future__ import annotations

from shellexec.demo.shapes import (
    auggie,
    claude_terminal,
    codex_rust,
    codex_ts_stream,
    omp,
    opencode,
    text,
)
from shellexec.demo.steps import EndTurn, Pause, StartTurn, Step
from shellexec.vocabulary import ACP_STOP_CANCELLED, AUTHOR_AGENT, AUTHOR_USER

REPO = "/home/dev/shop-api"
LONG_COMMAND = (
    'docker run --rm --network host -v "$PWD":/workspace -w /workspace '
    "-e PYTHONDONTWRITEBYTECODE=1 -e PIP_DISABLE_PIP_VERSION_CHECK=1 -e TZ=Europe/Lisbon "
    "ghcr.io/example-shop/ci-images/python-3.11-bookworm-postgres-16:2026.11.29 "
    "bash -lc 'pip install --quiet -e .[dev] && python -m pytest tests/unit -q "
    "-p no:cacheprovider --junitxml=/workspace/build/reports/"
    "junit-unit-tests-europe-lisbon-timezone.xml'"
)
# pytest in a PTY (`--color=yes`): SGR colours and bold, as Codex's terminal captures them.
BOLD, RED, GREEN, YELLOW, RESET = "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"
PYTEST_STREAM = [
    f"{BOLD}============================= test session starts =============================="
    f"{RESET}\n",
    "platform linux -- Python 3.11.7, pytest-8.3.4\ncollected 27 items\n\n",
    f"tests/integration/test_catalog.py {GREEN}........{RESET}"
    f"                               {GREEN}[ 29%]{RESET}\n",
    f"tests/integration/test_cart.py {GREEN}.......{RESET}"
    f"                                   {GREEN}[ 55%]{RESET}\n",
    f"tests/integration/test_orders.py {GREEN}....{RESET}{RED}F{RESET}",
    f"\n\n{RED}=================================== FAILURES ==================================="
    f"{RESET}\n",
    f"{RED}{BOLD}_________________ test_order_cutoff_uses_store_timezone _________________"
    f"{RESET}\n\n"
    "    def test_order_cutoff_uses_store_timezone(store):\n"
    f">       assert cutoff(store, at=LATE_EVENING).date() == date(2026, 11, 29)\n"
    f"{BOLD}{RED}E       AssertionError: assert datetime.date(2026, 11, 30) =="
    f" datetime.date(2026, 11, 29){RESET}\n"
    f"\n{BOLD}{RED}src/shop/orders.py{RESET}:41: AssertionError\n",
    f"{YELLOW}=========================== short test summary info ============================"
    f"{RESET}\n"
    f"{RED}FAILED{RESET} tests/integration/test_orders.py::test_order_cutoff_uses_store_timezone\n"
    f"{RED}!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!"
    f"{RESET}\n"
    f"{RED}========================= {BOLD}1 failed{RESET}{RED}, {GREEN}19 passed{RESET}{RED}"
    f" in 4.12s ========================={RESET}\n",
]


def progress_bar(label: str, steps: int = 10) -> list[str]:
    """A progress bar redrawn in place with carriage returns, as package managers print it."""
    frames = []
    for step in range(steps + 1):
        done = "#" * (step * 3)
        frames.append(f"\r{label} [{done:<30}] {step * 100 // steps:3d}%")
    return [*frames[:-1], frames[-1] + "\n", "added 312 packages in 3s\n"]
GREP_OUTPUT = (
    "src/shop/orders.py:41:    cutoff = datetime.utcnow().replace(hour=18, minute=0)\n"
    "src/shop/reports.py:17:    day = datetime.now(timezone.utc).date()\n"
    "src/shop/clock.py:9:def now() -> datetime:  # always timezone.utc\n"
)
RUFF_OUTPUT = (
    "src/shop/orders.py:41:14: DTZ003 `datetime.datetime.utcnow()` used\n"
    "src/shop/reports.py:17:11: DTZ011 `datetime.date.today()` used\n"
    "Found 2 errors.\n"
)
GIT_LOG = (
    "4f2a9c1 orders: compute the cutoff once per request\n"
    "9b7e3d0 ci: run the unit tests in the Lisbon timezone\n"
    "1c5d8aa reports: daily totals per store\n"
)
DEV_SERVER = [
    "\n> shop-web@2.4.0 dev\n> vite --port 5173\n\n",
    "  VITE v5.4.2  ready in 412 ms\n\n  ➜  Local:   http://localhost:5173/\n",
    "  ➜  Network: use --host to expose\n",
]


MARKDOWN_SUMMARY = """Stopped. Here is what changed:

### Summary

- **Order cutoffs** and **daily reports** now use the store's timezone (`store.tz`).
- The fix is in `src/shop/orders.py` and `src/shop/reports.py`.

| suite | before | after |
| --- | ---: | ---: |
| unit | 27 passed | 27 passed |
| integration | 1 failed | 27 passed |

```python
cutoff = datetime.now(store.tz).replace(hour=18, minute=0)
```

See [PEP 495](https://peps.python.org/pep-0495/) for why local times need care."""


def nightly_log(size: int = 300 * 1024) -> list[str]:
    """About `size` bytes of a noisy job log, in 60 KiB chunks: more than the 256 KiB kept."""
    lines = []
    total = 0
    i = 0
    while total < size:
        level = "WARN" if i % 97 == 0 else "INFO"
        line = (f"2026-11-29T02:{i // 3600 % 60:02}:{i // 60 % 60:02}.{i % 1000:03}Z {level} "
                f"worker-{i % 6} order-sync batch={i:05} store=lisbon-{i % 12:02} rows=512 ok")
        lines.append(line + "\n")
        total += len(line) + 1
        i += 1
    lines.append("2026-11-29T03:00:00.000Z INFO nightly-integration finished: 0 errors\n")
    body = "".join(lines)
    step = 60 * 1024
    return [body[start:start + step] for start in range(0, len(body), step)]


def demo_script() -> list[Step]:
    """The whole session, in order."""
    return [
        StartTurn(),
        *text(AUTHOR_USER, "CI on main has been red since this morning. Can you find out why "
                      "and fix it?"),
        Pause(0.8),
        *text(AUTHOR_AGENT, "I'll start with the state of the working tree and recent history."),
        *codex_rust("call_Hs2mR9vB4nXq7TdK", "git status", REPO,
                    "On branch main\nYour branch is up to date with 'origin/main'.\n\n"
                    "nothing to commit, working tree clean\n", 0),
        *omp("toolu_01Gx7RkP2wQn5VbM", "git log --oneline -3", GIT_LOG),
        Pause(0.6),
        *text(AUTHOR_AGENT, "Clean tree. I'll run the unit tests exactly as CI does, in its "
                       "container and timezone."),
        *codex_ts_stream("call_Lf4sQ8xN2mVe7RtB", LONG_COMMAND, REPO,
                         ["........................... [100%]\n", "27 passed in 2.31s\n"],
                         every=0.7, exit_code=0),
        *text(AUTHOR_AGENT, "Unit tests pass. Now the integration suite, which is what fails "
                       "in CI."),
        *codex_ts_stream("call_Pt5yX2cN8rJv3HwQ", "pytest tests/integration -x -q", REPO,
                         PYTEST_STREAM, every=0.6, exit_code=2),
        *text(AUTHOR_AGENT, "`test_order_cutoff_uses_store_timezone` fails: the cutoff is "
                       "computed in **UTC**, not in the store's timezone. Looking for other "
                       "places that assume UTC."),
        *claude_terminal("toolu_01HnR8yQe5vJq2Zb3Kc7WmXa",
                         'grep -rn "utcnow\\|timezone.utc" src/', "Find UTC assumptions",
                         GREP_OUTPUT, 0),
        *opencode("call_7fKq2LmZ9sDx4WnB", "ruff check --select DTZ src/", REPO,
                  [RUFF_OUTPUT], exit_code=1),
        *text(AUTHOR_AGENT, "Two call sites. Applying a fix that uses the store's timezone."),
        *codex_rust("call_Qm3tV7kD2xYpL8wE", "git apply --index /tmp/store-timezone.patch",
                    REPO, "", 0),
        *auggie("toolu_vrtx_01Kd9XbQ2mNf7Lp3", "python -m pytest tests/integration -q", REPO,
                "...........................                               [100%]\n"
                "27 passed in 3.87s", 0),
        *text(AUTHOR_AGENT, "Green. The nightly job log should show whether the sync jobs hit "
                       "the same bug."),
        *codex_ts_stream("call_Zr8pN4cW1qTs6bHe", "cat build/logs/nightly-integration.log",
                         REPO, nightly_log(), every=0.3, exit_code=0),
        *text(AUTHOR_AGENT, "No errors there. Installing the web dependencies, then starting "
                       "the dev server so you can try checkout."),
        *codex_ts_stream("call_Nq7vB3xK9mDp2LcW", "npm ci --prefix web", REPO,
                         progress_bar("Installing"), every=0.3, exit_code=0),
        *codex_ts_stream("call_Wb6nT3fK8sLm1PcV", "npm run dev --prefix web", REPO,
                         DEV_SERVER, every=0.6, exit_code=None),
        Pause(1.5),
        EndTurn(ACP_STOP_CANCELLED),  # the user stopped the agent: the dev server is cancelled
        StartTurn(),
        *text(AUTHOR_USER, "Stop there, I've seen enough. Thanks!"),
        Pause(0.5),
        *text(AUTHOR_AGENT, MARKDOWN_SUMMARY),
        EndTurn(),
    ]
