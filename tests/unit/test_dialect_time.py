"""DDlog's relation kinds and its outer time: facts of input relations, `multiset` relations
(records with multiplicities), `stream` relations (only the current transaction's records),
delayed relations `R-N` and differentiation `S'`. Each form: what the parser makes of it, the
checker's errors with their location, and its value through the oracle over transactions (the
engine's differential test `temporal` runs the same forms on Spark, and tests/e2e/test_shell.py
prints them as DDlog does)."""
from __future__ import annotations

from collections import Counter

import pytest

from ddlog.errors import DDlogError, StratificationError
from ddlog.plan import load_text
from ddlog.syntax import ast
from ddlog.syntax.commands import parse_commands
from ddlog.syntax.parser import parse_program
from ddlog.types import BIGINT, STRING
from ddlog.values.render import dump_lines
from tests.oracle.data import apply_updates, load_dat
from tests.oracle.evaluate import evaluate
from tests.unit.test_dialect_blocks import parse_fails
from tests.unit.test_typecheck import check, fails


# ---------------------------------------------------------------------------------------------
# Syntax


def test_relation_kinds_delays_and_differentiation_parse():
    prog = parse_program("""
input multiset M(x: bigint)
output stream S(x: bigint)
stream T(x: bigint)
relation R(x: bigint)
R(x) :- R-2(x), T'(x), lib::Q-1(x).
""")
    assert [(r.role, r.kind) for r in prog.relations] == [
        ("input", "multiset"), ("output", "stream"), ("internal", "stream"),
        ("internal", "relation")]
    atoms = [item.atom for item in prog.rules[0].body]
    assert [(a.relation, a.delay, a.diff) for a in atoms] == [
        ("R", 2, False), ("T", 0, True), ("lib::Q", 1, False)]


def test_delay_zero_and_operators_in_expressions():
    parse_fails("relation R(x: bigint)\nR(x) :- R-0(x).", "`R-0` is R itself", "R-0")
    # outside an atom, `A-1` stays a subtraction and `'` a bit literal's quote
    prog = parse_program("function f(x: bit<8>): bit<8> = x-1 + 8'd2")
    assert isinstance(prog.functions[0].body, ast.BinOp)


def test_wildcards_in_binding_patterns_after_the_first_part():
    src = """
input relation R(t: (bigint, bigint, bigint))
output relation O(a: bigint, b: bigint)
O(a, b) :- R(t), (var a, _, _) = t, Some{(var b, _, var c)} = Some{t}, c > 0.
"""
    out = evaluate(check(src), {"R": {((1, 2, 3),), ((4, 5, 0),)}})
    assert out["O"] == {(1, 1)}


def test_string_gaps():
    """`\\<blanks>\\` inside a string stands for nothing (Haskell's string gap, which DDlog's
    strings have); without the closing backslash a line's end continues the string."""
    prog = parse_program('function f(x: bigint): string = "a:\\\n    \\${x}:\\\n   b"')
    body = prog.functions[0].body
    assert isinstance(body, ast.Interp) and body.parts[0] == "a:" and body.parts[2] == ":b"


def test_delete_key_and_modify_end_with_a_comma_inside_a_transaction():
    cmds = parse_commands('start;\ndelete_key R 1,\nmodify R 2 <- R{.x = 3},\ncommit;\n')
    assert [type(c).__name__ for c in cmds] == ["Start", "DeleteKey", "Modify", "Commit"]


# ---------------------------------------------------------------------------------------------
# Checking


def test_facts_of_input_relations_are_the_first_transaction():
    src = """
typedef Cat = A | B
input relation Word(w: string, c: Cat)
Word("hello", A).
Word("bye", B).
output relation O(w: string)
O(w) :- Word(w, A).
"""
    program = check(src)
    assert program.input_facts == {"Word": [("hello", ast_record("A")), ("bye", ast_record("B"))]}
    assert all(r.head.relation != "Word" for r in program.rules)
    # the oracle's command files start from them; a transaction may delete them
    inputs = load_dat('start;\ninsert Word("x", A);\ndelete Word("bye", B);\ncommit;\n', program)
    assert evaluate(program, inputs)["O"] == {("hello",), ("x",)}
    assert inputs["Word"] == {("hello", ast_record("A")), ("x", ast_record("A"))}


def ast_record(name: str):
    from ddlog.values import Record

    return Record(name, ())


def test_input_relation_rules_and_facts_errors():
    fails("input relation I(x: bigint)\ninput relation J(x: bigint)\nI(x) :- J(x).",
          "cannot derive input relation 'I'", "I(x) :-")
    with pytest.raises(DDlogError) as info:
        check("input relation I(x: bigint)\nI(1 + 2).")
    assert (info.value.span.line, info.value.span.col) == (2, 3), info.value.message


