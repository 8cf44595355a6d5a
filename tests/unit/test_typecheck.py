"""The type checker (ddlog/check/): every error with its message and
location, and the typed, inlined, positional result of well-typed programs."""
from __future__ import annotations

import glob
import os

import pytest

from ddlog.builtins.prelude import PRELUDE
from ddlog.syntax import ast
from ddlog.errors import TypeCheckError
from ddlog.check.inline import iter_nodes
from ddlog.syntax.parser import parse_program
from ddlog.check.rules import check_program
from ddlog.types import (BIGINT, BOOL, DOUBLE, FLOAT, STRING, USIZE, TFunc, TGroup, TInt, TOption,
                         TSet, TStruct, TTuple, TVec)

from tests.support import ROOT

U8 = TInt(False, 8)


def check(src: str):
    return check_program(parse_program(src, "t.dl"))


def where(src: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based (line, col) of the nth occurrence of `needle` in `src`."""
    i = -1
    for _ in range(nth):
        i = src.index(needle, i + 1)
    line = src.count("\n", 0, i) + 1
    col = i - (src.rfind("\n", 0, i) + 1) + 1
    return line, col


def fails(src: str, message: str, at: str, nth: int = 1) -> TypeCheckError:
    """The program is rejected with `message` (a substring) at the nth occurrence of `at`."""
    with pytest.raises(TypeCheckError) as info:
        check(src)
    e = info.value
    assert message in e.message, e.message
    assert (e.span.line, e.span.col) == where(src, at, nth), (e.span, e.message)
    assert e.source == src  # the CLI renders the offending line from it
    return e


def rule_of(src: str, n: int = -1) -> ast.Rule:
    return check(src).rules[n]


def user_calls(rule: ast.Rule, names) -> list:
    return [x for x in iter_nodes(rule) if isinstance(x, ast.Call) and x.func in names]


EDGE = "input relation Edge(src: bigint, dst: bigint)\n"


# ---------------------------------------------------------------------------------------------
# Example programs


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "programs", "*.dl"))),
                         ids=os.path.basename)
def test_example_programs_check(path):
    with open(path, encoding="utf-8") as f:
        prog = check_program(parse_program(f.read(), path))
    # (the prelude's functions share names with built-in ones, which calls may still name)
    functions = {f.name for f in prog.ast.functions if f.span.file != PRELUDE}
    for rule in prog.rules:
        assert not user_calls(rule, functions)
        for node in iter_nodes(rule):
            if isinstance(node, (ast.Var, ast.Wildcard, ast.Lit, ast.Interp, ast.BinOp,
                                 ast.UnOp, ast.Call, ast.FieldAccess, ast.TupleLit, ast.VecLit,
                                 ast.StructLit, ast.IfExpr, ast.MatchExpr, ast.Cast, ast.Lambda,
                                 ast.PWild, ast.PVar, ast.PLit, ast.PTuple, ast.PCtor)):
                assert node.ty is not None, node
        assert all(a.names is None for a in iter_nodes(rule) if isinstance(a, ast.Atom))


# ---------------------------------------------------------------------------------------------
# Types and declarations


def test_resolves_types():
    p = check("""
typedef Id = u32
typedef Pair = (Id, string)
typedef Shape = Circle{r: double} | Square{side: double}
typedef P = P{x: bigint, tags: Set<string>}
input relation R(a: Id, b: Pair, c: Vec<Option<Shape>>, d: bit<12>, e: signed<7>, f: P,
                 g: Group<bigint, string>, h: float, i: usize, j: ())
""")
    cols = dict(p.relations["R"].columns)
    assert cols["a"] == TInt(False, 32)
    assert cols["b"] == TTuple((TInt(False, 32), STRING))
    shape = p.types["Shape"]
    assert isinstance(shape, TStruct) and [c.name for c in shape.ctors] == ["Circle", "Square"]
    assert cols["c"] == TVec(TOption(shape))
    assert cols["d"] == TInt(False, 12) and cols["e"] == TInt(True, 7)
    assert cols["f"].ctors[0].fields == (("x", BIGINT), ("tags", TSet(STRING)))
    assert cols["g"] == TGroup(BIGINT, STRING)
    assert cols["h"] == FLOAT and cols["i"] == TInt(False, 64) and cols["j"] == TTuple(())
    assert p.relations["R"].role == "input"


@pytest.mark.parametrize("src, message, at", [
    ("input relation R(a: Foo)", "unknown type 'Foo'", "Foo"),
    ("input relation R(a: Vec<bigint, string>)", "type 'Vec' expects 1 type argument, found 2",
     "Vec"),
    ("input relation R(a: Group<bigint>)", "type 'Group' expects 2 type arguments, found 1",
     "Group"),
    ("typedef A = B\ntypedef B = A\ninput relation R(a: A)", "cyclic type alias: A -> B -> A",
     "A\ninput"),
    ("typedef L = Nil | Cons{h: bigint, t: L}", "recursive type 'L' is not supported",
     "L}"),
    ("input relation R(a: signed<200>)", "signed<N> width must be between 1 and 128, found 200",
     "signed"),
    ("typedef string = bigint", "cannot redefine built-in type 'string'", "typedef"),
])
def test_type_errors(src, message, at):
    fails(src, message, at)


@pytest.mark.parametrize("src, message, at, nth", [
    ("input relation R(a: bigint)\nrelation R(b: string)",
     "duplicate relation 'R' (first declared at t.dl:1:1)", "relation R(b", 1),
    ("typedef T = bigint\ntypedef T = string", "duplicate type 'T' (first declared at t.dl:1:1)",
     "typedef T = string", 1),
    ("function f(x: bigint): bigint = x\nfunction f(y: bigint): bigint = y",
     "duplicate function 'f' with the same parameter types (first declared at t.dl:1:1)",
     "function f(y", 1),
    ("typedef A = C{x: bigint}\ntypedef B = D | C",
     "duplicate constructor 'C' (first declared at t.dl:1:13)", "C", 2),
    ("input relation R(a: bigint, a: string)",
     "duplicate column 'a' in relation 'R' (first declared at t.dl:1:18)", "a: string", 1),
    ("typedef P = P{x: bigint, x: bigint}",
     "duplicate field 'x' in constructor 'P' (first declared at t.dl:1:15)", "x: bigint", 2),
    ("function f(x: bigint, x: bigint): bigint = x",
     "duplicate parameter 'x' in function 'f' (first declared at t.dl:1:12)", "x: bigint", 2),
    ("typedef T = Some{x: bigint} | Other", "constructor 'Some' is built in", "Some", 1),
])
def test_duplicate_declarations(src, message, at, nth):
    fails(src, message, at, nth)


def test_duplicate_ctor_in_one_type():
    fails("typedef A = C | C", "duplicate constructor 'C'", "C", 2)


# ---------------------------------------------------------------------------------------------
# Functions


def test_function_inlined_with_fresh_names():
    src = EDGE + """
output relation O(a: bigint, b: bigint)
function twice(x: bigint): bigint = x + x
function pick(o: Option<bigint>, y: bigint): bigint {
    match (o) { Some{y} -> y + twice(y), None -> y }
}
O(y, pick(Some{x}, y)) :- Edge(x, y).
"""
    rule = rule_of(src)
    assert not user_calls(rule, {"twice", "pick"})
    m = rule.head.args[1]
    assert isinstance(m, ast.MatchExpr) and m.ty == BIGINT
    # the argument Some{x} is substituted for `o`
    assert isinstance(m.scrutinee, ast.StructLit) and m.scrutinee.ty == TOption(BIGINT)
    some_arm, none_arm = m.arms
    # the function's own `y` is renamed apart from the rule's `y` (the second argument)
    pat_var = some_arm.pattern.fields[0][1]
    assert isinstance(pat_var, ast.PVar) and pat_var.name.startswith("__i")
    assert pat_var.name.endswith("_y")
    body = some_arm.body  # y' + (y' + y')
    assert isinstance(body, ast.BinOp) and body.left.name == pat_var.name
    assert body.right.left.name == pat_var.name and body.right.right.name == pat_var.name
    assert isinstance(none_arm.body, ast.Var) and none_arm.body.name == "y"  # the rule's y


def test_function_lambda_param_renamed():
    src = """
input relation R(k: string, v: bigint)
output relation O(k: string, s: bigint)
function total(g: Group<string, bigint>, x: bigint): bigint = g.sum_of(|v| v * x)
O(k, s) :- R(k, x), var g = x.group_by(k), var s = total(g, 3).
"""
    rule = rule_of(src)
    call = rule.body[-1].expr
    assert isinstance(call, ast.Call) and call.func == "sum_of" and call.ty == BIGINT
    lam = call.args[1]
    assert lam.params[0].startswith("__i") and lam.body.left.name == lam.params[0]
    assert isinstance(lam.body.right, ast.Lit) and lam.body.right.value == 3


def test_function_checked_against_declared_types():
    fails("function f(x: bigint): string = x + 1",
          "type mismatch: expected string, found bigint (result of function 'f')", "x + 1")
    fails("function f(x: bigint): bigint = y", "unknown variable 'y' in function 'f'", "y")


def test_unknown_and_recursive_functions():
    src = EDGE + "output relation O(a: bigint)\nO(foo(x)) :- Edge(x, _)."
    fails(src, "unknown function 'foo'", "foo(x)")
    fails("function f(x: bigint): bigint = f(x - 1)",
          "recursive function 'f' (f -> f)", "f(x - 1)")
    fails("function f(x: bigint): bigint = g(x)\nfunction g(x: bigint): bigint = f(x)",
          "recursive function 'f' (f -> g -> f)", "f(x)")


def test_user_function_argument_errors():
    src = EDGE + "output relation O(a: bigint)\nfunction f(x: bigint, s: string): bigint = x\n"
    fails(src + "O(f(x)) :- Edge(x, _).",
          "function 'f' expects 2 arguments (x: bigint, s: string), found 1", "f(x)")
    fails(src + "O(f(x, x)) :- Edge(x, _).",
          "type mismatch: expected string, found bigint (argument 's' of function 'f')",
          "x)")


def test_method_syntax_for_user_functions():
    src = EDGE + """output relation O(a: bigint)
function add(x: bigint, y: bigint): bigint = x + y
O(x.add(y)) :- Edge(x, y)."""
    head = rule_of(src).head.args[0]
    assert isinstance(head, ast.BinOp) and head.left.name == "x" and head.right.name == "y"


# ---------------------------------------------------------------------------------------------
# Rules: heads and atoms


def test_head_errors():
    base = EDGE + "output relation O(a: bigint, b: bigint)\n"
    fails(base + "Nope(x) :- Edge(x, _).", "unknown relation 'Nope'", "Nope")
    fails(base + "Edge(x, x) :- O(x, _).", "cannot derive input relation 'Edge'", "Edge(x, x)")
    fails(base + "O(x, y, z) :- Edge(x, y), Edge(y, z).",
          "relation 'O' expects 2 arguments, found 3", "O(x, y, z)")
    fails(base + "O(x, z) :- Edge(x, y).", "unbound variable 'z' in rule head", "z)")
    fails(base + "O(1, z).", "unbound variable 'z' in rule head", "z)")
    fails(base + "O(x, _) :- Edge(x, _).", "'_' is not allowed in a rule head", "_) :-")
    fails(base + "O(.a = x) :- Edge(x, _).", "missing column 'b' of 'O' in rule head", "O(.a")
    fails(base + "O(x, \"s\") :- Edge(x, _).",
          "type mismatch: expected bigint, found string (column 'b' of 'O')", "\"s\"")


def test_body_atom_errors():
    base = EDGE + "input relation N(name: string)\noutput relation O(a: bigint)\n"
    fails(base + "O(x) :- Edg(x, _).", "unknown relation 'Edg'", "Edg(")
    fails(base + "O(x) :- Edge(x).", "relation 'Edge' expects 2 arguments, found 1", "Edge(x)")
    fails(base + "O(x) :- Edge(x, _), N(x).",
          "type mismatch: expected string, found bigint (column 'name' of 'N')", "x).")
    fails(base + "O(x) :- Edge(.src = x, .weight = 1).", "relation 'Edge' has no column 'weight'",
          "1)")
    fails(base + "O(x) :- Edge(x, y + 1).",
          "unbound variable 'y': it must be bound by an earlier term", "y + 1")
    # an expression sees only variables bound before the atom
    fails(base + "O(x) :- Edge(x, x + 1).", "unbound variable 'x'", "x + 1")
    fails(base + "O(x) :- Edge(x, _), not Edge(x, y).",
          "variable 'y' in 'not Edge(..)' must be bound by an earlier term", "y)")
    fails(base + "O(x) :- Edge(x, _), not N(\"a\" ++ s).",
          "variable 's' in 'not N(..)' must be bound by an earlier term", "s)")


def test_named_atoms_become_positional():
    src = EDGE + "output relation O(a: bigint, b: bigint)\n" \
        "O(.b = y, .a = 1) :- Edge(.dst = y)."
    rule = rule_of(src)
    body = rule.body[0].atom
    assert body.names is None and isinstance(body.args[0], ast.Wildcard)
    assert body.args[0].ty == BIGINT and body.args[1].name == "y"
    assert rule.head.names is None
    assert [type(a) for a in rule.head.args] == [ast.Lit, ast.Var]
    assert rule.head.args[0].value == 1 and rule.head.args[1].name == "y"


def test_atom_binding_and_filters():
    src = EDGE + "input relation N(name: string, n: u8)\noutput relation O(a: bigint)\n" \
        "O(x) :- Edge(x, x), N(\"a\", 7), N(_, m), Edge(x, y), Edge(y + 1, _), not N(\"b\", m)."
    rule = rule_of(src)
    assert rule.body[0].atom.args[1].ty == BIGINT  # repeated: equality filter
    assert rule.body[1].atom.args[1].ty == U8  # constant takes the column type
    assert rule.body[2].atom.args[1].ty == U8
    assert rule.body[4].atom.args[0].ty == BIGINT


def test_fresh_var_repeated_in_atom_must_agree():
    src = "input relation M(a: bigint, b: string)\noutput relation O(a: bigint)\n" \
        "O(x) :- M(x, x)."
    fails(src, "type mismatch: expected string, found bigint (column 'b' of 'M')", "x)", 2)


def test_facts():
    rule = rule_of("output relation O(a: bigint, s: string, o: Option<u8>)\n"
                   "O(-3, \"x\", None).")
    assert rule.body == []
    a, s, o = rule.head.args
    assert a.ty == BIGINT and a.value == -3 and s.ty == STRING and o.ty == TOption(U8)


# ---------------------------------------------------------------------------------------------
# Rules: other body terms


def test_body_term_errors():
    base = EDGE + "output relation O(a: bigint)\n"
    fails(base + "O(x) :- Edge(x, y), x + y.",
          "type mismatch: expected bool, found bigint (a condition must be bool)", "x + y")
    fails(base + "O(x) :- Edge(x, _), x > z.",
          "unbound variable 'z': it must be bound by an earlier term", "z.")
    fails(base + "O(x) :- Edge(x, y), var x = y.", "variable 'x' is already bound", "var x")
    fails(base + "O(x) :- Edge(x, y), var v = FlatMap(y).",
          "FlatMap expects a Vec, Set or Map, found bigint", "y)", 2)
    fails(base + "O(x) :- Edge(x, y), var g = y.group_by(k).",
          "group_by key 'k' must be a variable bound by an earlier term", "k)")
    fails(base + "O(y) :- Edge(x, y), var g = y.group_by(x).",
          "variable 'y' is no longer bound after group_by (only 'x', 'g' are)", "y)")
    fails(base + "O(n) :- Edge(x, y), var n = y.group_by(x).count(), y > 0.",
          "variable 'y' is no longer bound after group_by", "y > 0")
    fails(base + "O(x) :- Edge(x, y), var v = None.", "cannot infer the type of None", "None")
    fails(base + "O(x) :- Edge(x, y), var v = [].",
          "cannot infer the type of an empty vector", "[]")


def test_assign_flatmap_groupby_types():
    src = """
input relation R(name: string, tags: Vec<string>, n: u8)
output relation O(k: string, c: usize, s: u8, t: Vec<(string, u8)>)
O(k, c, s, t) :- R(k, tags, n), var tag = FlatMap(tags), var d = n + 1,
                 var g = (tag, d).group_by(k),
                 var c = g.count(), var s = g.sum_of(|p| p.1), var t = g.to_vec().map_key().
"""
    with pytest.raises(TypeCheckError):
        check(src)  # map_key does not exist
    src = src.replace(".map_key()", "")
    rule = rule_of(src)
    flat, assign, group = rule.body[1:4]
    assert flat.expr.ty == TVec(STRING)
    assert assign.expr.ty == U8 and assign.expr.right.ty == U8
    assert group.expr.ty == TTuple((STRING, U8))
    assert rule.body[4].expr.ty == USIZE  # as DDlog's count
    s = rule.body[5].expr
    assert s.ty == U8 and s.args[1].ty.params[0] == TTuple((STRING, U8))
    assert rule.body[6].expr.ty == TVec(TTuple((STRING, U8)))


@pytest.mark.parametrize("keys, key_type", [
    ("k", STRING), ("k, n", TTuple((STRING, BIGINT))), ("", TTuple(())),
])
def test_group_key_types(keys, key_type):
    src = f"""
input relation R(k: string, n: bigint)
output relation O(g: Group<{key_type}, bigint>)
O(g) :- R(k, n), var g = n.group_by({keys}).
"""
    rule = rule_of(src)
    assert rule.body[-1].var == "g"
    assert rule.head.args[0].ty == TGroup(key_type, BIGINT)


def test_group_key_method_and_field():
    src = """
input relation R(k: string, n: bigint)
output relation O(k: string, n: bigint)
O(k2, m) :- R(k, n), var g = n.group_by(k, n), var k2 = g.key.0, var m = g.key().1.
"""
    rule = rule_of(src)
    k2 = rule.body[2].expr
    assert isinstance(k2.expr, ast.Call) and k2.expr.func == "key" and k2.ty == STRING
    assert rule.body[3].expr.ty == BIGINT


def test_chained_group_method():
    src = EDGE + "output relation O(a: bigint, n: usize)\n" \
        "O(x, n) :- Edge(x, y), var n = y.group_by(x).count_distinct()."
    rule = rule_of(src)
    grp, assign = rule.body[1:]
    assert isinstance(grp, ast.BodyGroupBy) and grp.keys[0].ty == BIGINT
    assert assign.expr.args[0].ty == TGroup(BIGINT, BIGINT) and assign.expr.ty == USIZE


# ---------------------------------------------------------------------------------------------
# Expressions


def expr_rule(expr: str, result: str = "bigint", extra: str = ""):
    """A rule computing `expr` over x: bigint, s: string, b: u8, f: double, o: Option<string>,
    v: Vec<bigint>."""
    return (extra + "input relation I(x: bigint, s: string, b: u8, f: double, o: Option<string>,"
            f" v: Vec<bigint>)\noutput relation O(r: {result})\n"
            f"O(r) :- I(x, s, b, f, o, v), var r = {expr}.")


def expr_of(expr: str, result: str = "bigint", extra: str = ""):
    return rule_of(expr_rule(expr, result, extra)).body[-1].expr


def expr_fails(expr: str, message: str, at: str, result: str = "bigint", extra: str = "",
               nth: int = 1):
    src = expr_rule(expr, result, extra)
    # locate `at` inside the expression (after `var r = `)
    start = src.index("var r = ") + len("var r = ")
    nth += src[:start].count(at)
    fails(src, message, at, nth)


def test_literal_typing():
    e = expr_of("b + 1", "u8")
    assert e.ty == U8 and e.right.ty == U8
    e = expr_of("1 + b", "u8")
    assert e.left.ty == U8
    e = expr_of("f * 2", "double")
    assert e.right.ty == DOUBLE and e.right.kind == "float" and e.right.value == 2.0
    assert expr_of("1 + 2").ty == BIGINT
    assert expr_of("8'd255", "bit<8>").ty == U8
    assert expr_of("8'sd-3", "signed<8>").ty == TInt(True, 8)
    e = expr_of("-x")
    assert isinstance(e, ast.UnOp) and e.ty == BIGINT
    assert expr_of("b == 200", "bool").right.ty == U8


def test_literal_out_of_range():
    expr_fails("b + 300", "literal 300 out of range for bit<8>", "300", "u8")
    expr_fails("b == -1", "literal -1 out of range for bit<8>", "-1", "bool")
    expr_fails("x + 99999999999999999999", "out of range for bigint", "9999")


def test_arithmetic_and_operators():
    expr_fails("x + s", "type mismatch: expected bigint, found string (operands of '+')", "s")
    expr_fails("s + s", "operator '+' expects numbers, found string (use ++ to concatenate",
               "s", "string")
    expr_fails("x + b", "type mismatch: expected bigint, found bit<8>", "b")
    assert expr_of("s ++ \"!\"", "string").ty == STRING
    assert expr_of("v ++ [1]", "Vec<bigint>").ty == TVec(BIGINT)
    expr_fails("x ++ x", "operator '++' expects strings, Vecs or bit<N>s, found bigint", "x")
    expr_fails("x == s", "type mismatch: expected bigint, found string (operands of '==')", "s",
               "bool")
    expr_fails("x and true", "type mismatch: expected bool, found bigint (operands of 'and')",
               "x", "bool")
    expr_fails("not x", "type mismatch: expected bool, found bigint", "x", "bool")
    expr_fails("f & f", "operator '&' expects integers, found double", "f", "double")
    assert expr_of("b << 2", "u8").ty == U8
    assert expr_of("~b", "u8").ty == U8
    expr_fails("-s", "operator '-' expects a number, found string", "s", "string")


def test_interpolation():
    e = expr_of('"${x}-${s}-${f}-${b == 1}"', "string")
    assert e.ty == STRING and e.parts[-1].ty == BOOL
    expr_fails('"${v}"', "cannot convert a value of type Vec<bigint> to a string", "v", "string")


def test_if():
    assert expr_of("if (x > 0) 1 else b as bigint").ty == BIGINT
    expr_fails("if (x) 1 else 2", "type mismatch: expected bool, found bigint (condition", "x")
    expr_fails('if (x > 0) 1 else "a"',
               "type mismatch: expected bigint, found string (both branches", '"a"')
    e = expr_of("if (x > 0) None else o", "Option<string>")
    assert e.then.ty == TOption(STRING)


SHAPE = "typedef Shape = Circle{r: double} | Rect{w: double, h: double} | Dot\n"


def test_match_typing_and_exhaustiveness():
    e = expr_of("match (o) { Some{t} -> len(t), None -> 0 }", "usize")
    assert e.ty == USIZE and e.arms[0].pattern.ty == TOption(STRING)
    assert e.arms[0].pattern.fields[0][1].ty == STRING
    assert expr_of("match (x) { 0 -> \"zero\", _ -> \"other\" }", "string").ty == STRING
    assert expr_of("match (x > 1) { true -> 1, false -> 2 }").ty == BIGINT
    assert expr_of("match ((x > 1, o)) { (true, _) -> 1, (false, Some{_}) -> 2, "
                   "(_, None) -> 3 }").ty == BIGINT
    expr_fails("match (o) { Some{t} -> 1 }",
               "non-exhaustive match: pattern `None` is not covered", "match")
    expr_fails("match (x) { 1 -> 1, 2 -> 2 }", "non-exhaustive match: pattern `_`", "match")
    expr_fails("match (x > 1) { true -> 1 }", "pattern `false` is not covered", "match")
    expr_fails("match ((x > 1, o)) { (true, _) -> 1, (false, None) -> 2 }",
               "pattern `(false, Some{_})` is not covered", "match")
    expr_fails("match (o) { Some{t} -> t, None -> 0 }",
               "type mismatch: expected string, found bigint (all arms", "0")
    expr_fails("match (o) { 1 -> 1, _ -> 0 }",
               "type mismatch: expected Option<string>, found bigint", "1 ->")
    expr_fails("match (x) { Some{t} -> 1, _ -> 0 }",
               "type mismatch: expected bigint, found Option constructor 'Some'", "Some")
    expr_fails("match (x) { (a, b) -> 1 }", "expected bigint, found a tuple pattern", "(a, b)")
    expr_fails("match (x) { Nope -> 1, _ -> 0 }", "unknown constructor 'Nope'", "Nope")


def test_match_on_user_enum():
    src = SHAPE + """input relation S(s: Shape)
output relation O(a: double)
O(a) :- S(s), var a = match (s) { Circle{r} -> r * r * 3.14, Rect{.h = h, .w = w} -> w * h,
                                  Dot -> 0 }.
"""
    m = rule_of(src).body[-1].expr
    rect = m.arms[1].pattern
    assert [n for n, _ in rect.fields] == ["w", "h"]  # normalised to declaration order
    assert m.arms[2].body.ty == DOUBLE
    fails(src.replace("Dot -> 0", "Rect{_, 1.0} -> 1"),
          "non-exhaustive match: pattern `Dot` is not covered", "match")
    fails(src.replace("Rect{.h = h, .w = w} -> w * h", "Rect{_, 1.0} -> 1.0"),
          "pattern `Rect{_, _}` is not covered", "match")


def test_casts():
    assert expr_of("b as bigint").ty == BIGINT
    assert expr_of("x as double", "double").ty == DOUBLE
    expr_fails("s as bigint", "cannot cast string to bigint: casts are only between numeric",
               "s as")


def test_option_and_struct_literals():
    src = SHAPE + """typedef P = P{x: bigint, name: string}
input relation I(x: bigint)
output relation O(p: P, o: Option<bigint>, s: Shape)
O(p, Some{x}, Rect{1, 2.5}) :- I(x), var p = P{.name = "a", .x = x}.
"""
    rule = rule_of(src)
    p = rule.body[-1].expr
    assert p.ty.name == "P" and [n for n, _ in p.fields] == ["x", "name"]
    some, rect = rule.head.args[1:]
    assert some.ty == TOption(BIGINT)
    assert rect.fields[0][1].ty == DOUBLE and rect.fields[0][1].value == 1.0
    fails(src.replace('P{.name = "a", .x = x}', 'P{.x = x}'),
          "missing field 'name' in constructor 'P'", "P{.x")
    fails(src.replace('P{.name = "a", .x = x}', 'P{x}'),
          "constructor 'P' expects 2 fields, found 1", "P{x}")
    fails(src.replace('P{.name = "a", .x = x}', 'P{.x = x, .nam = "a"}'),
          "constructor 'P' has no field 'nam'", '"a"')
    fails(src.replace('P{.name = "a", .x = x}', 'P{x, 1}'),
          "type mismatch: expected string, found bigint (field 'name' of 'P')", "1}")
    fails(src.replace('P{.name = "a", .x = x}', 'Q{x}'), "unknown constructor 'Q'", "Q{x}")


def test_none_with_expected_type_is_fine():
    rule = rule_of("output relation O(o: Option<bigint>)\nO(None).")
    assert rule.head.args[0].ty == TOption(BIGINT)


def test_field_access():
    src = SHAPE + """typedef P = P{x: bigint, name: string}
input relation I(p: P, s: Shape, t: (bigint, string))
output relation O(a: bigint, b: string, c: double)
O(p.x, t.1, s.r) :- I(p, s, t).
"""
    fails(src, "field 'r' is not in every constructor of 'Shape' (constructor 'Rect' lacks it)",
          "s.r")
    fails(src.replace("p.x", "p.y"), "type 'P' has no field 'y'", "p.y")
    fails(src.replace("t.1", "t.2"), "tuple index 2 out of range for (bigint, string)", "t.2")
    fails(src.replace("p.x", "t.x"), "type (bigint, string) has no field 'x'", "t.x")
    rule = rule_of(src.replace("s.r", "3.0"))
    assert rule.head.args[0].ty == BIGINT and rule.head.args[1].ty == STRING


def test_tuples_and_vectors():
    e = expr_of("(b, 1)", "(u8, bigint)")
    assert e.ty == TTuple((U8, BIGINT))
    e = expr_of("[b, 1, 2]", "Vec<u8>")
    assert e.ty == TVec(U8) and e.items[1].ty == U8
    expr_fails('[1, "a"]', "type mismatch: expected bigint, found string (vector elements)",
               '"a"', "Vec<bigint>")


def test_set_literal_from_context():
    rule = rule_of("output relation O(s: Set<u8>)\nO([1, 2]).")
    assert rule.head.args[0].ty == TSet(U8) and rule.head.args[0].items[0].ty == U8


def test_closures_as_values_need_their_types():
    expr_fails("|y| y + 1", "a closure used as a value needs the types of its parameters",
               "|y|")
    assert expr_of("|y: bigint| y + 1", "function(bigint): bigint").ty == \
        TFunc((BIGINT,), BIGINT)
    fails(expr_rule("|y: bigint| y + 1", "|bigint|: string"), "type mismatch: expected "
          "function(bigint): string, found function(bigint): bigint (column 'r' of 'O')", "r)")
    expr_fails("|y: bigint| v.nth(0).unwrap_or(y)", "a closure used as a value can capture "
               "integers, bools, strings and closures; 'v' is a Vec<bigint>", "|y",
               "|bigint|: bigint")


def test_builtins():
    assert expr_of("len(s) + v.len()", "usize").ty == USIZE
    assert expr_of("s.contains(\"a\") and v.contains(1)", "bool").ty == BOOL
    assert expr_of("o.unwrap_or(\"-\")", "string").ty == STRING
    assert expr_of("o.is_some()", "bool").ty == BOOL
    assert expr_of("to_string(f) ++ s.to_uppercase().trim()", "string").ty == STRING
    assert expr_of("min(b, 3)", "u8").ty == U8
    assert expr_of("abs(f)", "double").ty == DOUBLE
    assert expr_of("s.substr(1, 2)", "string").ty == STRING
    assert expr_of("v.push(3)", "Vec<bigint>").ty == TVec(BIGINT)
    expr_fails("len(x)", "function 'len' expects a string, Vec, Set or Group as argument 1, "
               "found bigint", "x")
    expr_fails("x.len()", "function 'len' expects a string, Vec, Set or Group as the receiver",
               "x")
    expr_fails("substr(s, 1)", "function 'substr' expects 3 arguments, found 2: "
               "substr(string, integer, integer) -> string", "substr")
    expr_fails("s.substr(1)", "method 'substr' expects 2 arguments after the receiver, found 1",
               "s.substr")
    expr_fails("s.substr(1, \"a\")", "function 'substr' expects an integer position as "
               "argument 2, found string", '"a"', "string")
    assert expr_of("s.substr(x, len(s) - 1)", "string").ty == STRING
    expr_fails("v.contains(\"a\")", "type mismatch: expected bigint, found string", '"a"',
               "bool")
    expr_fails("min(x, s)", "type mismatch: expected bigint, found string (arguments of 'min')",
               "s)")
    expr_fails("to_string(v)", "function 'to_string' expects bool, an integer, a float or "
               "string as argument 1, found Vec<bigint>", "v)", "string")
    expr_fails("x.count()", "function 'count' expects a Group (bound by group_by) as the "
               "receiver, found bigint", "x")


def test_group_method_errors():
    base = """input relation R(k: string, n: bigint)
output relation O(k: string, n: bigint)
O(k, m) :- R(k, n), var g = n.group_by(k), var m = """
    fails(base + "g.sum_of(|v| \"a\").", "function 'sum_of' expects a lambda returning a "
          "number, found string", '"a"')
    fails(base + "g.sum_of(1).", "function 'sum_of' expects a closure `|x| ...` as argument 1",
          "1)")
    fails(base + "g.count(1).", "function 'count' expects a closure `|x| ...` as argument 1",
          "1).")
    rule = rule_of(base + "g.arg_max(|v| -v) + g.min() + g.first() + "
                   "g.to_vec().len() as bigint.")
    assert rule.body[-1].expr.ty == BIGINT
    rule = rule_of("input relation R(k: bigint, n: string)\noutput relation O(n: string)\n"
                   "O(m) :- R(k, n), var m = n.group_by(k).max().")
    assert rule.body[-1].expr.ty == STRING


def test_errors_render_with_source_line():
    src = EDGE + "output relation O(a: bigint)\nO(x) :- Edge(x, y), x + y."
    with pytest.raises(TypeCheckError) as info:
        check(src)
    text = info.value.format()
    assert text.startswith("t.dl:3:21: error: type mismatch")
    assert "O(x) :- Edge(x, y), x + y." in text and "^^^^^" in text


def test_float_literals_follow_context():
    src = "input relation I(f: float)\noutput relation O(f: float)\nO(f * 2.0 + 1) :- I(f)."
    head = rule_of(src).head.args[0]
    assert head.ty == FLOAT and head.left.right.ty == FLOAT and head.right.ty == FLOAT
    expr_fails("x * 2.5", "type mismatch: expected bigint, found double", "2.5")


def test_cast_to_unknown_type():
    expr_fails("x as Foo", "unknown type 'Foo'", "Foo")


def test_group_by_message_hides_desugared_names():
    src = EDGE + "output relation O(a: bigint)\n" \
        "O(n) :- Edge(x, y), var n = y.group_by(x).count(), y > 0."
    e = fails(src, "variable 'y' is no longer bound after group_by (only 'x', 'n' are)",
              "y > 0")
    assert "__g" not in e.message


def test_struct_alias_is_the_same_type():
    src = """typedef P = P{x: bigint}
typedef Q = P
input relation I(q: Q)
output relation O(p: P)
O(p) :- I(p), p.x > 0.
O(P{1}).
"""
    prog = check(src)
    assert prog.types["Q"] == prog.types["P"] and prog.rules[1].head.args[0].ty.name == "P"


def test_inlined_copies_share_no_nodes():
    src = EDGE + """output relation O(a: bigint, b: bigint)
function sq(x: bigint): bigint = x * x
O(sq(x + 1), sq(y)) :- Edge(x, y)."""
    rule = rule_of(src)
    a, b = rule.head.args
    assert a.left is not a.right and a.left == a.right  # two copies of `x + 1`
    nodes = [id(n) for n in iter_nodes(rule)]
    assert len(nodes) == len(set(nodes))
    assert a.ty == b.ty == BIGINT


def test_checked_program_tables():
    prog = check(EDGE + "typedef T = string\noutput relation O(t: T)\nO(\"a\").")
    assert list(prog.relations) == ["Edge", "O"]
    assert prog.relations["O"].columns == (("t", STRING),) and prog.types["T"] == STRING
    # as in DDlog, each relation is also a type of its records
    assert prog.types["O"] == TStruct("O", ()) and prog.types["O"].ctors[0].fields == \
        (("t", STRING),)
    assert [r.name for r in prog.inputs()] == ["Edge"]


def test_relations_of_a_record_type_and_primary_keys():
    # `relation R[T]`: T's fields are the columns, T's constructor names the records;
    # `R[x]` binds (in a body) or gives (in a head) the whole record
    prog = check("""
typedef P = P{a: usize, b: string}
input relation In(key: usize, s: string)
primary key (r) (r.key, r.s.len())
output relation O[In]
O[r] :- In[r].
output relation Q[P]
Q[P{k, s}] :- In(k, s).
""")
    assert prog.relations["O"].columns == prog.relations["In"].columns
    assert prog.relations["O"].record == "In" and prog.relations["Q"].record == "P"
    assert str(prog.keys["In"].ty) == "(bit<64>, bit<64>)"
    # a relation of a type of several constructors holds its values in one column
    assert check("typedef E = A | B\noutput relation R[E]").relations["R"].shape == "value"
    fails("output relation R(x: bigint)\nprimary key (r) r.x", "only an input relation has a "
          "primary key; 'R' is an output relation", "primary")
    fails("input relation R(x: bigint)\nprimary key (r) y", "unknown variable 'y' in the "
          "primary key of 'R'", "y", nth=3)  # after those of `primary key`
    fails("input relation R(x: bigint)\noutput relation S(x: bigint)\nS[y] :- R(y).",
          "type mismatch: expected S, found bigint", "y]")


def test_float_literals_with_a_width_have_their_type():
    prog = check("output relation F(a: float, b: double)\nF(32'f0.5, -64'f2.5).\n")
    a, b = prog.rules[0].head.args if prog.rules else prog.facts["F"][0]
    assert (a.ty, b.ty) == (FLOAT, DOUBLE)
    fails("output relation F(a: double)\nF(32'f0.5).\n", "expected double", "32'f0.5")


# ---------------------------------------------------------------------------------------------
# Generic typedefs and Result


def test_generic_typedefs_are_instantiated_where_used():
    prog = check("typedef P<'A, 'B> = P{a: 'A, b: 'B}\ntypedef V<'X> = Vec<'X>\n"
                 "output relation O(p: P<bigint, string>, v: V<u8>, r: Result<bool, string>)\n"
                 "O(P{1, \"x\"}, [1], Ok{true}).\n")
    p, v, r = [t for _, t in prog.relations["O"].columns]
    assert str(p) == "P<bigint, string>" and p.ctors[0].fields == (("a", BIGINT), ("b", STRING))
    assert v == TVec(U8)
    assert str(r) == "Result<bool, string>"
    assert p != check("typedef P<'A, 'B> = P{a: 'A, b: 'B}\n"
                      "output relation O(p: P<string, string>)\nO(P{\"1\", \"x\"}).\n"
                      ).relations["O"].columns[0][1]


@pytest.mark.parametrize("src, message, at", [
    ("typedef P<'A> = P{a: 'A}\noutput relation O(p: P)\n", "needs its type arguments", "P)"),
    ("typedef P<'A> = P{a: 'A}\noutput relation O(p: P<u8, u8>)\n",
     "expects 1 type argument, found 2", "P<u8"),
    ("typedef P<'A> = P{a: 'B}\n", "type variable 'B is not a parameter of type 'P'", "'B"),
    ("typedef P<'A, 'A> = P{a: 'A}\n", "names a type variable twice", "typedef"),
    ("typedef L<'A> = L{x: 'A, next: Option<L<'A>>}\n", "recursive type 'L'", "L<'A>>"),
])
def test_generic_typedef_errors(src, message, at):
    fails(src, message, at)


def test_a_generic_constructor_without_context_needs_its_types_from_its_fields():
    fails("output relation O(b: bool)\nO(r.is_ok()) :- var r = Ok{1}.\n",
          "cannot infer the type of 'Ok{..}' (Result<'V, 'E>): nothing gives 'E", "Ok{1}")


def test_question_mark_on_a_result_returns_the_err():
    prog = check("function f(x: Result<u8, string>): Result<bigint, string> {\n"
                 "    var v = x?; Ok{v as bigint + 1} }\n"
                 "output relation O(r: Result<bigint, string>)\nO(f(Err{\"no\"})).\n")
    assert str(prog.relations["O"].columns[0][1]) == "Result<bigint, string>"


def test_base64_meaning():
    from ddlog.builtins.codecs import _decode_python
    from ddlog.values import Record

    assert _decode_python("TEST") == Record("Ok", ((76, 68, 147),))
    assert _decode_python("AAECAw==") == Record("Ok", ((0, 1, 2, 3),))
    assert _decode_python("Hello !@#") == Record("Err", ("Invalid byte 32 at position 5",))
    assert _decode_python("abcde") == Record("Err", ("Invalid length",))
    assert _decode_python("TR==") == Record("Err", ("Invalid last byte 82 at position 1",))


def test_any_needs_its_types_from_the_context():
    fails("input relation I(x: bigint)\noutput relation O(b: bool)\n"
          "O(true) :- I(x), var a = x.to_any().\n",
          "to_any(x) needs an Any from the context", "x.to_any()")
    fails("input relation I(a: Any)\noutput relation O(b: bool)\n"
          "O(true) :- I(a), var v = from_any(a).\n",
          "from_any(a) needs its type from the context: an Option<T>", "from_any(a)")
    fails("input relation I(x: bigint)\noutput relation O(v: Option<bigint>)\n"
          "O(from_any(x)) :- I(x).\n", "expects Any as argument 1, found bigint", "x)")


def test_a_program_declaring_its_own_result_keeps_it():
    # the prelude's Result and its functions step aside for the program's own
    prog = check("typedef Result = Ok | Err{why: string}\n"
                 "output relation O(r: Result)\nO(Err{\"no\"}).\n")
    t = prog.relations["O"].columns[0][1]
    assert str(t) == "Result" and not t.args and [c.name for c in t.ctors] == ["Ok", "Err"]
