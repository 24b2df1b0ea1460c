"""The `shellexec` command's entry point: what must happen before anything imports gRPC.

gRPC's C core reads GRPC_VERBOSITY once, when `grpc` is first imported, and writes its own log
lines raw on descriptor 2 (one per failed TLS handshake: `I1206 12:49:24.647503 6342
ssl_transport_security.cc:2563] Handshake failed ...`, again at every retry). The bridge's
stderr is its own escaped log and the agent's `[agent] ` lines alone (docs/bridge.md), so for
`shellexec bridge` the core is imported with the variable set to NONE, unless the user asks
for its log (GRPC_VERBOSITY or GRPC_TRACE set). The variable is taken out again at once: the
environment the bridge passes on (`--env`) is the user's.
"""

from __future__ import annotations

import os
import sys

# What a user sets to see gRPC's own log.
GRPC_LOG_SETTINGS = ("GRPC_VERBOSITY", "GRPC_TRACE")


def main() -> int:
    if sys.argv[1:2] == ["bridge"] and not any(
            os.environ.get(name, "").strip() for name in GRPC_LOG_SETTINGS):
        set_before = os.environ.get("GRPC_VERBOSITY")  # empty, if set at all
        os.environ["GRPC_VERBOSITY"] = "NONE"
        import grpc  # noqa: F401  # reads the variable now, and only now
        if set_before is None:
            del os.environ["GRPC_VERBOSITY"]
        else:
            os.environ["GRPC_VERBOSITY"] = set_before
    from shellexec.app import cli  # gRPC is imported from here on

    return cli.main()
