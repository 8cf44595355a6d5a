"""The benchmark workloads: each a DDlog program, its input facts (generated in Spark, or read
from ../shared/data), the updates its incremental epochs apply, and the PySpark loop a Spark
user would write by hand to compute the same output from scratch (the baseline the engine is
compared with)."""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import argparse

    from pyspark.sql import DataFrame, SparkSession

    from ddlog.api import Program
    from ddlog.runtime.config import Config

REACH = """
input relation Edge(src: bigint, dst: bigint)
input relation Root(node: bigint)
output relation Reach(node: bigint)
Reach(r) :- Root(r).
Reach(y) :- Reach(x), Edge(x, y).
"""

TC = """
input relation Edge(src: bigint, dst: bigint)
output relation Path(src: bigint, dst: bigint)
Path(x, y) :- Edge(x, y).
Path(x, z) :- Path(x, y), Edge(y, z).
"""

# Andersen's points-to analysis in the style of programs/pointsto.dl, over numbered variables
# and objects, with a negation: the heap cells a variable may point to that no store ever
# writes (a typical "never written" query) need PointsTo complete first.
POINTSTO = """
input relation AddressOf(dst: bigint, obj: bigint)
input relation Assign(dst: bigint, src: bigint)
input relation Load(dst: bigint, src: bigint)
input relation Store(dst: bigint, src: bigint)
output relation PointsTo(ptr: bigint, obj: bigint)
relation Written(obj: bigint)
output relation NeverWritten(ptr: bigint, obj: bigint)
PointsTo(p, o) :- AddressOf(p, o).
PointsTo(p, o) :- Assign(p, q), PointsTo(q, o).
PointsTo(p, o) :- Load(p, q), PointsTo(q, r), PointsTo(r, o).
PointsTo(r, o) :- Store(p, q), PointsTo(p, r), PointsTo(q, o).
Written(r) :- Store(p, _), PointsTo(p, r).
NeverWritten(p, o) :- PointsTo(p, o), not Written(o).
"""


@dataclass
class Workload:
    name: str
    program: str
    output: str
    # relation -> its initial facts (cached), or their rows in Python (`tiny`)
    inputs: dict[str, "DataFrame | list[tuple]"]
    # the relation the incremental epochs update, a generator of new rows for it, and
    # present rows to delete (a sample, collected once)
    updated: str
    new_rows: Callable[[random.Random, int], list[tuple]]
    present: list[tuple]
    # the hand-written loop: the output's rows (None: a program without one, `tiny`)
    loop: Callable[[dict[str, "DataFrame"]], int] | None
    # the output's rows by a plain Python fixpoint on the initial inputs, where there is one
    python: Callable[[], int] | None = None


def _random_edges(spark: "SparkSession", edges: int, nodes: int, seed: int) -> "DataFrame":
    """About `edges` distinct random edges over `nodes` nodes, generated on the executors
    (the same rows however often Spark computes them: no limit, no sampling)."""
    from pyspark.sql import functions as F

    n = F.lit(nodes)
    df = spark.range(edges).select(
        F.pmod(F.xxhash64("id", F.lit(seed)), n).alias("src"),
        F.pmod(F.xxhash64("id", F.lit(seed + 1)), n).alias("dst"))
    return df.distinct()


def _cached(df: "DataFrame", parts: int) -> "DataFrame":
    df = df.repartition(parts).cache()
    df.count()
    return df


def _sample(df: "DataFrame", k: int) -> list[tuple]:
    return [tuple(r) for r in df.limit(k).collect()]


