"""Differential testing of the Spark engine against the oracle.

A `Differential` drives one `ddlog.api.Program` through many epochs. Every epoch's updates go to
the engine (through the public API) and, through `apply_updates`, to the oracle's inputs; after
the commit it checks

- every declared relation (inputs, outputs and internal ones) equals the oracle's value on the
  same inputs, and
- every output's change returned by `commit()` equals the difference of the oracle's values
  before and after the epoch (+1 for new rows, -1 for removed ones, nothing else).

Random workloads (`random_epochs`) are seeded; every assertion message names the program, the
seed and the epoch, so `DDLOG_TEST_SEED=<seed>` replays a failure exactly.

Values are generated per column type (`ValueGen`) from tiny domains so that graphs are dense and
cyclic; a `Workload` overrides the generator per relation where generic data would not
terminate or would be uninteresting (an acyclic graph for programs that build strings along
paths, ages spread over a wide range, ...).
"""
from __future__ import annotations

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import networkx as nx

from ddlog.check.program import CheckedProgram
from ddlog.types import RelationInfo
from ddlog.types import Type, TypeMapping
from ddlog.values import Record, canonical_map, canonical_set, sort_key, wrap_int
from ddlog.runtime.config import Config
from ddlog.runtime.stats import EpochStats
from tests.oracle import apply_updates, evaluate

# The programs' and targeted tests drive the incremental path through every epoch, however
# large the change is next to the tiny state or however long it takes (by default such an
# epoch would be recomputed instead: test_engine_knobs covers that, test_api the default mix).
INCREMENTAL = Config(recompute_ratio=float("inf"), incremental_budget=float("inf"))

Rows = dict[str, set[tuple]]
Update = tuple[str, str, tuple]  # ('insert' | 'delete', relation, row)
RowGen = Callable[[random.Random, Rows], tuple]


# ---------------------------------------------------------------------------------------------
# Reading the engine


def from_rows(rows: Iterable, types: tuple[Type, ...]) -> list[tuple]:
    """Spark Rows (declared columns first, in order) → Python values (ddlog/values/)."""
    from ddlog.runtime.schema import from_spark

    return [tuple(from_spark(r[k], t) for k, t in enumerate(types)) for r in rows]


def collect_all(frames: dict[str, Any], spark=None) -> dict[str, list]:
    """Collect several DataFrames at once. Each collect is a small Spark job whose cost is
    mostly latency, so running them from a few threads (Spark schedules concurrent jobs)
    roughly halves the time a full comparison takes. The test's relations are small: they
    are read under the engine's settings for small actions, on `spark` (the engine's own
    session: the caller's session, whose the frames are, is left as it is)."""
    from ddlog.runtime.physical import driver_sized
    from ddlog.runtime.spark import adopt

    if not frames:
        return {}
    spark = spark or next(iter(frames.values())).sparkSession
    frames = {k: adopt(spark, df) for k, df in frames.items()}
    with driver_sized(spark), ThreadPoolExecutor(max_workers=4) as pool:
        rows = pool.map(lambda df: df.collect(), frames.values())
        return dict(zip(frames, rows))


def relation_rows(info: RelationInfo, rows: list) -> set[tuple]:
    """A relation's collected rows as a set of Python rows. Duplicates would mean the engine
    holds a row with a weight other than 1 somewhere, so they are an error too."""
    values = from_rows(rows, info.column_types)
    dup = [r for r, n in Counter(values).items() if n > 1]
    assert not dup, f"{info.name} returned duplicate rows: {_show(dup)}"
    return set(values)


def change_rows(info: RelationInfo, rows: list) -> dict[tuple, int]:
    """An output's collected change (declared columns + weight, the last column) → {row: w}."""
    out: dict[tuple, int] = {}
    for r in rows:
        row = from_rows([r], info.column_types)[0]
        out[row] = out.get(row, 0) + r[len(r) - 1]
    return {row: w for row, w in out.items() if w != 0}


def expected_change(old: set[tuple], new: set[tuple]) -> dict[tuple, int]:
    return {**{r: 1 for r in new - old}, **{r: -1 for r in old - new}}


def expected_weighted_change(info: RelationInfo, old: Counter, new: Counter) -> dict[tuple, int]:
    """A multiset's change is the difference of multiplicities; a stream reports what it
    holds now (its old records disappear without deletions)."""
    if info.kind == "stream":
        return dict(new)
    diff = {r: new.get(r, 0) - old.get(r, 0) for r in {*old, *new}}
    return {r: w for r, w in diff.items() if w}


