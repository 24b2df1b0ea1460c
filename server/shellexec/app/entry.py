"""The `shellexec` command's entry point: what must happen before anything imports gRPC.

gRPC's C core reads GRPC_VERBOSITY once, when `grpc` is first imported, and writes its own log
lines raw on descriptor 2 (one per failed TLS handshake: `I1206 12:49:24.647503 6342
ssl_transport_security.cc:2563] Handshake failed ...`, again at every retry). The bridge's
stderr is its own escaped log and the agent's `[agent] ` lines alone (docs/bridge.md), so for
`shellexec bridge` the core logs nothing, unless the user asks for its log (GRPC_VERBOSITY or
GRPC_TRACE set). The agent never sees the variable: its environment is an allow-list.
"""

from __future__ import annotations

import os
import sys

# What a user sets to see gRPC's own log.
GRPC_LOG_SETTINGS = ("GRPC_VERBOSITY", "GRPC_TRACE")


def main() -> int:
    if sys.argv[1:2] == ["bridge"] and not any(
            os.environ.get(name, "").strip() for name in GRPC_LOG_SETTINGS):
        os.environ["GRPC_VERBOSITY"] = "NONE"
    from shellexec.app import cli  # gRPC is imported from here on

    return cli.main()