def reach(spark: "SparkSession", edges: int, roots: int, seed: int, parts: int) -> Workload:
    nodes = max(2, edges // 3)
    e = _cached(_random_edges(spark, edges, nodes, seed), parts)
    rng = random.Random(seed)
    r = spark.createDataFrame([(x,) for x in rng.sample(range(nodes), roots)], "node long")

    def new_rows(rng: random.Random, k: int) -> list[tuple]:
        return [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(k)]

    return Workload(f"reachability, {edges:,} edges, {roots} roots", REACH, "Reach",
                    {"Edge": e, "Root": r}, "Edge", new_rows, _sample(e, 5_000),
                    lambda ins: reach_loop(ins["Edge"], ins["Root"]))


def tc(spark: "SparkSession", edges: int, path: str | None, seed: int,
       parts: int) -> Workload:
    if path:
        e = spark.read.csv(path, schema="src long, dst long")
        e = _cached(e.dropna().distinct(), parts)
        nodes = e.selectExpr("max(greatest(src, dst))").first()[0] + 1
        label = os.path.basename(path)
    else:
        nodes = max(2, int(edges * 0.8))
        e = _cached(_random_edges(spark, edges, nodes, seed), parts)
        label = "random graph"
    n = e.count()

    def new_rows(rng: random.Random, k: int) -> list[tuple]:
        return [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(k)]

    return Workload(f"transitive closure, {label}, {n:,} edges", TC, "Path", {"Edge": e},
                    "Edge", new_rows, _sample(e, 2_000), lambda ins: tc_loop(ins["Edge"]))


def tiny(program: str, rows: int, seed: int) -> Workload:
    """A program of programs/ (by its name) on `rows` random rows per input relation over
    small domains (so that graphs are dense and cyclic): what the test suite and an
    interactive user run. Its epochs change its first input relation; it has no
    hand-written loop."""
    from ddlog.plan import load_file
    from ddlog.types import TString

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "programs", f"{program}.dl")
    with open(path) as f:
        text = f.read()
    inputs = [info for info in load_file(path).program.relations.values()
              if info.role == "input"]
    if not inputs:
        raise SystemExit(f"tiny: {program}.dl has no input relation")

    def row(rng: random.Random, info) -> tuple:
        return tuple(f"v{rng.randrange(10)}" if isinstance(t, TString) else rng.randrange(12)
                     for _, t in info.columns)

    rng = random.Random(seed)
    facts = {info.name: sorted({row(rng, info) for _ in range(rows)}) for info in inputs}
    output = next((r.name for r in load_file(path).program.relations.values()
                   if r.role == "output"), inputs[0].name)
    first = inputs[0]
    return Workload(f"{program}.dl, {rows} random rows per input", text, output, facts,
                    first.name, lambda rng, k: [row(rng, first) for _ in range(k)],
                    list(facts[first.name]), None)


_PER_METHOD = 12  # local variables of a method in `pointsto_facts`


