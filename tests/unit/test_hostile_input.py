"""Hostile and malformed input to the front end and the command language (no JVM): every one
gets one located message, never a traceback, a hang or a memory blow-up.

The fuzz tests at the end mutate the example programs and their command files (seeded, a few
hundred cases each): whatever comes out, an error must be a DDlogError that names
`file:line:col`.
"""
from __future__ import annotations

import glob
import os
import random

import pytest

from ddlog.syntax.commands import parse_commands
from ddlog.app.dat import read_dat
from ddlog.app.database import Database, Transaction
from ddlog.errors import DDlogError
from ddlog.plan.explain import explain_text
from ddlog.plan import load_file, load_text
from ddlog.limits import EXCERPT_WIDTH, MAX_EXPRESSION_NODES, MAX_NESTING
from ddlog.app.shell import feed_commands, record_argument
from ddlog.syntax.source import decode
from tests.support import seed_for

from tests.support import ROOT
PROGRAMS = sorted(glob.glob(os.path.join(ROOT, "programs", "*.dl")))

HEAD = "input relation R(x: bigint, s: string, b: bool)\noutput relation S(x: bigint)\n"


def error_of(text: str, file: str = "t.dl") -> DDlogError:
    with pytest.raises(DDlogError) as info:
        load_text(text, file)
    return info.value


def located(err: DDlogError, file: str = "t.dl") -> str:
    """The formatted message, checked to start with `file:line:col: error:`."""
    text = err.format()
    assert err.span is not None and err.span.line >= 1 and err.span.col >= 1, text
    assert text.startswith(f"{file}:{err.span.line}:{err.span.col}: error: "), text
    return text


# ---------------------------------------------------------------------------------------------
# Nesting: deep expressions are refused with a message, shallower ones work in every pass


@pytest.mark.parametrize("expr", [
    " + ".join(["x"] * 400),
    "(" * 500 + "x" + ")" * 500,
    "-" + "-(" * 300 + "x" + ")" * 300,
    " or ".join(["(" * 500 + "b" + ")" * 500] * 3),
], ids=["plus", "parens", "negations", "nested-in-a-chain"])
def test_deep_expressions_are_refused(expr):
    err = error_of(HEAD + f"S(1) :- R(x, s, b), var y = {expr}.\n")
    assert "nested too deeply" in located(err)


@pytest.mark.parametrize("op,operand", [("or", "b"), ("and", "b"), ("++", "s"), ("|", "x"),
                                         ("&", "x"), ("^", "x")])
def test_a_flat_chain_of_an_associative_operator_is_one_level(op, operand):
    """A generated condition lists its cases in one chain (`x == 0 or x == 1 or ...`): the
    user wrote no nesting, so it is taken (rebuilt as a balanced tree, which every pass
    walks in few levels), up to MAX_CHAIN operands."""
    from ddlog.limits import MAX_CHAIN
    from ddlog.syntax import ast
    from ddlog.syntax.parser import parse_program

    text = HEAD + f"S(1) :- R(x, s, b), var y = {f' {op} '.join([operand] * 1500)}.\n"
    load_text(text, "t.dl")  # checked and compiled
    depth, todo = 0, [(parse_program(text, "t.dl"), 0)]
    while todo:
        node, d = todo.pop()
        d += isinstance(node, ast.BinOp)
        depth = max(depth, d)
        todo += [(c, d) for c in node.children()]
    assert depth <= 12  # a balanced tree of 1,500 operands
    err = error_of(HEAD + f"S(1) :- R(x, s, b), var y = "
                   f"{f' {op} '.join([operand] * (MAX_CHAIN + 5))}.\n")
    assert f"a chain of more than {MAX_CHAIN} operators" in located(err)


def test_deep_interpolations_work_or_are_refused():
    from tests.oracle import evaluate

    def nest(n: int) -> str:
        s = '"${x}"'
        for _ in range(n):
            s = '"${' + s + '}"'
        return s
    # was a crash
    fe = load_text(HEAD + f"S(y) :- R(x, s, b), var y = {nest(65)}.len() as bigint.\n")
    assert evaluate(fe.program, {"R": {(123, "a", True)}})["S"] == {(3,)}
    err = error_of(HEAD + f"S(1) :- R(x, s, b), var y = {nest(300)}.\n")
    assert "nested too deeply" in located(err)


