"""How many feed subscriptions each owner (a caller) holds open, within a bound per owner.

Every watcher may hold a live queue (FEED_QUEUE_BYTES) and a replay batch (REPLAY_BATCH_BYTES),
so the number of watchers one caller holds is what bounds the memory that caller can make the
server hold for it (ADR 0135). The hub takes a place here before it subscribes and gives it
back when it unsubscribes, the one place every stream's end passes through, so a count can
neither leak nor be given back twice. An owner holding nothing has no entry: the table holds
the callers watching now, not every caller that ever watched.
"""

from __future__ import annotations


class WatcherBoundError(Exception):
    """A subscription was refused: its owner already holds `bound` of them."""

    def __init__(self, bound: int) -> None:
        super().__init__(f"already holds {bound} open watchers")
        self.bound = bound


class WatcherCounts:
    """Open subscriptions per owner, at most `per_owner` each (one event loop)."""

    def __init__(self, per_owner: int) -> None:
        if per_owner < 1:
            raise ValueError(f"per_owner must be at least 1, not {per_owner}")
        self.per_owner = per_owner
        self._held: dict[str, int] = {}

    def take(self, owner: str) -> None:
        """Counts one more subscription of `owner`; WatcherBoundError (and nothing counted)
        when it already holds `per_owner`."""
        held = self._held.get(owner, 0)
        if held >= self.per_owner:
            raise WatcherBoundError(self.per_owner)
        self._held[owner] = held + 1

    def give_back(self, owner: str) -> None:
        """Counts one subscription of `owner` fewer (one it took)."""
        held = self._held.get(owner, 0)
        if held <= 1:
            self._held.pop(owner, None)
        else:
            self._held[owner] = held - 1

    def held(self, owner: str) -> int:
        """How many subscriptions `owner` holds open now."""
        return self._held.get(owner, 0)

    @property
    def owners(self) -> int:
        """How many owners hold at least one subscription now."""
        return len(self._held)