def test_stream_rules_errors():
    base = "input stream S(x: bigint)\ninput relation R(x: bigint)\n"
    fails(base + "output relation O(x: bigint)\nO(x) :- R(x), S(x).",
          "reads the stream 'S', so it computes a stream, but 'O' is a relation", "S(x).")
    fails(base + "output stream O(x: bigint)\nO(x) :- R(x).",
          "'O' is a stream, but the body of this rule reads no stream", "O(x) :-")
    fails(base + "output relation O(x: bigint)\nO(x) :- R'(x).",
          "differentiation (R') applies to streams; 'R' is a relation", "R'(x)")
    fails(base + "output relation O(x: bigint)\nO-1(x) :- R(x).",
          "O-1 cannot be derived", "O-1(x)")
    fails(base + "output relation O(x: bigint)\nO(x) :- Q-1(x).", "unknown relation 'Q'", "Q-1")
    fails("input multiset M(x: bigint)\nprimary key (r) r.x",
          "a primary key makes one record per key; 'M' is a multiset", "primary key")


def test_a_recursive_multiset_is_refused():
    src = "input relation E(a: bigint)\nmultiset M(a: bigint)\nM(a) :- E(a).\nM(a) :- M(a)."
    with pytest.raises(StratificationError) as info:
        load_text(src, "t.dl")
    assert "multiset 'M' is recursive" in info.value.message
    assert (info.value.span.line, info.value.span.col) == (3, 1)
    # a relation may read its own past: R-1 is not recursion
    program = check("input relation E(a: bigint)\noutput relation R(a: bigint)\n"
                    "R(a) :- E(a).\nR(a + 1) :- R-1(a), a < 3.")
    load_text("input relation E(a: bigint)\noutput relation R(a: bigint)\n"
              "R(a) :- E(a).\nR(a + 1) :- R-1(a), a < 3.")
    assert program.relations["R-1"].delay_of == "R"


# ---------------------------------------------------------------------------------------------
# Values over transactions (the oracle)

MULTISETS = """
input multiset M(x: bigint, y: bigint)
input relation E(a: bigint, b: bigint)
output multiset P(x: bigint)
P(x) :- M(x, _).
output multiset J(x: bigint, b: bigint)
J(x, b) :- M(x, y), E(y, b).
J(x, x) :- E(x, _).
output relation D(x: bigint)
D(x) :- P(x).
output relation N(a: bigint)
N(a) :- E(a, _), not P(a).
"""


def test_multisets_count_and_relations_see_what_is_present():
    program = check(MULTISETS)
    ups = [("insert", "M", (1, 2)), ("insert", "M", (1, 2)), ("insert", "M", (1, 3)),
           ("delete", "M", (5, 5)), ("insert", "E", (2, 7)), ("insert", "E", (5, 1))]
    inputs = apply_updates({"M": Counter(), "E": set()}, ups)
    assert inputs["M"] == Counter({(1, 2): 2, (1, 3): 1, (5, 5): -1})
    again = load_dat("start;\ninsert M(1, 2);\ndelete M(1, 3);\ncommit;\n", program, inputs)
    assert again["M"] == Counter({(1, 2): 3, (5, 5): -1})
    out = evaluate(program, inputs)
    assert out["P"] == Counter({(1,): 3, (5,): -1})
    # a join multiplies multiplicities, rules add them
    assert out["J"] == Counter({(1, 7): 2, (2, 2): 1, (5, 5): 1, (5, 1): -1})
    # a relation over a multiset, and a negation of one, see records of positive multiplicity
    assert out["D"] == {(1,)}
    assert out["N"] == {(2,), (5,)}
    info = program.relations["P"]
    assert dump_lines(info, [(1,), (1,), (1,), (4,)]) == ["P{.x = 1} +3", "P{.x = 4}"]


STREAMS = """
input stream S(k: bigint, v: bigint)
input relation Z(k: bigint, city: string)
output stream C(k: bigint, city: string, v: bigint)
C(k, c, v) :- S(k, v), Z(k, c).
output stream W(k: bigint, t: bigint)
W(k, t) :- S(k, v), var t = v.group_by(k).sum_of(|x| x).
relation Fold(k: bigint, v: bigint)
Fold(k, t) :- Total-1(k, t).
Fold(k, v) :- S'(k, v).
output relation Total(k: bigint, t: bigint)
Total(k, t) :- Fold(k, v), var t = v.group_by(k).sum_of(|x| x).
output relation Before(k: bigint, city: string)
Before(k, c) :- Z-2(k, c).
"""


