"""The ACP bridge: runs an ACP agent over stdio and records its session in shellexec.

    shellexec bridge --prompt "fix the tests" -- npx @agentclientprotocol/claude-agent-acp

Modules, one job each:

- `cli`: arguments, logging, the JSON result line, exit statuses;
- `run`: one run from agent start to completed turn, cancellation on signals;
- `agent`: the agent process (own process group, stderr relay) and the ACP connection;
- `handlers`: what the bridge answers the agent (permissions, files; no terminal);
- `terminals`: hosted terminals; `guarded_command` runs each under `terminal_guard`, a
  standalone program (never imported) that ends everything the command started;
- `process_guard`: the bridge closed to inspection, the agent ending with the bridge;
- `child_exit`: child processes whose own exit is awaited apart from their pipes;
- `forwarder`: the ordered, sequenced, bounded buffer in front of PublishUpdate;
- `service`, `retry`: service calls retried with backoff inside a bounded window;
  `service_options` checks the address and token first, `tls_failures` tells a TLS failure
  from an outage;
- `stdio`: the bridge's own stdin, stdout and stderr, closed or their reader gone;
  `log_text`: the agent's text made fit for the log;
- `environment`, `naming`, `permissions`, `files`, `signals`, `options`, `errors`.

docs/bridge.md is the user's guide; docs/adr/0030 to 0035 record the decisions.
"""

from __future__ import annotations

from shellexec.bridge.cli import main
from shellexec.bridge.options import BridgeOptions
from shellexec.bridge.run import BridgeRun, RunResult

__all__ = ["BridgeOptions", "BridgeRun", "RunResult", "main"]