def test_unterminated_deep_interpolation_is_refused_without_recursion():
    err = error_of(HEAD + 'S(1) :- R(x, s, b), var y = ' + '"${' * 5000 + ".\n")
    assert "nested too deeply" in located(err)


def test_expressions_just_under_the_limit_go_through_every_pass():
    from tests.oracle import evaluate

    n = MAX_NESTING // 2
    sums = " + ".join(["x"] * n)
    interp = '"${x}"'
    for _ in range(20):
        interp = '"${' + interp + '}"'
    cp = load_text(HEAD + f"S(y) :- R(x, s, b), var y = {sums}.\n"
                   f"S(y) :- R(x, s, b), var t = {interp}, var y = t.len() as bigint.\n")
    explain_text(cp)
    out = evaluate(cp.program, {"R": {(1, "a", True)}})
    assert out["S"] == {(n,), (1,)}


def test_deep_commands_are_refused():
    for text in ["insert R(" + "(" * 300 + "1" + ")" * 300 + ", \"a\", true);",
                 'insert R(1, ' + '"${' * 300 + "x" + '}"' * 300 + ', true);']:
        with pytest.raises(DDlogError) as info:
            parse_commands(text, "c.dat")
        assert "nested too deeply" in located(info.value, "c.dat")


# ---------------------------------------------------------------------------------------------
# Literals and inlining that would take unbounded memory or time


@pytest.mark.parametrize("literal,message", [
    ("99999999999'd1", "bit width must be at most 128"),
    ("9" * 5000, "is too large"),
    ("0x" + "f" * 5000, "is too large"),
    ("128'd" + "0" * 5000 + "1", "R"),  # leading zeros are fine: the value fits
    ("8'd" + "9" * 5000, "is too large"),
], ids=["width", "decimal", "hex", "zeros", "width-digits"])
def test_huge_literals(literal, message):
    text = f"output relation R(x: bigint)\nR({literal}).\n"
    err = error_of(text)
    assert message in located(err)


def test_huge_type_width():
    err = error_of("input relation R(x: bit<" + "9" * 50 + ">)\n")
    assert "width must be between 1 and 128" in located(err)


def test_exponential_inlining_is_refused_quickly():
    fs = ["function f0(x: bigint): bigint { x + 1 }"]
    fs += [f"function f{i}(x: bigint): bigint {{ f{i - 1}(x) + f{i - 1}(x) }}"
           for i in range(1, 21)]
    err = error_of("\n".join(fs) + "\ninput relation R(x: bigint)\n"
                   "output relation S(x: bigint)\nS(f20(x)) :- R(x).\n")
    text = located(err)
    assert f"the limit is {MAX_EXPRESSION_NODES}" in text and "calling 'f1" in text


# ---------------------------------------------------------------------------------------------
# Messages


def test_a_long_line_is_shown_around_the_column_only():
    err = error_of("input relation R(x: bigint)\nR(1) :- " + "x" * 1_000_000 + "`\n")
    text = located(err)
    assert len(text) < 400, len(text)
    line, caret = text.splitlines()[1:3]
    assert len(line) <= EXCERPT_WIDTH + 10 and line.rstrip().endswith("`")
    assert line[caret.index("^")] == "`"


def test_a_byte_order_mark_is_ignored_and_bad_bytes_are_located():
    assert decode(b"\xef\xbb\xbfinput relation R(x: bigint)\n", "a.dl").startswith("input")
    with pytest.raises(DDlogError) as info:
        decode(b"input relation R(x: bigint)\n// \xff\n", "a.dl")
    assert str(info.value).startswith("a.dl:2:4: error: the file is not UTF-8 text")


def test_lower_case_relation_names_get_a_hint():
    with pytest.raises(DDlogError) as info:
        parse_commands("insert edge(1, 2);", "c.dat")
    assert "names start with an upper-case letter" in located(info.value, "c.dat")


def test_a_5mb_program_is_stratified_in_linear_time():
    """Stratification used to walk strata x rules (4 minutes for 5 MB); counting the work it
    does (not the seconds it takes) keeps that from coming back."""
    from ddlog import strata
    from ddlog.plan.strata import rule_deps

    class Counting(list):
        touched = 0

        def __iter__(self):
            Counting.touched += len(self)
            return super().__iter__()

    n = 400
    text = "input relation R0(x: bigint)\n" + "".join(
        f"relation R{i}(x: bigint)\nR{i}(x) :- R{i - 1}(x).\n" for i in range(1, n))
    program = load_text(text).program
    rules = Counting(rule_deps(program.rules))
    assert len(strata.stratify(list(program.relations), rules)) == n
    assert Counting.touched <= 4 * len(rules)


