"""The engine's knobs, in one place: every size threshold and limit the runtime uses is a
field here, and an Engine carries one Config (nothing is a module-level global)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    # A delta up to this many rows is broadcast to the other side of a join.
    broadcast_rows: int = 50_000
    # Up to this many rows, a result is collected on the JVM into a local relation (a plan
    # leaf that later plans read without a Spark job) instead of a checkpoint on executors.
    local_rows: int = 5_000
    # A trace's batches of the running epoch, and of the past, before older ones are merged.
    max_cur_batches: int = 8
    max_past_batches: int = 6
    # Fixpoint iterations of a stratum in one epoch before it counts as not converging.
    max_iterations: int = 10_000


DEFAULT = Config()
