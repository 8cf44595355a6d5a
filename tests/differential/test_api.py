"""The Python API (ddlog/api.py): accepted row forms, every error path, rollback, empty and
failed commits.

Every rejected update must leave the program as it was: the relations keep their contents, the
updates buffered before it stay buffered, and the next commit gives exactly the oracle's answer
for the updates that were accepted (checked by tests/differential/harness.Differential, which compares every
relation and every returned change).

One program (`prog`, module-scoped) serves the error cases: it is non-recursive, so its commits
are cheap, and each case checks against the oracle's running state, so the cases do not depend
on their order.
"""
from __future__ import annotations

from typing import Callable

import pytest

from ddlog.api import Program, UpdateError
from ddlog.errors import EvaluationError
from tests.differential.harness import Differential

TEXT = """
input relation Edge(src: bigint, dst: bigint)
input relation Label(n: bigint, name: string, small: bit<8>, tag: Option<string>)
output relation Out(src: bigint, dst: bigint)
output relation Named(name: string, small: bit<8>, tag: Option<string>)
relation Internal(n: bigint)

Out(x, y) :- Edge(x, y), x != y.
Named(s, b, t) :- Label(n, s, b, t), Edge(n, _).
Internal(x) :- Edge(x, _).
"""


@pytest.fixture(scope="module")
def prog(spark) -> Differential:
    d = Differential(Program.load(TEXT, spark), "api")
    d.step([("insert", "Edge", (1, 2)), ("insert", "Edge", (2, 2)),
            ("insert", "Label", (1, "one", 7, None)), ("insert", "Label", (2, "two", 8, "t"))])
    return d


def rejected(d: Differential, cases: list[tuple[str, Callable[[], object], str]]) -> None:
    """Each `call()` raises UpdateError matching its pattern; afterwards the relations are
    unchanged, and an update buffered before the bad ones and committed after them gives the
    oracle's answer, as if the bad updates never happened. (The cases of one family share the
    commit: commits are what costs time.)"""
    good = ("insert", "Edge", (d.epoch + 10, 3))  # a new row every time
    d.apply([good])
    for label, call, match in cases:
        try:
            with pytest.raises(UpdateError, match=match):
                call()
        except BaseException as e:
            d.p.rollback()  # an accepted bad update must not leak into the other tests
            raise AssertionError(f"case {label!r}: {e}") from e
    d.check_relations()  # nothing changed
    d.commit([good])


# ---------------------------------------------------------------------------------------------
# Errors


def test_unknown_relation(prog):
    p = prog.p
    rejected(prog, [
        ("insert", lambda: p.insert("Nope", [(1, 2)]), "unknown relation 'Nope'"),
        ("delete, names are case-sensitive", lambda: p.delete("edge", [(1, 2)]),
         "unknown relation 'edge'"),
        ("read", lambda: p.relation("Nope"), "unknown relation 'Nope'"),
    ])


def test_not_an_input_relation(prog):
    p = prog.p
    rejected(prog, [(rel, lambda rel=rel: p.insert(rel, [(5, 6)]), f"'{rel}'.*not an input")
                    for rel in ("Out", "Named", "Internal")]
             + [("delete", lambda: p.delete("Out", [(1, 2)]), "'Out'.*not an input")])


def test_wrong_arity(prog):
    p = prog.p
    rejected(prog, [(label, lambda rows=rows: p.insert("Edge", rows), match)
                    for label, rows, match in [
        ("long", [(1, 2, 3)], "expects 2 values, found 3"),
        ("short", [(1,)], "expects 2 values, found 1"),
        ("scalar", [5], "expects 2 values, found 1"),
        ("dict missing a column", [{"src": 1}], "has columns src, dst"),
        ("dict with an extra column", [{"src": 1, "dst": 2, "weight": 3}],
         "has columns src, dst"),
        # the bad row is last: the good ones in the same call are rejected with it
        ("after good rows", [(7, 8), (9, 10), (1, 2, 3)], "expects 2 values"),
    ]])


