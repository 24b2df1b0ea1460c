"""Several replicas on one PostgreSQL database, as `shellexec up --replicas` runs them: each
replica is a stack of its own (its server and its own Envoy, so a test can publish through one
and watch on another), and one more Envoy balances across all of them with health checks (the
front door a user reaches)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.rest import Api
from support.stack import Stack, running_stack


@dataclass
class Cluster:
    replicas: list[Stack]
    front: Stack

    @property
    def api(self) -> Api:
        """The REST API through the balancing Envoy."""
        return self.front.api


@contextmanager
def running_cluster(workdir: Path, database_url: str, settings: Mapping[str, str],
                    replicas: int = 2) -> Iterator[Cluster]:
    """`replicas` started stacks on the database of `database_url` with these extra settings
    (`SHELLEXEC_*` names), and the front door."""
    shared = {"SHELLEXEC_DATABASE_URL": database_url, **settings}
    with ExitStack() as started:
        stacks = []
        for index in range(replicas):
            folder = workdir / f"replica{index + 1}"
            folder.mkdir()
            stacks.append(started.enter_context(running_stack(folder, **shared)))
        (workdir / "front").mkdir()
        front = Stack(workdir / "front", extra_env=shared)
        started.callback(front.stop)
        front.start_envoy(*(stack.grpc_port for stack in stacks))
        yield Cluster(stacks, front)