# ---------------------------------------------------------------------------------------------
# Commands that must take exactly what they say


def test_insert_argument_is_one_record():
    assert record_argument("insert", "Edge(9, 9)").atom.relation == "Edge"
    assert record_argument("insert", "Edge(9, 9);").atom.relation == "Edge"
    for text in ["Edge(9, 9); clear Edge; clear Root", "Edge(1, 2), Edge(3, 4)",
                 "Edge(1, 2); insert Edge(3, 4)"]:
        with pytest.raises(DDlogError):
            record_argument("insert", text)


@pytest.fixture(scope="module")
def reach_db():
    return Database.for_program(os.path.join(ROOT, "programs", "reach.dl"))


def test_nested_start_is_refused(reach_db, tmp_path):
    text = "start;\ninsert Edge(1, 2);\nstart;\ninsert Edge(2, 3);\ncommit;\n"
    path = tmp_path / "nested.dat"
    path.write_text(text)
    with pytest.raises(DDlogError) as info:
        read_dat(reach_db, str(path))
    assert "3:1" in str(info.value) and "already in progress" in str(info.value)
    with pytest.raises(DDlogError) as info:
        feed_commands(reach_db, Transaction(), text, "f.dat")
    assert str(info.value).startswith("f.dat:3:1: error: start: a transaction is already")


# ---------------------------------------------------------------------------------------------
# Fuzzing: mutated programs and command streams


_CHARS = list("(){}[]\"$\\,;.:-+*/<>=!|&^~09azAZ_#' \n\t") + ["${", "/*", "*/", "//", "\x00",
                                                                 "é", "\ufeff"]


def mutate(rng: random.Random, text: str) -> str:
    """One random edit: delete, insert, duplicate or swap a slice, truncate, or flip a case."""
    if not text:
        return rng.choice(_CHARS)
    i = rng.randrange(len(text))
    j = min(len(text), i + rng.randint(1, 12))
    kind = rng.randrange(6)
    if kind == 0:
        return text[:i] + text[j:]
    if kind == 1:
        return text[:i] + rng.choice(_CHARS) + text[i:]
    if kind == 2:
        return text[:j] + text[i:j] * rng.randint(1, 40) + text[j:]
    if kind == 3:
        k = rng.randrange(len(text))
        a, b = sorted((i, k))
        return text[:a] + text[b:b + (j - i)] + text[a + (j - i):b] + text[a:a + (j - i)] + \
            text[b + (j - i):]
    if kind == 4:
        return text[:i]
    return text[:i] + text[i:j].swapcase() + text[j:]


def _check_program(text: str, where: str) -> None:
    try:
        explain_text(load_text(text, "fuzz.dl"))
    except DDlogError as err:
        located(err, "fuzz.dl")
    except Exception as err:  # a traceback the user would see
        raise AssertionError(f"{where}: {type(err).__name__}: {err}\n--- program\n{text}")


def test_fuzz_programs():
    rng = random.Random(seed_for("fuzz/programs"))
    texts = [open(p, encoding="utf-8").read() for p in PROGRAMS]
    for case in range(300):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 4)):
            text = mutate(rng, text)
        _check_program(text, f"case {case}")


def test_fuzz_command_streams():
    rng = random.Random(seed_for("fuzz/commands"))
    dbs = {}
    for p in PROGRAMS:
        dat = p[:-3] + ".dat"
        if os.path.exists(dat):
            dbs[p] = (Database.for_program(p), open(dat, encoding="utf-8").read())
    keys = sorted(dbs)
    for case in range(300):
        db, text = dbs[rng.choice(keys)]
        for _ in range(rng.randint(1, 4)):
            text = mutate(rng, text)
        try:
            feed_commands(db, Transaction(), text, "fuzz.dat")
        except DDlogError as err:
            located(err, "fuzz.dat")
        except Exception as err:
            raise AssertionError(f"case {case}: {type(err).__name__}: {err}\n--- text\n{text}")


def test_every_example_program_still_loads():
    for p in PROGRAMS:
        load_file(p)