def _methods(facts: int) -> int:
    """How many methods `pointsto_facts` makes for `facts` statements (about 20 each)."""
    return max(2, facts // 20)


def _local(rng: random.Random, m: int, per_method: int = _PER_METHOD) -> int:
    """A random local variable of method m."""
    return m * per_method + rng.randrange(per_method)


def pointsto_facts(facts: int, seed: int, per_method: int = _PER_METHOD, module: int = 50,
                   window: int = 30) -> dict[str, list[tuple[int, int]]]:
    """About `facts` statements of a program shaped as real ones are: methods of
    `per_method` local variables, each allocating 3 objects, with 8 assignments, 3 loads
    and 3 stores between its locals, and 2 calls (2 arguments passed, a result returned
    half of the time) to methods a little further on in its module of `module` methods.
    Flows stay within a module, so points-to sets stay bounded as in a real analysis
    (50,000 statements derive about 300,000 PointsTo facts in 26 iterations; random
    statements over one pool of variables make nearly every variable point to nearly every
    object instead). Objects are numbered after the variables: an object is also the heap
    cell that loads and stores reach through pointers to it."""
    rng = random.Random(seed)
    methods = _methods(facts)
    variables = methods * per_method
    out: dict[str, set[tuple[int, int]]] = {"AddressOf": set(), "Assign": set(), "Load": set(),
                                            "Store": set()}

    def local(m: int) -> int:
        return _local(rng, m, per_method)

    obj = variables
    for m in range(methods):
        for _ in range(3):
            out["AddressOf"].add((local(m), obj))
            obj += 1
        for _ in range(8):
            out["Assign"].add((local(m), local(m)))
        for _ in range(2):
            callee = m + 1 + rng.randrange(window)
            if callee >= methods or callee // module != m // module:
                continue
            out["Assign"].add((local(callee), local(m)))  # the arguments
            out["Assign"].add((local(callee), local(m)))
            if rng.random() < 0.5:
                out["Assign"].add((local(m), local(callee)))  # the result
        for _ in range(3):
            out["Load"].add((local(m), local(m)))
        for _ in range(3):
            out["Store"].add((local(m), local(m)))
    return {rel: sorted(rows) for rel, rows in out.items()}


def pointsto(spark: "SparkSession", facts: int, seed: int, parts: int) -> Workload:
    """Points-to over `pointsto_facts`; the epochs add and remove assignments between the
    locals of one method (an edit of one function)."""
    generated = pointsto_facts(facts, seed)
    methods = _methods(facts)
    schema = {rel: f"dst long, {'obj' if rel == 'AddressOf' else 'src'} long" for rel in generated}
    ins = {rel: _cached(spark.createDataFrame(rows, schema[rel]), parts)
           for rel, rows in generated.items()}

    def new_rows(rng: random.Random, k: int) -> list[tuple]:
        rows = []
        for _ in range(k):
            m = rng.randrange(methods)
            rows.append((_local(rng, m), _local(rng, m)))
        return rows

    return Workload(f"points-to, {sum(map(len, generated.values())):,} statements", POINTSTO,
                    "PointsTo", ins, "Assign", new_rows, _sample(ins["Assign"], 2_000),
                    pointsto_loop)


def analysis(spark: "SparkSession", facts: int, seed: int, parts: int) -> Workload:
    """bench/analysis.py's points-to with a call graph over its generated facts; the epochs add
    and remove assignments between the locals of one method."""
    from bench import analysis as a

    generated = a.facts(facts, seed)
    methods = len(generated["Method"])
    ins = {rel: _cached(spark.createDataFrame(rows, a.SCHEMAS[rel]), parts)
           for rel, rows in generated.items()}

    def new_rows(rng: random.Random, k: int) -> list[tuple]:
        rows = []
        for _ in range(k):
            m = rng.randrange(methods)
            rows.append((_local(rng, m, a.LOCALS), _local(rng, m, a.LOCALS)))
        return rows

    return Workload(f"points-to with a call graph, {sum(map(len, generated.values())):,} facts",
                    a.PROGRAM, a.OUTPUT, ins, "Move", new_rows, _sample(ins["Move"], 2_000),
                    a.loop, lambda: a.python_fixpoint(generated)[a.OUTPUT])


# ---------------------------------------------------------------------------------------------
# The loops a Spark user writes by hand: semi-naive (join the new rows only, distinct, anti-join
# what is known), the fixed relations cached, lineage cut by a local checkpoint per iteration.


def _cut(df: "DataFrame") -> "DataFrame":
    """A local checkpoint behind a new plan leaf, as a user writes it once a long fixpoint
    met Spark's compounding size estimates: `Dataset.localCheckpoint` keeps the estimate of
    the plan it cuts, joins multiply estimates, and each iteration joins the last one's
    checkpoints, so the estimate's digits double per iteration (points-to at 50k statements:
    iterations of 1-2 s became 4.6, 11.7, 28.4, 74.1 s from the 19th, all of it in
    `SizeInBytesOnlyStatsPlanVisitor.visitJoin`'s BigInteger products). The engine cuts its
    plans the same way, with the function used here."""
    from ddlog.runtime.physical import checkpoint_leaf

    out = checkpoint_leaf(df)
    out.count()  # written now, as localCheckpoint() does
    return out


def reach_loop(edge: "DataFrame", root: "DataFrame") -> int:
    from pyspark.sql import functions as F

    e = edge.select(F.col("src").alias("node"), "dst")
    known = _cut(root.select("node").distinct())
    delta = known
    while True:
        new = delta.join(e, "node").select(F.col("dst").alias("node")).distinct()
        delta = _cut(new.join(known, "node", "left_anti"))
        if delta.count() == 0:
            return known.count()
        known = _cut(known.union(delta))


def tc_loop(edge: "DataFrame") -> int:
    from pyspark.sql import functions as F

    e = edge.select(F.col("src").alias("mid"), "dst")
    known = _cut(edge.select("src", "dst").distinct())
    delta = known
    while True:
        new = (delta.select("src", F.col("dst").alias("mid")).join(e, "mid")
               .select("src", "dst").distinct())
        delta = _cut(new.join(known, ["src", "dst"], "left_anti"))
        if delta.count() == 0:
            return known.count()
        known = _cut(known.union(delta))


def pointsto_loop(ins: dict[str, "DataFrame"]) -> int:
    """PointsTo and NeverWritten as a user would compute them: semi-naive PointsTo (each
    rule with the new rows in one PointsTo atom at a time), then the negation."""
    from pyspark.sql import functions as F

    def pt(df: "DataFrame", p: str, o: str) -> "DataFrame":
        return df.select(F.col("ptr").alias(p), F.col("obj").alias(o))

    assign = ins["Assign"].select(F.col("dst").alias("p"), F.col("src").alias("q"))
    load = ins["Load"].select(F.col("dst").alias("p"), F.col("src").alias("q"))
    store = ins["Store"].select(F.col("dst").alias("p"), F.col("src").alias("q"))
    known = ins["AddressOf"].select(F.col("dst").alias("ptr"), "obj").distinct()
    known = _cut(known)
    delta = known
    while True:
        parts = [
            assign.join(pt(delta, "q", "o"), "q").select("p", "o"),
            load.join(pt(delta, "q", "r"), "q").join(pt(known, "r", "o"), "r").select("p", "o"),
            load.join(pt(known, "q", "r"), "q").join(pt(delta, "r", "o"), "r").select("p", "o"),
            store.join(pt(delta, "p", "r"), "p").join(pt(known, "q", "o"), "q")
                 .select(F.col("r").alias("p"), "o"),
            store.join(pt(known, "p", "r"), "p").join(pt(delta, "q", "o"), "q")
                 .select(F.col("r").alias("p"), "o"),
        ]
        new = parts[0]
        for part in parts[1:]:
            new = new.union(part)
        new = new.select(F.col("p").alias("ptr"), F.col("o").alias("obj")).distinct()
        delta = _cut(new.join(known, ["ptr", "obj"], "left_anti"))
        if delta.count() == 0:
            break
        known = _cut(known.union(delta))
    written = store.join(pt(known, "p", "obj"), "p").select("obj").distinct()
    known.join(written, "obj", "left_anti").count()
    return known.count()


def loaded(w: Workload, spark: "SparkSession", config=None) -> "Program":
    """The workload's program with its initial facts inserted, for its initial epoch (not yet
    committed)."""
    from ddlog.api import Program

    p = Program.load(w.program, spark, **({"config": config} if config is not None else {}))
    for rel, df in w.inputs.items():
        p.insert(rel, df)
    return p


def some_rows(w: Workload, rng: random.Random, present: list[tuple], kind: str,
              count: int = 1) -> list[tuple]:
    """`count` rows for an epoch: new ones to insert, or some of `present` (shuffled by the
    caller, and used up from its end) to delete."""
    if kind == "insert":
        return w.new_rows(rng, count)
    return [present.pop() for _ in range(count)]


def add_knobs(ap: "argparse.ArgumentParser") -> None:
    """The `--knobs` argument: the engine's knobs for the run (runtime/config.py)."""
    ap.add_argument("--knobs", default="", metavar="NAME=VALUE,...",
                    help="the engine's knobs (runtime/config.py), e.g. local_rows=20000")


def config_of(knobs: str) -> "Config":
    """The engine's configuration that `--knobs` names; a bad knob ends the run saying so."""
    from ddlog.runtime.config import with_knobs

    try:
        return with_knobs(knobs)
    except ValueError as e:
        raise SystemExit(str(e))


RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                       "results")


