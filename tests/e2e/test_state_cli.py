"""A session of one-shot commands in separate processes on one state directory, checked against
the oracle after every step: run -> feed -> feed -> shell -> refresh -> query -> sql; and catalog
tables as a sink in one process and a source in the next.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ddlog.plan import load
from ddlog.values import format_record
from tests.e2e.cli_support import PROGRAMS, DDlogCLI, manifest_epoch, parse_changes
from tests.oracle import apply_updates, evaluate

REACH = PROGRAMS / "reach.dl"


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> DDlogCLI:
    return DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))


class Oracle:
    """The inputs as the state should hold them, and what the outputs must be."""

    def __init__(self, path: Path, inputs: dict[str, set[tuple]]):
        self.program = load(str(path)).program
        self.inputs = inputs
        self.values = evaluate(self.program, inputs)

    def update(self, inputs: dict[str, set[tuple]]) -> dict[str, set[tuple[str, int]]]:
        """Move to new inputs; the output changes DDlog would print."""
        before = self.values
        self.inputs = inputs
        self.values = evaluate(self.program, inputs)
        changes = {}
        for info in self.program.outputs():
            plus = {(self.record(info.name, r), 1) for r in self.values[info.name] - before[info.name]}
            minus = {(self.record(info.name, r), -1)
                     for r in before[info.name] - self.values[info.name]}
            if plus or minus:
                changes[info.name] = plus | minus
        return changes

    def apply(self, updates) -> dict[str, set[tuple[str, int]]]:
        return self.update(apply_updates(self.inputs, updates))

    def record(self, relation: str, row: tuple) -> str:
        return format_record(relation, self.program.relations[relation].columns, row)

    def records(self, relation: str) -> list[str]:
        return [self.record(relation, r) for r in sorted(self.values[relation])]


def json_changes(text: str) -> dict[str, set[tuple[str, int]]]:
    out: dict[str, set[tuple[str, int]]] = {}
    for line in text.splitlines():
        d = json.loads(line)
        if "stats" in d:  # the epoch's stats close the output
            assert d["stats"]["epoch"] >= 1
            continue
        rec = "{}{{{}}}".format(d["relation"], ", ".join(f".{k} = {v}"
                                                          for k, v in d["record"].items()))
        out.setdefault(d["relation"], set()).add((rec, d["weight"]))
    return out


def read_csv_dir(path: Path) -> list[dict]:
    rows = []
    for part in sorted(path.glob("part-*.csv")):
        with open(part, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def test_session_in_separate_processes(cli, tmp_path):
    edges, roots = tmp_path / "edges.csv", tmp_path / "roots.json"
    edges.write_text("src,dst\n1,2\n2,3\n5,6\n2,3\n")  # a duplicate: inputs are sets
    roots.write_text('{"node": 1}\n')
    state, unreach = tmp_path / "state", tmp_path / "unreachable_csv"
    oracle = Oracle(REACH, {"Edge": {(1, 2), (2, 3), (5, 6)}, "Root": {(1,)}})

    # run: the bound sources become epoch 1; the csv sink is written
    r = cli("run", REACH, "--state", state, f"--input=Edge=csv:{edges}",
            f"--input=Root=json:{roots}", f"--output=Unreachable=csv:{unreach}",
            f"--output=Reach=parquet:{tmp_path / 'reach_parquet'}")
    assert r.code == 0, r
    assert f"Reach: {len(oracle.values['Reach'])} rows" in r.out, r
    assert f"Unreachable: {len(oracle.values['Unreachable'])} rows" in r.out, r
    assert {int(d["node"]) for d in read_csv_dir(unreach)} == \
        {n for (n,) in oracle.values["Unreachable"]}

    # feed a .dat file: one transaction, the changes in DDlog's format
    f1 = tmp_path / "f1.dat"
    f1.write_text("start;\ninsert Edge(3, 4),\ninsert Root(5);\ncommit;\n")
    r = cli("feed", "--state", state, f1)
    assert r.code == 0, r
    expected = oracle.apply([("insert", "Edge", (3, 4)), ("insert", "Root", (5,))])
    assert parse_changes(r.out) == expected, r

    # feed from the command line, changes as JSON lines
    r = cli("feed", "--state", state, "--delete", "Edge(1, 2)", "--insert", "Edge(6, 7)",
            "--format", "json")
    assert r.code == 0, r
    expected = oracle.apply([("delete", "Edge", (1, 2)), ("insert", "Edge", (6, 7))])
    assert json_changes(r.out) == expected, r
    assert manifest_epoch(state) == 3

    # the fallback's decisions drawn from a seeded source (--conf ddlog.decisions): the same
    # answer, and --stats says how each stratum ran and why; a wrong mode changes nothing
    r = cli("feed", "--state", state, "--insert", "Edge(9, 10)", "--stats",
            "--conf", "ddlog.decisions=sometimes")
    assert r.code == 1 and "ddlog.decisions" in r.err and "random:SEED" in r.err, r
    assert "Traceback" not in r.err and manifest_epoch(state) == 3
    r = cli("feed", "--state", state, "--insert", "Edge(9, 10)", "--stats",
            "--conf", "ddlog.decisions=random:5")
    assert r.code == 0, r
    assert parse_changes(r.out) == oracle.apply([("insert", "Edge", (9, 10))]), r
    assert "random:5 drew" in r.err, r
    assert manifest_epoch(state) == 4

    # the shell on the same state: the first transaction commits, the second is rejected
    r = cli("shell", REACH, "--state", state, input="start;\ninsert Edge(7, 8);\n"
            "commit dump_changes;\nstart;\ninsert Edge(8, 9);\ninsert Reach(1);\ncommit;\n")
    assert r.code == 1 and "<stdin>:6:8: error: cannot insert relation 'Reach'" in r.err, r
    expected = oracle.apply([("insert", "Edge", (7, 8))])
    assert parse_changes(r.out) == expected, r
    assert manifest_epoch(state) == 5
    # every commit rewrote the sink
    assert {int(d["node"]) for d in read_csv_dir(unreach)} == \
        {n for (n,) in oracle.values["Unreachable"]}

    # the sources changed outside: refresh brings the difference in as one epoch
    edges.write_text("src,dst\n1,2\n2,3\n3,10\n")
    r = cli("refresh", "--state", state)
    assert r.code == 0, r
    expected = oracle.update({"Edge": {(1, 2), (2, 3), (3, 10)}, "Root": {(1,)}})
    assert parse_changes(r.out) == expected, r
    assert manifest_epoch(state) == 6

    # query: DDlog's text format, csv with a limit
    r = cli("query", "--state", state, "Reach")
    assert r.code == 0 and r.out.splitlines() == oracle.records("Reach"), r
    r = cli("query", "--state", state, "Unreachable", "--format", "csv", "--limit", "2")
    assert r.code == 0, r
    smallest = sorted(oracle.values["Unreachable"])[:2]
    assert r.out.splitlines() == ["node"] + [str(n) for (n,) in smallest], r

    # sql over the views (and the parquet sink, through Spark's path syntax)
    r = cli("sql", "--state", state, "--format", "json",
            "SELECT 'view' AS k, r.node FROM Reach r JOIN Edge e ON e.src = r.node "
            f"UNION ALL SELECT 'sink', node FROM parquet.`{tmp_path / 'reach_parquet'}`")
    assert r.code == 0, r
    got = [json.loads(line) for line in r.out.splitlines()]
    reach = {n for (n,) in oracle.values["Reach"]}
    assert {d["node"] for d in got if d["k"] == "view"} == \
        {s for s, _ in oracle.values["Edge"] if s in reach}
    assert {d["node"] for d in got if d["k"] == "sink"} == reach


def test_catalog_table_as_sink_and_source(cli, tmp_path):
    """`table:` bindings use the Hive catalog of the local warehouse, so a table written by one
    process is read by the next."""
    tc = PROGRAMS / "tc.dl"
    edges = tmp_path / "edges.csv"
    edges.write_text("src,dst\n1,2\n2,3\n3,4\n")
    oracle = Oracle(tc, {"Edge": {(1, 2), (2, 3), (3, 4)}})
    r = cli("run", tc, "--state", tmp_path / "a", f"--input=Edge=csv:{edges}",
            "--output", "Path=table:tc_paths")
    assert r.code == 0 and "Path: 6 rows" in r.out and "wrote Path -> table:tc_paths" in r.out, r
    # the closure of a closure is itself
    out = tmp_path / "paths_json"
    r = cli("run", tc, "--state", tmp_path / "b", "--input", "Edge=table:tc_paths",
            f"--output=Path=json:{out}")
    assert r.code == 0 and "Path: 6 rows" in r.out, r
    rows = {(d["src"], d["dst"]) for part in out.glob("part-*.json")
            for d in map(json.loads, part.read_text().splitlines())}
    assert rows == oracle.values["Path"]


def test_library_roots_are_kept_with_the_state(cli, tmp_path):
    """`-L DIR` (DDlog's): `import util::shapes` is util/shapes.dl under the program's
    directory or a root given; the commands that reopen the state find the modules where
    `run` found them, and an edited module in a root is refused as another program."""
    lib = tmp_path / "lib" / "util"
    lib.mkdir(parents=True)
    (lib / "shapes.dl").write_text("import util::more as m\n"
                                   "function area(w: bigint): bigint = w * m::k()\n")
    (lib / "more.dl").write_text("function k(): bigint = 3\n")
    (tmp_path / "prog").mkdir()
    program = tmp_path / "prog" / "main.dl"
    program.write_text("import util::shapes as sh\ninput relation S(w: bigint)\n"
                       "output relation A(a: bigint)\nA(sh::area(w)) :- S(w).\n")
    dat = tmp_path / "s.dat"
    dat.write_text("start;\ninsert S(2);\ncommit;\n")
    state = tmp_path / "state"
    r = cli("run", program, "--state", state, "--input", dat)
    assert r.code == 1 and "module 'util::shapes' not found" in r.err, r
    assert not state.exists() or not any(state.iterdir())
    r = cli("run", program, "-L", tmp_path / "lib", "--state", state, "--input", dat)
    assert r.code == 0, r
    r = cli("feed", "--state", state, "--insert", "S(5)")
    assert r.code == 0 and r.out == "A:\nA{.a = 15}: +1\n", r
    r = cli("query", "--state", state, "A")
    assert r.code == 0 and r.out == "A{.a = 6}\nA{.a = 15}\n", r
    (lib / "more.dl").write_text("function k(): bigint = 4\n")
    r = cli("query", "--state", state, "A")
    assert r.code == 1 and "more.dl" in r.err, r