def test_streams_hold_one_transaction_and_delays_the_past():
    program = check(STREAMS)
    text = """
start; insert Z(1, "a"), insert S(1, 2), insert S(1, 5), insert S(1, 5), insert S(2, 1); commit;
start; insert S(1, 3); commit;
start; insert Z(2, "b"); commit;
start; insert S(2, 4); commit;
"""
    committed: dict = {"S": Counter(), "Z": set()}
    previous = None
    seen = []
    for txn in text.strip().split("\n"):
        committed = load_dat(txn, program, committed)
        previous = evaluate(program, committed, previous=previous)
        seen.append(previous)
    first, second, third, fourth = seen
    # a stream counts its records; a group over it holds each valuation once, its weight
    # beside it, which sum_of ignores (2 + 5), as DDlog's
    assert first["C"] == Counter({(1, "a", 2): 1, (1, "a", 5): 2})
    assert first["W"] == Counter({(1, 7): 1, (2, 1): 1})
    # S' is a relation: the two records (1, 5) are one there
    assert first["Total"] == {(1, 7), (2, 1)}
    assert second["S"] == Counter({(1, 3): 1}) and second["C"] == Counter({(1, "a", 3): 1})
    assert second["Total"] == {(1, 10), (2, 1)}  # 7 from before, 3 now
    assert third["S"] == Counter() and third["Total"] == {(1, 10), (2, 1)}
    # Z-2 is Z of two transactions ago: Z(2, "b") arrives in the third
    assert second["Before"] == set() and third["Before"] == fourth["Before"] == {(1, "a")}
    assert third["Z-1"] == {(1, "a")} and fourth["Z-1"] == {(1, "a"), (2, "b")}
    assert fourth["C"] == Counter({(2, "b", 4): 1}) and fourth["Total"] == {(1, 10), (2, 5)}


INSPECT_LOG = "#[has_side_effects]\nextern function log(filename: string, msg: string): ()\n"


def test_inspect_is_a_relation_of_the_valuations_at_its_point(tmp_path):
    """`Inspect f(..)` leaves the rule as it is without it, and an internal multiset of the
    variables bound at that point (groups left out) that the Inspect reads."""
    from tests.oracle.evaluate import evaluate

    (tmp_path / "inspect_log.dl").write_text(INSPECT_LOG)
    src = ("import inspect_log as log\n"
           "input relation R(x: bigint, s: string)\noutput relation O(s: string, n: u64)\n"
           "O(s, n) :- R(x, s), Inspect log::log(\"f\", \"${x}${ddlog_weight}\"),\n"
           "           var n = x.group_by(s).count(),\n"
           "           Inspect log::log(\"f\", \"${ddlog_timestamp}: ${s}=${n}\").\n")
    (tmp_path / "p.dl").write_text(src)
    fe = load_text(src, str(tmp_path / "p.dl"))
    program = fe.program
    first, second = program.inspections
    assert program.relations[first.relation].columns == (("x", BIGINT), ("s", STRING))
    assert program.relations[second.relation].kind == "multiset"
    assert [n for n, _ in program.relations[second.relation].columns] == ["s", "n"]
    assert first.call.func == "inspect_log::log"
    out = evaluate(program, {"R": {(1, "a"), (2, "a"), (5, "b")}})
    assert out["O"] == {("a", 2), ("b", 1)}
    assert out[first.relation] == Counter({(1, "a"): 1, (2, "a"): 1, (5, "b"): 1})
    assert out[second.relation] == Counter({("a", 2): 1, ("b", 1): 1})


@pytest.mark.parametrize("inspect, message, at", [
    ('Inspect log("${x}")', "Inspect calls a function for its effect on each change, one of: "
                            "inspect_log::log(string, string)", "Inspect"),
    ('Inspect { 1 }', "Inspect calls a function for its effect", "Inspect"),
    ('Inspect log::log("f", x)', "argument 2 of 'inspect_log::log'", "x)"),
    ('Inspect log::log("f")', "'inspect_log::log' takes 2 arguments, found 1", "log::log"),
])
def test_inspect_errors(tmp_path, inspect, message, at):
    (tmp_path / "inspect_log.dl").write_text(INSPECT_LOG)
    src = ("import inspect_log as log\ninput relation R(x: bigint)\n"
           f"output relation O(x: bigint)\nO(x) :- R(x), {inspect}.\n")
    with pytest.raises(DDlogError) as info:
        load_text(src, str(tmp_path / "p.dl"))
    assert message in info.value.message, info.value.message
    line, col = info.value.span.line, info.value.span.col
    assert (line, src.splitlines()[line - 1][col - 1:].startswith(at)) == (4, True)


def test_a_relation_or_constructor_may_be_called_inspect():
    parse_program("input relation Inspect(x: bigint)\noutput relation O(x: bigint)\n"
                  "O(x) :- Inspect(x).")