def bag_rows(info: RelationInfo, rows: list) -> Counter:
    """A multiset's or a stream's collected rows (each once per unit of multiplicity)."""
    return Counter(from_rows(rows, info.column_types))


def _show(rows: Iterable, limit: int = 12) -> str:
    rows = sorted(rows, key=sort_key)
    text = ", ".join(repr(r) for r in rows[:limit])
    return text + (f", ... ({len(rows)} in all)" if len(rows) > limit else "")


def diff_message(name: str, engine: set[tuple], oracle: set[tuple]) -> str:
    return (f"{name}: engine has {len(engine)} rows, oracle {len(oracle)}; "
            f"missing from engine: [{_show(oracle - engine)}]; "
            f"extra in engine: [{_show(engine - oracle)}]")


# ---------------------------------------------------------------------------------------------
# Values


@dataclass
class ValueGen:
    """Random values of a column type from small domains (so that random rows collide, join
    and form cycles). Records pick a constructor uniformly, Options are None a quarter of the
    time, Vecs and Sets hold 0..2 elements."""

    ints: tuple[int, ...] = tuple(range(6))
    strings: tuple[str, ...] = ("a", "b", "c", "d", "e")
    floats: tuple[float, ...] = (0.0, 0.5, 1.5, 2.0)
    max_len: int = 2

    def value(self, rng: random.Random, t: Type) -> Any:
        return _GENERATE(t, rng, self)

    def row(self, rng: random.Random, info: RelationInfo) -> tuple:
        return tuple(self.value(rng, t) for t in info.column_types)


class _Generate(TypeMapping):
    """One random value of a type, from the ValueGen's domains."""

    UNSUPPORTED = frozenset({"on_group", "on_func", "on_any"})

    def on_bool(self, t, rng, g):
        return rng.random() < 0.5

    def on_int(self, t, rng, g):
        return wrap_int(rng.choice(g.ints), t)

    def on_string(self, t, rng, g):
        return rng.choice(g.strings)

    def on_float(self, t, rng, g):
        return rng.choice(g.floats)

    def on_option(self, t, rng, g):
        return None if rng.random() < 0.25 else self(t.elem, rng, g)

    def on_tuple(self, t, rng, g):
        return tuple(self(it, rng, g) for it in t.items)

    def on_vec(self, t, rng, g):
        return tuple(self(t.elem, rng, g) for _ in range(rng.randint(0, g.max_len)))

    def on_set(self, t, rng, g):
        return canonical_set(self(t.elem, rng, g) for _ in range(rng.randint(0, g.max_len)))

    def on_map(self, t, rng, g):
        return canonical_map(self(t.elem, rng, g) for _ in range(rng.randint(0, g.max_len)))

    def on_struct(self, t, rng, g):
        c = rng.choice(t.ctors)
        return Record(c.name, tuple(self(ft, rng, g) for _, ft in c.fields))


_GENERATE = _Generate()


@dataclass
class Workload:
    """How to make random rows for one program: the generic generator, overridden per relation
    by `rows` (a function of the RNG and the current inputs)."""

    values: ValueGen = field(default_factory=ValueGen)
    rows: dict[str, RowGen] = field(default_factory=dict)
    initial: int = 8  # rows per input relation in the first epoch
    initial_for: dict[str, int] = field(default_factory=dict)  # ... per relation
    churn: int = 3  # at most this many inserts and deletes per relation per random epoch
    # relations that get no generated updates (e.g. left empty on purpose)
    frozen: frozenset[str] = frozenset()

    def initial_rows(self, name: str) -> int:
        return self.initial_for.get(name, self.initial)

    def row(self, rng: random.Random, info: RelationInfo, state: Rows) -> tuple:
        gen = self.rows.get(info.name)
        return gen(rng, state) if gen else self.values.row(rng, info)


def acyclic_pairs(names: tuple[str, ...]) -> Callable[[random.Random], tuple[str, str]]:
    """Random (a, b) with a before b in `names`: edges that can never close a cycle."""
    def gen(rng: random.Random) -> tuple[str, str]:
        i, j = sorted(rng.sample(range(len(names)), 2))
        return names[i], names[j]
    return gen