def test_wrong_type_python_rows(prog):
    p = prog.p
    cases = [
        ("Edge", (1, "2"), "column 'dst': expected bigint"),
        ("Edge", (1.5, 2), "column 'src': expected bigint"),
        ("Edge", (True, 2), "column 'src': expected bigint"),
        ("Edge", (None, 2), "column 'src': expected bigint"),
        ("Edge", (1 << 63, 2), "column 'src': expected bigint"),
        ("Label", (1, "x", 256, None), "column 'small': expected bit<8>"),
        ("Label", (1, "x", -1, None), "column 'small': expected bit<8>"),
        ("Label", (1, 2, 3, None), "column 'name': expected string"),
        ("Label", (1, "x", 3, 4), r"column 'tag': expected Option<string>"),
    ]
    rejected(prog, [(f"{op} {rel}{row}", lambda op=op, rel=rel, row=row:
                     getattr(p, op)(rel, [row]), match)
                    for rel, row, match in cases for op in ("insert", "delete")])


def test_wrong_type_dataframe(prog, spark):
    p = prog.p
    bad = spark.createDataFrame([(1, "2")], "src bigint, dst string")
    bad_label = spark.createDataFrame([(1, "x", 3.5, None)],
                                      "n long, name string, small double, tag string")
    wrong_width = spark.createDataFrame([(1, 2, 3)], "a long, b long, c long")
    rejected(prog, [
        ("string column", lambda: p.insert("Edge", bad), "column 'dst': expected bigint.*string"),
        ("double for bit<8>", lambda: p.insert("Label", bad_label), "column 'small'"),
        ("delete", lambda: p.delete("Edge", bad), "column 'dst'"),
        ("three columns", lambda: p.insert("Edge", wrong_width), "expects 2 columns"),
    ])


@pytest.mark.parametrize("rel,schema,row,column", [
    ("Edge", "src bigint, dst bigint", (None, 2), "src"),
    ("Label", "n long, name string, small long, tag string", (1, "x", 300, None), "small"),
    ("Label", "n long, name string, small long, tag string", (1, None, 3, None), "name"),
], ids=["null-bigint", "bit8-out-of-range", "null-string"])
def test_dataframe_values_are_checked_like_python_rows(spark, rel, schema, row, column):
    """A DataFrame's column type may fit while a value does not: a null in a column that is
    not an Option, or a bit<8> value outside 0..255. Python rows with these values are
    rejected (test_wrong_type_python_rows); the same rows as a DataFrame must be too, or the
    relation would hold values of no DDlog type. (A program of its own: if the engine takes
    the row, the shared program's state would no longer match the oracle's.)"""
    d = Differential(Program.load(TEXT, spark), "api-df-values")
    df = spark.createDataFrame([row], schema)
    rejected(d, [(f"{rel}{row}", lambda: d.p.insert(rel, df), column)])


# ---------------------------------------------------------------------------------------------
# Accepted forms


def test_dict_rows(prog):
    d = prog
    d.p.insert("Edge", [{"src": 30, "dst": 31}, {"dst": 33, "src": 32}])
    d.p.insert("Label", [{"n": 30, "name": "thirty", "small": 255, "tag": "x"}])
    d.p.delete("Edge", [{"src": 1, "dst": 2}])
    d.commit([("insert", "Edge", (30, 31)), ("insert", "Edge", (32, 33)),
              ("insert", "Label", (30, "thirty", 255, "x")), ("delete", "Edge", (1, 2))])


def test_dataframe_with_named_and_extra_columns(prog, spark):
    """A GraphFrames-style edges frame: the declared columns are picked by name, in any
    order, and extra columns are ignored; narrower integer types are widened."""
    d = prog
    edges = spark.createDataFrame([("friend", 41, 40), ("follows", 42, 41)],
                                  "relationship string, dst int, src int")
    d.p.insert("Edge", edges)
    d.commit([("insert", "Edge", (40, 41)), ("insert", "Edge", (41, 42))])
    d.p.delete("Edge", edges.filter("relationship = 'friend'"))
    d.commit([("delete", "Edge", (40, 41))])


def test_dataframe_positional_columns(prog, spark):
    """Columns named otherwise are taken by position when the count matches."""
    d = prog
    d.p.insert("Edge", spark.createDataFrame([(50, 51)], "a long, b long"))
    d.p.insert("Label", spark.createDataFrame([(50, "fifty", 5, None)],
                                              "id long, s string, b int, t string"))
    d.commit([("insert", "Edge", (50, 51)), ("insert", "Label", (50, "fifty", 5, None))])