def save(result: dict, script: str, argv: list[str], out: str = RESULTS) -> str:
    """Write a run's result as JSON into `out`, with what makes it a record: the command
    (`python bench/SCRIPT ARGS`), the date and time (UTC), the commit it ran (with
    "-dirty" when the checkout had changes) and the machine's cores. Named by the time and
    the script, so that a rerun adds a file. Returns the file's path."""
    import platform
    import subprocess
    import time

    root = os.path.dirname(RESULTS)

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    now = time.gmtime()
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "-dirty"
    record = {"command": f"python bench/{script} " + " ".join(argv),
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", now), "commit": commit,
              "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
              **result}
    os.makedirs(out, exist_ok=True)
    name = os.path.splitext(script)[0]
    path = os.path.join(out, f"{time.strftime('%Y%m%dT%H%M%S', now)}-{name}.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=2)
    return path


def add_arguments(ap: "argparse.ArgumentParser") -> None:
    """The command-line arguments that choose a workload and its size (bench/run.py,
    bench/split.py, bench/pair.py, bench/paces.py)."""
    ap.add_argument("workload", choices=["reach", "tc", "pointsto", "analysis", "tiny"])
    ap.add_argument("--program", default="tc", help="tiny: a program of programs/ (its name)")
    ap.add_argument("--rows", type=int, default=15, help="tiny: rows per input relation")
    ap.add_argument("--edges", type=int, default=100_000)
    ap.add_argument("--roots", type=int, default=10)
    ap.add_argument("--file", help="tc: an edge list (src,dst per line), e.g. tree11.csv")
    ap.add_argument("--facts", type=int, default=50_000)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)


def from_arguments(spark: "SparkSession", args: "argparse.Namespace") -> Workload:
    """The workload `add_arguments`' arguments name."""
    if args.workload == "reach":
        return reach(spark, args.edges, args.roots, args.seed, args.partitions)
    if args.workload == "tc":
        return tc(spark, args.edges, args.file, args.seed, args.partitions)
    if args.workload == "tiny":
        return tiny(args.program, args.rows, args.seed)
    if args.workload == "analysis":
        return analysis(spark, args.facts, args.seed, args.partitions)
    return pointsto(spark, args.facts, args.seed, args.partitions)