# ---------------------------------------------------------------------------------------------
# Random epochs


def _graph_like(info: RelationInfo) -> bool:
    t = info.column_types
    return len(t) >= 2 and t[0] == t[1]


def _cycle_edge(rng: random.Random, rows: set[tuple]) -> tuple | None:
    """A row on a cycle of the graph formed by the first two columns (self-loops included),
    or None when the graph is acyclic."""
    g = nx.MultiDiGraph()
    for r in rows:
        g.add_edge(r[0], r[1])
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return None
    a, b = rng.choice(cycle)[:2]
    return rng.choice(sorted((r for r in rows if r[0] == a and r[1] == b), key=sort_key))


def _absent_row(rng, w: Workload, info: RelationInfo, state: Rows, tries: int = 20):
    for _ in range(tries):
        r = w.row(rng, info, state)
        if r not in state[info.name]:
            return r
    return None


def random_epoch(rng: random.Random, kind: str, program: CheckedProgram, w: Workload,
                 state: Rows) -> list[Update]:
    """One transaction's updates of the given kind:

    - 'load':   `w.initial` inserts per input relation;
    - 'mixed':  up to `w.churn` random inserts and deletes (of present rows) per relation;
    - 'net':    a new row inserted then deleted (nets out), a present row deleted then
                re-inserted (stays), an insert of a present row and a delete of an absent one
                (no-ops), plus a mixed update;
    - 'break':  delete an edge on a cycle of every graph-like relation (first two columns of
                one type), plus a few inserts elsewhere;
    - 'purge':  delete about half of every relation;
    - 'empty':  nothing.
    """
    ups: list[Update] = []
    inputs = [r for r in program.inputs() if r.name not in w.frozen]
    for info in inputs:
        name = info.name
        cur = state[name]
        present = sorted(cur, key=sort_key)
        if kind == "load":
            ups += [("insert", name, w.row(rng, info, state))
                    for _ in range(w.initial_rows(name))]
        elif kind in ("mixed", "net"):
            ups += [("insert", name, w.row(rng, info, state))
                    for _ in range(rng.randint(1, w.churn))]
            ups += [("delete", name, r)
                    for r in rng.sample(present, min(len(present), rng.randint(0, w.churn)))]
            if kind == "net":
                new = _absent_row(rng, w, info, state)
                if new is not None:
                    ups += [("insert", name, new), ("delete", name, new)]
                absent = _absent_row(rng, w, info, state)
                if absent is not None:
                    ups.append(("delete", name, absent))
                if present:
                    old = rng.choice(present)
                    ups += [("delete", name, old), ("insert", name, old),
                            ("insert", name, rng.choice(present))]
        elif kind == "break":
            edge = _cycle_edge(rng, cur) if _graph_like(info) else None
            if edge is not None:
                ups.append(("delete", name, edge))
            elif not _graph_like(info):
                ups += [("insert", name, w.row(rng, info, state))
                        for _ in range(rng.randint(0, 2))]
        elif kind == "purge":
            ups += [("delete", name, r) for r in rng.sample(present, len(present) // 2)]
        elif kind != "empty":
            raise ValueError(kind)
    return _interleave(rng, ups)


def _interleave(rng: random.Random, ups: list[Update]) -> list[Update]:
    """Mix the relations' updates randomly, keeping each relation's own order (which decides
    the outcome of an insert and a delete of the same row)."""
    queues: dict[str, list[Update]] = {}
    for u in ups:
        queues.setdefault(u[1], []).append(u)
    out: list[Update] = []
    while queues:
        rel = rng.choice(sorted(queues))
        out.append(queues[rel].pop(0))
        if not queues[rel]:
            del queues[rel]
    return out


EPOCH_PLAN = ("load", "mixed", "break", "net", "empty", "mixed", "break", "purge", "mixed",
              "net", "break", "mixed")


# ---------------------------------------------------------------------------------------------
# The driver


class Differential:
    """One Program and the oracle's view of the same inputs, checked after every epoch."""

    def __init__(self, p, label: str, seed: int | None = None):
        self.p = p
        self.program: CheckedProgram = p.compiled.program
        self.label = label
        self.seed = seed
        self.epoch = 0
        self.inputs: Rows = {r.name: Counter() if r.weighted else set()
                             for r in self.program.inputs()}
        # Before the first commit no epoch has run and nothing is derived (not even what the
        # program derives from empty inputs, like facts): the first epoch's changes are
        # relative to empty relations.
        self.expected: Rows = {name: Counter() if info.weighted else set()
                               for name, info in self.program.relations.items()}
        self.log: list[list[Update]] = []
        self.stats: list[EpochStats] = []  # every epoch's, as p.last_commit gives it

    def where(self) -> str:
        return f"[{self.label} seed={self.seed} epoch={self.epoch}]"

    def apply(self, updates: list[Update]) -> None:
        """Give the updates to the engine through the API, in order per relation, batching
        consecutive updates of one kind and relation into one call."""
        runs: list[tuple[str, str, list[tuple]]] = []
        for kind, rel, row in updates:
            if runs and runs[-1][0] == kind and runs[-1][1] == rel:
                runs[-1][2].append(row)
            else:
                runs.append((kind, rel, [row]))
        for kind, rel, rows in runs:
            (self.p.insert if kind == "insert" else self.p.delete)(rel, rows)

    def step(self, updates: list[Update]) -> None:
        """One epoch: apply, commit, compare everything with the oracle."""
        self.apply(updates)
        self.commit(updates)

    def commit(self, updates: list[Update]) -> dict:
        """Commit whatever the engine has buffered, which must amount to `updates` (the test
        may have given them as DataFrames or dicts), and compare with the oracle."""
        self.log.append(updates)
        try:
            changes = self.p.commit()
        except Exception as e:  # name the seed and epoch, so the failure can be replayed
            raise AssertionError(f"{self.context()}\ncommit failed: {e!r}") from e
        self.stats.append(self.p.last_commit)
        old = self.expected
        if self.epoch == 0:  # the first epoch inserts the facts of input relations first
            self.inputs = apply_updates(self.inputs, [
                ("insert", name, row)
                for name, rows in self.program.input_facts.items() for row in rows])
        streams = {r.name: Counter() for r in self.program.inputs() if r.kind == "stream"}
        self.inputs = apply_updates({**self.inputs, **streams}, updates)
        self.expected = evaluate(self.program, self.inputs, previous=old)
        self.check(changes, old)
        self.epoch += 1
        return changes

    def context(self) -> str:
        ups = self.log[-1] if self.log else []
        return f"{self.where()} updates this epoch: {_show(ups, 30)}"

    def check_relations(self) -> None:
        self.check({})

    def check(self, changes: dict, old: Rows | None = None) -> None:
        """Every declared relation equals the oracle's; with `old` (the oracle's values before
        the epoch), every output's returned change equals the difference."""
        rels = self.program.relations
        frames = {f"rel {n}": self.p.relation(n) for n in rels}
        if old is not None:
            frames.update({f"change {n}": df for n, df in changes.items() if n in rels})
        rows = collect_all(frames, self.p.db.spark)
        bad = []
        for name, info in rels.items():
            if info.weighted:
                got = bag_rows(info, rows[f"rel {name}"])
                want = Counter({r: w for r, w in self.expected[name].items() if w > 0})
                if got != want:
                    bad.append(f"{name}: engine has {_show(got.items())}, oracle "
                               f"{_show(want.items())}")
                continue
            got = relation_rows(info, rows[f"rel {name}"])
            if got != self.expected[name]:
                bad.append(diff_message(name, got, self.expected[name]))
        for info in self.program.outputs() if old is not None else []:
            if info.weighted:
                want = expected_weighted_change(info, old[info.name], self.expected[info.name])
            else:
                want = expected_change(old[info.name], self.expected[info.name])
            got = change_rows(info, rows.get(f"change {info.name}", []))
            if got != want:
                wrong = {r: w for r, w in got.items() if want.get(r) != w}
                lost = {r: w for r, w in want.items() if got.get(r) != w}
                bad.append(f"change of {info.name}: unexpected {_show(wrong.items())}; "
                           f"expected but not returned {_show(lost.items())}")
        assert not bad, f"{self.context()}\n" + "\n".join(bad)

    def run(self, workload: Workload, epochs: int = 10,
            plan: tuple[str, ...] = EPOCH_PLAN) -> None:
        """`epochs` seeded random epochs following `plan` (cycled)."""
        rng = random.Random(self.seed)
        for e in range(epochs):
            kind = plan[e % len(plan)]
            self.step(random_epoch(rng, kind, self.program, workload, self.inputs))