def test_insert_and_delete_in_one_transaction(prog):
    d = prog
    new, old = (60, 61), (2, 2)
    assert old in d.inputs["Edge"]
    d.p.insert("Edge", [new])
    d.p.delete("Edge", [new])  # nets out
    d.p.delete("Edge", [old])
    d.p.insert("Edge", [old])  # the last update wins: stays
    d.p.insert("Edge", [old])  # present: no change
    d.p.delete("Edge", [(62, 63)])  # absent: no change
    changes = d.commit([("insert", "Edge", new), ("delete", "Edge", new),
                        ("delete", "Edge", old), ("insert", "Edge", old),
                        ("insert", "Edge", old), ("delete", "Edge", (62, 63))])
    assert all(df.count() == 0 for df in changes.values())


# ---------------------------------------------------------------------------------------------
# Rollback and empty commits


def test_rollback_drops_buffered_updates(prog):
    d = prog
    d.p.insert("Edge", [(70, 71)])
    d.p.delete("Edge", [(1, 2)])
    d.p.rollback()
    d.check_relations()
    d.p.insert("Edge", [(72, 73)])
    d.commit([("insert", "Edge", (72, 73))])  # only the update after the rollback


def test_empty_commit(prog):
    d = prog
    epoch = d.p.epoch
    changes = d.commit([])
    assert all(df.count() == 0 for df in changes.values())
    assert d.p.epoch == epoch + 1
    d.p.insert("Edge", [(80, 81)])
    d.p.rollback()
    d.commit([])  # a rolled-back transaction commits nothing


def test_empty_commit_on_a_fresh_program(spark):
    d = Differential(Program.load(TEXT, spark), "api-fresh")
    d.commit([])
    d.step([("insert", "Edge", (1, 2))])


# ---------------------------------------------------------------------------------------------
# A failed commit

DIVERGES = """
input relation Start(n: bigint)
input relation Edge(src: bigint, dst: bigint)
output relation N(n: bigint)
output relation Path(src: bigint, dst: bigint)

N(x) :- Start(x).
N(x + 1) :- N(x).

Path(x, y) :- Edge(x, y).
Path(x, z) :- Path(x, y), Edge(y, z).
"""


def test_failed_commit_names_the_stratum_and_changes_nothing(spark):
    p = Program.load(DIVERGES, spark, max_iterations=20)
    d = Differential(p, "diverges")
    d.step([("insert", "Edge", (1, 2)), ("insert", "Edge", (2, 1))])
    epoch = p.epoch
    p.insert("Edge", [(2, 3)])
    p.delete("Edge", [(2, 1)])
    p.insert("Start", [(0,)])  # N counts up forever
    with pytest.raises(EvaluationError, match=r"stratum \d+ \(N\).*20 iterations"):
        p.commit()
    assert p.epoch == epoch
    d.check_relations()  # as before the failed commit
    p.rollback()
    # the next transaction starts from the state before the failure
    d.step([("insert", "Edge", (3, 1)), ("delete", "Edge", (1, 2))])


def test_u64_from_two_to_the_63_up(spark, tmp_path):
    """A u64 is stored as its 64 bits in a Long (Spark has no unsigned type): a DataFrame's
    Long is taken as those bits (what `relation()` gives back), a decimal or a CSV text as the
    value; text sinks write the value. Values outside 0..2^64-1 are refused."""
    from decimal import Decimal

    from ddlog.runtime.io import parse_spec, read_source, write_sink

    text = ("input relation U(x: u64, n: bigint)\noutput relation Big(x: u64)\n"
            "Big(x) :- U(x, _), x >= 'h8000000000000000.\n")
    d = Differential(Program.load(text, spark), "api-u64")
    top, half = (1 << 64) - 1, 1 << 63
    d.p.insert("U", spark.createDataFrame([(-1, 1)], "x long, n long"))  # the bits of 2^64-1
    d.p.insert("U", spark.createDataFrame([(Decimal(half + 5), 2)], "x decimal(20,0), n long"))
    d.p.insert("U", [(half, 3), (7, 4)])
    d.commit([("insert", "U", (top, 1)), ("insert", "U", (half + 5, 2)),
              ("insert", "U", (half, 3)), ("insert", "U", (7, 4))])
    assert sorted(r[0] for r in d.p.relation("Big").collect()) == [-(1 << 63), -(1 << 63) + 5,
                                                                   -1]
    info = d.p.info("U")
    (tmp_path / "u.csv").write_text(f"x,n\n{top - 1},5\n")
    d.p.insert("U", read_source(spark, parse_spec(f"csv:{tmp_path / 'u.csv'}"), info))
    d.commit([("insert", "U", (top - 1, 5))])
    out = parse_spec(f"csv:{tmp_path / 'big'}")
    write_sink(out, d.p.relation("Big"), d.p.info("Big"))
    written = sorted(int(r[0]) for r in spark.read.option("header", True).csv(out.target)
                     .collect())
    assert written == [half, half + 5, top - 1, top]
    (tmp_path / "bad.csv").write_text(f"x,n\n{1 << 64},5\n")
    with pytest.raises(Exception, match="column x: not a bit<64>"):
        read_source(spark, parse_spec(f"csv:{tmp_path / 'bad.csv'}"), info)
    too_big = spark.createDataFrame([(Decimal(1 << 64), 6)], "x decimal(20,0), n long")
    with pytest.raises(UpdateError, match="column x: out of range for bit<64>"):
        d.p.insert("U", too_big)
    d.check_relations()


