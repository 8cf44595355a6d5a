"""The engine's knobs, in one place: every size threshold and limit the runtime and the
commands use is a field here, and an Engine carries one Config (nothing is a module-level
global). The Spark settings the engine applies are not knobs but what its design needs of
Spark, kept beside the code that applies them: ddlog's local-mode session defaults
(runtime/spark.DEFAULTS, each overridden by the user's own setting), the settings under which
a small action runs as one job (runtime/physical.driver_sized). The environment variables
ddlog reads are named, with what each does, in ddlog/environment.py."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Config:
    # A delta up to this many rows is broadcast to the other side of a join.
    broadcast_rows: int = 50_000
    # Up to this many rows, a result is collected on the JVM into a local relation (a plan
    # leaf that later plans read without a Spark job) instead of a checkpoint on executors.
    # Not more: a local relation is read as one partition, so a join of two of them runs as
    # one task on one core. A higher bound saves a few jobs where results are small, but a
    # program with many mid-sized results (points-to) then runs its joins on one core each
    # and is far slower.
    local_rows: int = 5_000
    # A result held as a local relation reads as one partition (coalesce(1)), so that plans
    # over such results shuffle nothing (physical.materialize_many).
    one_partition_locals: bool = True
    # Up to this many rows, a materialised result is also read into Python, so that lookups
    # (runtime/zset.lookup) know a small delta's keys without asking Spark.
    driver_rows: int = 2_000
    # A trace's fold at the epoch's end, and its own merges (its past's compaction, a long
    # fixpoint's older iterations), are made on the driver when it holds the batches' rows
    # (Trace.fold_rows), not by a Spark action.
    driver_folds: bool = True
    # A trace's batches of the running epoch, and of the past, before older ones are merged.
    max_cur_batches: int = 8
    max_past_batches: int = 6
    # A recursive distinct's history of the epoch is held whole again every max_cur_batches
    # parts, while that keeps its action small; past local_rows it stays in parts, up to
    # this many times max_cur_batches, and is then held whole all the same: plans over more
    # parts cost more to build (runtime/operators/distinct).
    max_history_parts: int = 4
    # Up to this many rows, rows given in Python become a local relation on the JVM
    # (physical.local_frame); more go through Spark's createDataFrame.
    local_frame_rows: int = 10_000
    # A command whose work is reading files of at most this many bytes in all starts its JVM
    # for a short life (the CLI's quick_jit_for: no optimising compiler).
    quick_source_bytes: int = 2 << 20
    # A durable epoch's end writes its traces' batches with this many threads at once (1: one
    # after another). Even a one-row `ddlog feed` on reach.dl writes several traces' batches
    # (and merges of their spines), each a small job whose time is mostly fixed cost: written
    # at once, those costs overlap, and the epoch, and so the command, ends sooner.
    persist_threads: int = 4
    # Fixpoint iterations of a stratum in one epoch before it counts as not converging.
    max_iterations: int = 10_000
    # Arrangements: a past batch larger than this is kept partitioned by its trace's key in
    # this many partitions, sorted within them and cached in column batches of this many rows
    # (small, so that a lookup of a few keys decodes little).
    arrangements: bool = True
    arrange_rows: int = 20_000
    arrange_partitions: int = 4
    arrange_batch_rows: int = 1_000
    # ... and a batch read back from durable state is arranged so too, at its first read:
    # that pays in a process that runs many epochs over it (`serve`, `stream`, the API). A
    # short command (`ddlog feed`: one epoch, then exit) reads its batches from their files
    # instead, a lookup filtering a scan of them: over a large state, arranging the batches
    # would take much of such a command's time, only for it to read a few rows of them, where
    # a scan of the stored rows for a few keys is a small fraction of that.
    arrange_stored: bool = True
    # A lookup with at most this many keys filters by literals (which sorted data answers by
    # skipping what holds none of them); more keys join instead (-1: never).
    lookup_keys: int = 256
    # A lookup's rows (a few keys' worth of an arranged trace) are read by one task, as one
    # partition. A small action's other inputs are local relations of one partition; next to
    # a lookup read as the arrangement's partitions, Spark shuffled them to those partitions
    # and ran every later stage with a task per partition. Read as one, small epochs over a
    # large trace run several times fewer tasks a Spark job, each job is much quicker, and
    # the epochs end sooner. Local mode only (the engine turns it off on a cluster): there a
    # task per partition reads it where an executor caches it, and one task would fetch
    # every partition.
    one_task_lookups: bool = True
    # The inputs' action also looks up, by the keys of the updated rows (given in Python),
    # the large past that a recursive stratum's joins meet at later iterations, and the driver
    # joins it with the change: the stratum's horizon then needs no action of its own
    # (JoinOp.prefetch). A small epoch of a recursive stratum then runs a job fewer, and
    # takes noticeably less time.
    prefetch: bool = True
    # A side of a join, distinct or group of at most this many rows is read whole, not
    # narrowed by the other side's keys: it is a local relation, and literal key lists would
    # only make every plan over it larger.
    narrow_rows: int = 5_000
    # In an epoch evaluated from nothing, a recursive stratum's joins read only by its
    # relations' distincts are planned into those distincts' Spark action (one action per
    # iteration) instead of being materialised by an action of their own.
    inline_fresh: bool = True
    # ... and in an incremental epoch too, when the past their distincts read is at most
    # inline_rows: those distincts then scan it instead of looking it up by key.
    inline_incremental: bool = True
    # A non-recursive stratum whose inputs (stored and changed) and operator traces hold at
    # most this many rows runs as one Spark action: its joins, groups and inner distincts
    # are planned into its relations' steps (-1: never).
    inline_rows: int = 20_000
    # Actions whose result is expected small (physical.driver_sized) interpret their
    # expressions instead of generating and compiling code for them.
    interpret_small: bool = True
    # ... and so do actions whose result may be large (checkpointed on the executors) when
    # the rows their plans can read (a stratum's traces, counted or estimated, and its new
    # deltas' estimate) are at most this many (-1: never). Generating and compiling each new
    # plan's code in its tasks takes longer than running it over a few thousand rows, and a
    # program of many small strata whose results live on the executors pays that in nearly
    # every action. Larger strata, whose tasks are long, keep Spark's compiled code.
    interpret_rows: int = 20_000
    # Whether the engine's actions let Catalyst propagate constraints (infer and prune
    # filters from what holds of each operator's rows; runtime/physical._NO_CONSTRAINTS).
    constraint_propagation: bool = False
    # A stratum whose imports change by more than this fraction of their stored rows is
    # evaluated from scratch and its traces rebuilt (0: whenever it has a past; inf: never).
    recompute_ratio: float = 0.25
    # ... and an incremental run of a recursive stratum is abandoned and recomputed when the
    # iterations left until its last evaluation from scratch's depth, at the mean pace of its
    # iterations (corrected by how that misjudged earlier runs: fallback.Paces.correction),
    # would take longer than this times that evaluation (scaled to its inputs'
    # size), or when what it spent and those would take longer than twice that (inf: never;
    # 0: after its first iteration; runtime/fallback.Scratch.overrun). Foreseeing the time
    # left, not only counting the time taken, gives up early on a run that will not finish
    # in time: an epoch that gives up then costs little more than a run from scratch, where
    # one that waits until its time taken is over the budget costs nearly twice that.
    incremental_budget: float = 1.0
    # ... and when the paces of its earlier incremental iterations guess the iterations left
    # (runtime/fallback.Paces), it gives up once the guess is above this times the budget.
    # Going on past a guess that fell short costs up to twice a run from scratch, giving up
    # after one that overshot about one run (a recompute); and the guesses at a change's
    # first iterations tend to fall short of what the change takes, a large change's most of
    # all, so a guess somewhat below the budget already foretells an overrun.
    guess_margin: float = 0.8
    # An evaluation from scratch that ran in the process's first epoch counts at this fraction
    # of its time in the budget of later epochs (1: as it was measured). On a cold JVM the
    # engine's first epoch runs its code interpreted and compiles it meanwhile: a run from
    # scratch there takes far longer than the same run later in the session, and a large
    # change held to that cold budget would run incrementally well past what a warm run from
    # scratch takes before it recomputed.
    cold_scratch: float = 0.5
    # After an incremental run gives up, or finishes over that budget, this many later changes
    # about as large (at least 90%, next to the stored rows) are recomputed at once, without
    # trying first (0: never; see runtime/fallback.GaveUp).
    recompute_memory: int = 8
    # How the fallback takes those decisions (runtime/fallback.Decider): "clock", by the
    # seconds measured; "rows", by row counts only, so that the same epochs take the same
    # paths and Spark jobs on any machine, busy or idle; "random:SEED", each drawn from a
    # source seeded by SEED (tests reach every path with it). The answers are the same.
    decisions: str = "clock"
    # On a cluster, how long a session waits for its first executor before the command fails
    # with a message (a master without workers runs nothing; 0: no wait).
    executor_wait: float = 60.0

    def __post_init__(self) -> None:
        from ddlog.runtime.fallback import Decider

        Decider(self.decisions)  # a wrong mode is refused when the Config is made


DEFAULT = Config()


def with_knobs(text: str | dict[str, str], base: Config = DEFAULT) -> Config:
    """`base` with the knobs of `text` (`name=value,...`, e.g. "local_rows=20000,
    arrangements=false", or a dict of them) changed: what the benchmarks take on their
    command lines, and the commands as `--conf ddlog.NAME=VALUE`."""
    types = {f.name: f.type for f in fields(Config)}
    config = base
    items = (text.items() if isinstance(text, dict)
             else (item.partition("=")[::2] for item in filter(None, text.split(","))))
    for name, value in items:
        if name not in types:
            raise ValueError(f"{name}={value}: no such knob (runtime/config.Config)")
        kind = types[name] if isinstance(types[name], str) else types[name].__name__
        try:
            parsed = (value if kind == "str" else _bool(value) if kind == "bool"
                      else float(value) if kind == "float" else int(value))
            config = replace(config, **{name: parsed})
        except ValueError as err:
            raise ValueError(f"{name}={value}: {err}") from None
    return config


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(f"expected true or false, got {text!r}")
    return text.lower() == "true"