GRAPH = """
input relation Edge(src: bigint, dst: bigint)
input relation Root(node: bigint)
input relation Named(id: bigint, name: string)
output relation Reach(node: bigint)
output relation ReachedName(name: string)

Reach(r) :- Root(r).
Reach(y) :- Reach(x), Edge(x, y).
ReachedName(n) :- Reach(x), Named(x, n).
"""


class _Graph:
    """An object shaped as a GraphFrame: `vertices` (id and other columns) and `edges` (src,
    dst and other columns) DataFrames. GraphFrames' jar is not on PyPI: its shape is enough."""

    def __init__(self, vertices, edges):
        self.vertices, self.edges = vertices, edges


def test_graphframe_shaped_inputs(spark):
    """A vertices frame `(id, name)` fills `Root(node)` through a column map, and a graph's
    vertices and edges go in by insert_graph (a one-column vertex relation takes `id`; an edge
    relation's columns are matched by name, the graph's other columns left out); deleting
    them works the same way; bad maps are refused naming the relation and column, and buffer
    nothing."""
    d = Differential(Program.load(GRAPH, spark), "api-graph")
    vertices = spark.createDataFrame([(1, "a"), (2, "b"), (3, "c"), (4, "d")],
                                     "id long, name string")
    edges = spark.createDataFrame([(1, 2, "follows"), (2, 3, "follows"), (4, 1, "likes")],
                                  "src long, dst long, relationship string")
    g = _Graph(vertices, edges)
    d.p.insert("Root", vertices.where("id = 1"), columns={"node": "id"})
    d.p.insert_graph(g, edges="Edge")
    d.p.insert("Named", vertices)  # same names: matched as they are
    d.commit([("insert", "Root", (1,))]
             + [("insert", "Edge", e) for e in [(1, 2), (2, 3), (4, 1)]]
             + [("insert", "Named", v) for v in [(1, "a"), (2, "b"), (3, "c"), (4, "d")]])

    with pytest.raises(UpdateError, match="relation 'Root' has no column id"):
        d.p.insert("Root", vertices, columns={"id": "id"})
    with pytest.raises(UpdateError, match=r"no column ident \(for node\)"):
        d.p.insert("Root", vertices, columns={"node": "ident"})
    with pytest.raises(UpdateError, match="`columns` maps a DataFrame's columns"):
        d.p.insert("Root", [(1,)], columns={"node": "id"})
    with pytest.raises(UpdateError, match="object has no `vertices`"):
        d.p.insert_graph(object(), vertices="Root")
    with pytest.raises(UpdateError, match=r"no column source \(for src\)"):
        d.p.insert_graph(g, vertices="Root", edges="Edge", edge_columns={"src": "source"})
    d.check_relations()

    # the whole graph's vertices as roots; then the graph taken out again
    d.p.insert_graph(_Graph(vertices.where("id = 4"), edges.limit(0)), vertices="Root",
                     edges="Edge")
    d.commit([("insert", "Root", (4,))])
    d.p.delete_graph(g, vertices="Root", edges="Edge")
    d.commit([("delete", "Root", (v,)) for v in (1, 2, 3, 4)]
             + [("delete", "Edge", e) for e in [(1, 2), (2, 3), (4, 1)]])
