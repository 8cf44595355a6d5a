"""The parser: every construct of the grammar, precedence, comments, interpolation, desugaring,
spans and error messages."""
from __future__ import annotations

import json
import logging

import pytest
from lark import logger as lark_logger

from ddlog.syntax import ast
from ddlog.errors import ParseError, Span
from ddlog.syntax.parser import parse_expr, parse_program
from ddlog.grammar import build_debug, load_grammar, program_parser

# ---------------------------------------------------------------------------------------------
# A compact rendering of AST nodes (without spans), so that expected shapes read easily.


def sx(n) -> str:
    if isinstance(n, list):
        return "[" + " ".join(sx(x) for x in n) + "]"
    if isinstance(n, str):
        return json.dumps(n)
    if isinstance(n, ast.Var):
        return n.name
    if isinstance(n, ast.Wildcard):
        return "_"
    if isinstance(n, ast.Lit):
        if n.kind == "string":
            return json.dumps(n.value)
        if n.kind == "bool":
            return "true" if n.value else "false"
        if n.width is not None:
            return f"{'s' if n.signed else 'u'}{n.width}:{n.value}"
        return repr(n.value)
    if isinstance(n, ast.Interp):
        return "(interp " + " ".join(sx(p) for p in n.parts) + ")"
    if isinstance(n, ast.BinOp):
        return f"({n.op} {sx(n.left)} {sx(n.right)})"
    if isinstance(n, ast.UnOp):
        return f"({'neg' if n.op == '-' else n.op} {sx(n.operand)})"
    if isinstance(n, ast.Call):
        head = f".{n.func}" if n.method else f"call {n.func}"
        return "(" + " ".join([head, *(sx(a) for a in n.args)]) + ")"
    if isinstance(n, ast.FieldAccess):
        return f"(. {sx(n.expr)} {n.name})"
    if isinstance(n, ast.TupleLit):
        return "(tuple" + "".join(" " + sx(x) for x in n.items) + ")"
    if isinstance(n, ast.VecLit):
        return "(vec" + "".join(" " + sx(x) for x in n.items) + ")"
    if isinstance(n, (ast.StructLit, ast.PCtor)):
        fields = [sx(v) if k is None else f".{k}={sx(v)}" for k, v in n.fields]
        return "(" + " ".join([n.ctor, *fields]) + ")"
    if isinstance(n, ast.IfExpr):
        return f"(if {sx(n.cond)} {sx(n.then)} {sx(n.other)})"
    if isinstance(n, ast.MatchExpr):
        arms = " ".join(f"[{sx(a.pattern)} -> {sx(a.body)}]" for a in n.arms)
        return f"(match {sx(n.scrutinee)} {arms})"
    if isinstance(n, ast.Ascribe):
        return f"(: {sx(n.expr)} {sx(n.target)})"
    if isinstance(n, ast.Cast):
        return f"(as {sx(n.expr)} {sx(n.target)})"
    if isinstance(n, ast.Lambda):
        return f"(lambda {' '.join(n.params)} {sx(n.body)})"
    if isinstance(n, ast.TypeName):
        return n.name + ("<" + ", ".join(sx(a) for a in n.args) + ">" if n.args else "")
    if isinstance(n, ast.BitsType):
        return f"{'signed' if n.signed else 'bit'}<{n.width}>"
    if isinstance(n, ast.TupleType):
        return "(" + ", ".join(sx(t) for t in n.items) + ")"
    if isinstance(n, ast.PWild):
        return "_"
    if isinstance(n, ast.PVar):
        return n.name
    if isinstance(n, ast.PLit):
        return sx(n.lit)
    if isinstance(n, ast.PTuple):
        return "(ptuple" + "".join(" " + sx(x) for x in n.items) + ")"
    if isinstance(n, ast.Atom):
        if n.names is None:
            return f"{n.relation}(" + ", ".join(sx(a) for a in n.args) + ")"
        return f"{n.relation}(" + ", ".join(f".{k}={sx(a)}" for k, a in zip(n.names, n.args)) + ")"
    if isinstance(n, ast.BodyAtom):
        return ("not " if n.negated else "") + sx(n.atom)
    if isinstance(n, ast.BodyCond):
        return f"cond {sx(n.expr)}"
    if isinstance(n, ast.BodyAssign):
        return f"var {n.var} = {sx(n.expr)}"
    if isinstance(n, ast.BodyFlatMap):
        return f"var {n.var} = FlatMap({sx(n.expr)})"
    if isinstance(n, ast.BodyGroupBy):
        return f"var {n.var} = group_by({sx(n.expr)}; {', '.join(k.name for k in n.keys)})"
    if isinstance(n, ast.Rule):
        if not n.body:
            return sx(n.head) + "."
        return sx(n.head) + " :- " + ", ".join(sx(b) for b in n.body) + "."
    raise TypeError(f"no rendering for {n!r}")


def e(text: str) -> str:
    return sx(parse_expr(text))


def rule(text: str) -> str:
    (r,) = parse_program(text).decls
    return sx(r)


def one(text: str):
    (d,) = parse_program(text).decls
    return d


def err(text: str, expr: bool = False) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_expr(text) if expr else parse_program(text)
    return info.value


def at(err: ParseError) -> tuple[int, int]:
    return err.span.line, err.span.col


# ---------------------------------------------------------------------------------------------
# The grammar itself


@pytest.mark.parametrize("which", ["program", "commands"])
def test_grammar_is_lalr_without_conflicts(which):
    # Lark resolves shift/reduce conflicts silently (as shift) unless in debug mode, where it
    # logs them: build in debug mode and fail on any.
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Collect()
    old = lark_logger.level
    lark_logger.addHandler(handler)
    lark_logger.setLevel(logging.DEBUG)
    try:
        build_debug(which)
    finally:
        lark_logger.removeHandler(handler)
        lark_logger.setLevel(old)
    assert not [r for r in records if "conflict" in r.lower()]


def test_load_grammar_and_cached_parser():
    assert "program: decl*" in load_grammar("ddlog")
    assert "commands: command*" in load_grammar("commands")
    assert program_parser() is program_parser()


def test_parser_tables_are_stored_and_a_damaged_store_is_rebuilt(tmp_path, monkeypatch):
    from ddlog.syntax.parser import parse_text
    from ddlog.syntax.scanner import Located
    from ddlog.grammar import PROGRAM_STARTS, _build, program_grammar

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = "input relation R(x: bigint)\nS(x) :- R(x), x > 1.\n"
    expected = program_parser().parse(text, start="program")
    built = _build(program_grammar(), PROGRAM_STARTS)
    [stored] = (tmp_path / "ddlog").glob("lark-*")
    assert not list((tmp_path / "ddlog").glob("*.tmp"))
    loaded = _build(program_grammar(), PROGRAM_STARTS)
    assert built.parse(text, start="program") == expected
    assert loaded.parse(text, start="program") == expected
    bad = "input relation R(x: bigint"
    with pytest.raises(ParseError) as fresh:
        parse_program(bad, "p.dl")
    with pytest.raises(ParseError) as from_store:  # errors name what was expected, as before
        parse_text(bad, "program", Located("p.dl", bad), lark=loaded)
    assert str(from_store.value) == str(fresh.value)
    stored.write_bytes(stored.read_bytes()[:100])
    assert _build(program_grammar(), PROGRAM_STARTS).parse(text, start="program") == expected
    assert stored.stat().st_size > 100  # written whole again


# ---------------------------------------------------------------------------------------------
# Declarations


@pytest.mark.parametrize("text, expected", [
    ("bigint", "bigint"), ("string", "string"), ("bool", "bool"), ("float", "float"),
    ("double", "double"), ("u8", "u8"), ("s64", "s64"), ("usize", "usize"),
    ("bit<32>", "bit<32>"), ("signed<16>", "signed<16>"), ("(bigint, string)", "(bigint, string)"),
    ("()", "()"), ("(bigint,)", "(bigint)"), ("(bigint)", "bigint"),
    ("Vec<string>", "Vec<string>"), ("Set<(u8, bool)>", "Set<(u8, bool)>"),
    ("Option<bit<8>>", "Option<bit<8>>"), ("Group<bigint, string>", "Group<bigint, string>"),
    ("Vec<Vec<Set<u8>>>", "Vec<Vec<Set<u8>>>"), ("Point", "Point"), ("ip_addr_t", "ip_addr_t"),
])
def test_types(text, expected):
    d = one(f"relation R(x: {text})")
    assert sx(d.columns[0].type) == expected


def test_tuple_type_shapes():
    assert one("typedef T = ()").alias == ast.TupleType([], Span("<input>", 1, 13, 1, 15))
    assert isinstance(one("typedef T = (u8,)").alias, ast.TupleType)


def test_typedef_alias():
    d = one("typedef ip_t = bit<32>")
    assert (d.name, sx(d.alias), d.ctors) == ("ip_t", "bit<32>", None)
    d = one("typedef Other = Point")  # an upper-case name alone is an alias
    assert (d.name, sx(d.alias), d.ctors) == ("Other", "Point", None)
    d = one("typedef T = Vec<(bigint, string)>")
    assert sx(d.alias) == "Vec<(bigint, string)>"


def test_typedef_constructors():
    d = one("typedef Shape = Circle{r: double} | Rect{w: double, h: double,} | Empty")
    assert d.alias is None
    assert [(c.name, [(f.name, sx(f.type)) for f in c.fields]) for c in d.ctors] == [
        ("Circle", [("r", "double")]), ("Rect", [("w", "double"), ("h", "double")]),
        ("Empty", [])]
    d = one("typedef Color = Red | Green | Blue")
    assert [c.name for c in d.ctors] == ["Red", "Green", "Blue"]
    d = one("typedef Unit = Unit{}")
    assert [(c.name, c.fields) for c in d.ctors] == [("Unit", [])]
    d = one("typedef P = P{x: bigint, y: Option<string>}")
    assert [(f.name, sx(f.type)) for f in d.ctors[0].fields] == [("x", "bigint"),
                                                                   ("y", "Option<string>")]


def test_relations():
    p = parse_program("""
        input relation Edge(src: bigint, dst: bigint)
        output relation Path(src: bigint, dst: bigint,)
        relation Tmp()
        relation Names(n: string)
    """)
    assert [(r.role, r.name, [c.name for c in r.columns]) for r in p.relations] == [
        ("input", "Edge", ["src", "dst"]), ("output", "Path", ["src", "dst"]),
        ("internal", "Tmp", []), ("internal", "Names", ["n"])]


def test_functions():
    f = one("function add(x: bigint, y: bigint): bigint { x + y }")
    assert (f.name, [p.name for p in f.params], sx(f.result), sx(f.body)) == (
        "add", ["x", "y"], "bigint", "(+ x y)")
    f = one("function neg(x: signed<8>): signed<8> = -x")
    assert (sx(f.params[0].type), sx(f.body)) == ("signed<8>", "(neg x)")
    f = one("function zero(): bigint = 0")
    assert (f.params, sx(f.body)) == ([], "0")


def test_program_keeps_declaration_order_and_source():
    text = "input relation A(x: bigint)\nfunction f(): bool = true\nA(1).\ntypedef T = u8\n"
    p = parse_program(text, file="prog.dl")
    assert [type(d).__name__ for d in p.decls] == ["RelationDecl", "FunctionDecl", "Rule",
                                                   "TypeDef"]
    assert (p.file, p.source) == ("prog.dl", text)
    assert p.decls[2].span.file == "prog.dl"
    assert parse_program("").decls == []
    assert parse_program("  // nothing\n/* at all */").decls == []


def test_functions_without_a_result_type_return_unit():
    f = one("function f(x: bigint) { () }")
    assert (sx(f.result), sx(f.body)) == ("()", "(tuple)")


def test_a_reference_head_may_follow_a_function_body():
    p = parse_program("function f(x: u8): u8 = x\n&R(1).\n&R(x), S(x) :- T(x).")
    assert [sx(d) for d in p.decls[1:]] == ["R(1).", "R(x) :- T(x).", "S(x) :- T(x)."]
    assert sx(parse_program("function f(x: u8): u8 = x & y\nR(1).").decls[0].body) == \
        "(& x y)"


def test_function_body_then_rule_needs_no_separator():
    p = parse_program("function f(x: bigint): bigint = x\nR(x) :- S(x).")
    assert [type(d).__name__ for d in p.decls] == ["FunctionDecl", "Rule"]
    p = parse_program("function f(): Option<bigint> = None\nR(1).")
    assert sx(p.decls[0].body) == "(None)"


# ---------------------------------------------------------------------------------------------
# Rules


def test_facts():
    assert rule('R(1, "a").') == 'R(1, "a").'
    assert rule("R().") == "R()."
    assert rule('R(.x = 1, .y = "a").') == 'R(.x=1, .y="a").'
    assert rule("R(-1, 2.5, true, [1, 2], (1, \"a\"), Some{3}, None).") == (
        'R(-1, 2.5, true, (vec 1 2), (tuple 1 "a"), (Some 3), (None)).')


def test_body_items():
    assert rule("R(x, z) :- E(x, y), R(y, z).") == "R(x, z) :- E(x, y), R(y, z)."
    assert rule("R(x) :- E(x, _), not F(x, 1).") == "R(x) :- E(x, _), not F(x, 1)."
    assert rule("R(x) :- E(x), x > 1, x != 3.") == "R(x) :- E(x), cond (> x 1), cond (!= x 3)."
    assert rule("R(y) :- E(x), var y = x + 1.") == "R(y) :- E(x), var y = (+ x 1)."
    assert rule("R(y) :- E(v), var y = FlatMap(v).") == "R(y) :- E(v), var y = FlatMap(v)."
    assert rule("R(x) :- E(.a = x, .b = 1).") == "R(x) :- E(.a=x, .b=1)."
    assert rule("R(x + 1, f(x)) :- E(x * 2).") == "R((+ x 1), (call f x)) :- E((* x 2))."


def test_body_predicates_may_start_like_atoms():
    # an upper-case name not followed by `(` is a constructor, so this is a predicate
    assert rule("R(x) :- E(x), x == None, Red != x.") == (
        "R(x) :- E(x), cond (== x (None)), cond (!= (Red) x).")
    assert rule("R(x) :- E(x), not x.b.") == "R(x) :- E(x), cond (not (. x b))."
    assert rule("R(x) :- E(x), P{x} == x.") == "R(x) :- E(x), cond (== (P x) x)."


def test_group_by():
    assert rule("R(a, g) :- P(n, a), var g = n.group_by(a).") == (
        "R(a, g) :- P(n, a), var g = group_by(n; a).")
    assert rule("R(g) :- P(n, a), var g = (n, a).group_by().") == (
        "R(g) :- P(n, a), var g = group_by((tuple n a); ).")
    assert rule("R(g) :- P(n, a), var g = (n + 1).group_by(a, n).") == (
        "R(g) :- P(n, a), var g = group_by((+ n 1); a, n).")


def test_chained_group_method_is_desugared():
    r = one("R(a, c) :- P(n, a), var c = n.group_by(a).count().")
    assert sx(r) == ("R(a, c) :- P(n, a), var __g0 = group_by(n; a), "
                     "var c = (.count __g0).")
    gb, assign = r.body[1], r.body[2]
    assert isinstance(gb, ast.BodyGroupBy) and isinstance(assign, ast.BodyAssign)
    call = assign.expr
    assert call.method and call.func == "count"
    assert call.args == [ast.Var("__g0", call.args[0].span)]
    # fresh names are distinct within a program
    p = parse_program("""
        R(a, s) :- P(n, a), var s = (n, a).group_by(a).sum_of(|v| v.0).
        Q(m) :- P(n, a), var m = n.group_by().max().
    """)
    assert sx(p.rules[0]) == ("R(a, s) :- P(n, a), var __g0 = group_by((tuple n a); a), "
                              "var s = (.sum_of __g0 (lambda v (. v 0))).")
    assert sx(p.rules[1]) == "Q(m) :- P(n, a), var __g1 = group_by(n; ), var m = (.max __g1)."


def test_group_by_errors():
    ex = err("R(g) :- P(n, a), var g = n.group_by(a + 1).")
    assert ex.message == "group_by keys must be variables"
    assert at(ex) == (1, 37)
    ex = err("R(c) :- P(n, a), var c = n.group_by(a).count() + 1.")
    assert "group_by is only allowed as" in ex.message
    assert at(ex) == (1, 26)
    ex = err("R(c) :- P(n, a), n.group_by(a) == n.")
    assert "group_by is only allowed as" in ex.message
    assert "only allowed" in err("x.group_by(y)", expr=True).message


def test_rule_end_dot_and_field_dot():
    assert rule("R(x) :- S(t), var x = t.0.") == "R(x) :- S(t), var x = (. t 0)."
    assert rule("R(x) :- S(t), var x = t.0.1.\n") == "R(x) :- S(t), var x = (. (. t 0) 1)."
    assert rule("R(x) :- S(p), var x = p.name.") == "R(x) :- S(p), var x = (. p name)."
    assert rule("R(x) :- S(x), x > 1.") == "R(x) :- S(x), cond (> x 1)."
    p = parse_program("R(x) :- S(x).\nfunction f(): bigint = 1\nT(1).")
    assert len(p.decls) == 3
    # a `.` directly followed by a name is a field access, so rules need a space between them
    assert at(err("R(1).S(2).")) == (1, 5)


def test_identifier_kinds():
    assert e("_x") == "_x"
    assert isinstance(parse_expr("_"), ast.Wildcard)
    assert e("Foo") == "(Foo)"
    assert e("foo(1)") == "(call foo 1)"
    # keywords are only keywords where they can occur: these are ordinary variables
    assert rule("R(input) :- S(input, start, bit, output).") == (
        "R(input) :- S(input, start, bit, output).")
    assert e("x.input + relation") == "(+ (. x input) relation)"


# ---------------------------------------------------------------------------------------------
# Expressions


@pytest.mark.parametrize("text, expected", [
    ("a + b * c", "(+ a (* b c))"),
    ("a * b + c", "(+ (* a b) c)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a / b % c", "(% (/ a b) c)"),
    ("a ++ b + c", "(++ a (+ b c))"),  # DDlog's table: `++` below `+` and the shifts
    ("a << b ++ c", "(++ (<< a b) c)"),
    ("a << 1 + 2", "(<< a (+ 1 2))"),
    ("a >> b << c", "(<< (>> a b) c)"),
    ("a & b << c", "(& a (<< b c))"),
    ("a ^ b & c", "(^ a (& b c))"),
    ("a | b ^ c", "(| a (^ b c))"),
    ("a | b == c", "(| a (== b c))"),  # DDlog's table: `&`, `^`, `|` below comparisons
    ("a & b ^ c | d", "(| (^ (& a b) c) d)"),
    ("a == b and c != d", "(and (== a b) (!= c d))"),
    ("a < b or c >= d and e <= f", "(or (< a b) (and (>= c d) (<= e f)))"),
    ("a > b", "(> a b)"),
    ("not a and b", "(and (not a) b)"),
    ("not a == b", "(== (not a) b)"),  # DDlog's table: `not` binds tighter than `==`
    ("not a.b()", "(not (.b a))"),
    ("a => b or c => d", "(or (not (or (not a) (or b c))) d)"),  # `=>` loosest, as `not x or y`
    ("a == b == c", "(== (== a b) c)"),
    ("not not a", "(not (not a))"),
    ("a or b or c", "(or (or a b) c)"),
    # chains are parsed flat and nested by precedence: mixed levels and `not` inside them
    ("a and not b == c or d", "(or (and a (== (not b) c)) d)"),
    ("-a + 1 < b * 2 and not not c", "(and (< (+ (neg a) 1) (* b 2)) (not (not c)))"),
    ("a => b or c and d | e ^ f & g == h ++ i << j + k * l",
     "(or (not a) (or b (and c (| d (^ e (& f (== g (++ h (<< i (+ j (* k l)))))))))))"),
    ("a * b + c << d ++ e == f & g ^ h | i and j or k => l",
     "(or (not (or (and (| (^ (& (== (++ (<< (+ (* a b) c) d) e) f) g) h) i) j) k)) l)"),
    ("a - b + c * d / e % f - g", "(- (+ (- a b) (% (/ (* c d) e) f)) g)"),
    ("-a * b", "(* (neg a) b)"),
    ("- - a", "(neg (neg a))"),
    ("~a & b", "(& (~ a) b)"),
    ("-x.f", "(neg (. x f))"),
    ("-x as u8", "(neg (as x u8))"),
    ("x as u8 as bigint", "(as (as x u8) bigint)"),
    ("x as bit<8> + 1", "(+ (as x bit<8>) 1)"),
    ("x as u8 < y", "(< (as x u8) y)"),
    ("x as u8 >> 2", "(>> (as x u8) 2)"),
    ("x as signed<32>", "(as x signed<32>)"),
    ("x as Color", "(as x Color)"),
    ("(a + b) * c", "(* (+ a b) c)"),
    ("a.b.c", "(. (. a b) c)"),
    ("a.0", "(. a 0)"),
    ("a.0.1", "(. (. a 0) 1)"),
    ("a.f(1, 2)", "(.f a 1 2)"),
    ("a.f().g", "(. (.f a) g)"),
    ("(a).len()", "(.len a)"),
    ("\"ab\".len()", '(.len "ab")'),
    ("f()", "(call f)"),
    ("f(a, b + 1,)", "(call f a (+ b 1))"),
    ("()", "(tuple)"),
    ("(a)", "a"),
    ("(a,)", "(tuple a)"),
    ("(a, b)", "(tuple a b)"),
    ("(a, (b, c),)", "(tuple a (tuple b c))"),
    ("[]", "(vec)"),
    ("[1, 2, 3,]", "(vec 1 2 3)"),
    ("P{1, \"a\"}", '(P 1 "a")'),
    ("P{.x = 1, .y = \"a\"}", '(P .x=1 .y="a")'),
    ("P{}", "(P)"),
    ("None", "(None)"),
    ("Some{x}", "(Some x)"),
    ("Some{Some{1}}", "(Some (Some 1))"),
    ("{ a + 1 }", "(+ a 1)"),
    ("|v| v.1", "(lambda v (. v 1))"),
    ("g.sum_of(|v| v * 2)", "(.sum_of g (lambda v (* v 2)))"),
])
def test_expressions(text, expected):
    assert e(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("(1, 2): (u8, u8) < (3, 4)", "(< (: (tuple 1 2) (u8, u8)) (tuple 3 4))"),
    ("x + y: u8", "(+ x (: y u8))"),
    ("x: u8 >> 2", "(>> (: x u8) 2)"),
    ("[[1]]: Vec<Vec<u8>> == y", "(== (: (vec (vec 1)) Vec<Vec<u8>>) y)"),
    ("x: Vec<Set<u8>>>>2", "(>> (: x Vec<Set<u8>>) 2)"),
    ("a >> b >> c", "(>> (>> a b) c)"),
])
def test_ascriptions_bind_as_tightly_as_casts(text, expected):
    assert e(text) == expected


def test_a_shift_is_two_touching_closers():
    ex = err("4 > > 1", expr=True)
    assert ex.message == "unexpected '>': expected an operand"
    assert at(ex) == (1, 5)


def test_comparisons_do_not_associate():
    ex = err("a < b < c", expr=True)
    assert ex.message.startswith("unexpected '<'")
    assert at(ex) == (1, 7)
    ex = err("a == b <= c", expr=True)
    assert at(ex) == (1, 8)
    ex = err("x or not a + 1 < b != c", expr=True)
    assert ex.message.startswith("unexpected '!=': comparisons do not associate")
    assert at(ex) == (1, 20)
    assert e("a == not b") == "(== a (not b))"


def test_operators_nested_by_precedence_span_their_operands():
    x = parse_expr("a +\n b * c - d")
    assert x.span == Span("<input>", 1, 1, 2, 11)
    assert x.left.span == Span("<input>", 1, 1, 2, 7)
    assert x.left.right.span == Span("<input>", 2, 2, 2, 7)
    n = parse_expr("not a == b and c")
    assert n.left.span == Span("<input>", 1, 1, 1, 11)
    assert n.left.left.span == Span("<input>", 1, 1, 1, 6)


@pytest.mark.parametrize("text, expected", [
    ("if (c) a else b", "(if c a b)"),
    ("if (x > 0) x else -x", "(if (> x 0) x (neg x))"),
    ("if (c) -1 else 1", "(if c -1 1)"),
    ("if (c) { a } else { b }", "(if c a b)"),
    ("if c { a } else { b }", "(if c a b)"),
    ("if x == None { 1 } else { 2 }", "(if (== x (None)) 1 2)"),
    ("if x.is_some() and y { 1 } else { 2 }", "(if (and (.is_some x) y) 1 2)"),
    ("if not (a) { 1 } else { 2 }", "(if (not a) 1 2)"),
    ("if -a > (b) { 1 } else { 2 }", "(if (> (neg a) b) 1 2)"),
    ("if (a) 1 else if (b) 2 else 3", "(if a 1 (if b 2 3))"),
    ("if a { 1 } else if b { 2 } else { 3 }", "(if a 1 (if b 2 3))"),
    ("if (a) if (b) 1 else 2 else 3", "(if a (if b 1 2) 3)"),
    ("if (c) a else b + 1", "(if c a (+ b 1))"),
    ("1 + {if (c) a else b}", "(+ 1 (if c a b))"),
    ("if (P{1} == x) a else b", "(if (== (P 1) x) a b)"),
])
def test_if(text, expected):
    assert e(text) == expected


def test_match():
    text = """match (x) {
        (1, _) -> "one",
        (-2, y) -> "minus two",
        Some{z} -> "some",
        None -> "none",
        P{.x = 3, .y = _} -> "p",
        Circle{r} -> "circle",
        "s" -> "str",
        true -> "t",
        -1.5 -> "f",
        0xff -> "hex",
        8'd3 -> "w",
        (a) -> "paren",
        () -> "unit",
        v -> "var",
        _ -> "other",
    }"""
    m = parse_expr(text)
    assert isinstance(m, ast.MatchExpr) and sx(m.scrutinee) == "x"
    assert [sx(a.pattern) for a in m.arms] == [
        "(ptuple 1 _)", "(ptuple -2 y)", "(Some z)", "(None)", "(P .x=3 .y=_)", "(Circle r)",
        '"s"', "true", "-1.5", "255", "u8:3", "a", "(ptuple)", "v", "_"]
    assert isinstance(m.arms[3].pattern, ast.PCtor) and m.arms[3].pattern.fields == []
    assert isinstance(m.arms[11].pattern, ast.PVar)
    assert e("match (x) { _ -> 1 }") == "(match x [_ -> 1])"
    assert e("match (x) { }") == "(match x )"
    assert e("match (x) { a -> if (a) 1 else 2, _ -> 3 } + 1") == (
        "(+ (match x [a -> (if a 1 2)] [_ -> 3]) 1)")
    assert e("match ((a, b)) { (Some{x}, (y, _)) -> x }") == (
        "(match (tuple a b) [(ptuple (Some x) (ptuple y _)) -> x])")


def test_pattern_spans_and_negative_literals():
    m = parse_expr("match (x) { -5 -> 1 }")
    p = m.arms[0].pattern
    assert isinstance(p, ast.PLit) and p.lit.value == -5
    assert p.span == p.lit.span == Span("<input>", 1, 13, 1, 15)


# ---------------------------------------------------------------------------------------------
# Literals


@pytest.mark.parametrize("text, value, width, signed", [
    ("0", 0, None, False), ("42", 42, None, False), ("0x1F", 31, None, False),
    ("0xff_ff", 65535, None, False), ("32'd15", 15, 32, False), ("8'hff", 255, 8, False),
    ("4'b1010", 10, 4, False), ("8'o17", 15, 8, False), ("8'sd15", 15, 8, True),
    ("8'sd-3", -3, 8, True), ("8'shff", -1, 8, True), ("16'h_ff", 255, 16, False),
])
def test_int_literals(text, value, width, signed):
    lit = parse_expr(text)
    assert isinstance(lit, ast.Lit) and lit.kind == "int"
    assert (lit.value, lit.width, lit.signed) == (value, width, signed)


@pytest.mark.parametrize("text, message", [
    ("8'd256", "literal 8'd256 does not fit in bit<8>"),
    ("8'sd128", "literal 8'sd128 does not fit in signed<8>"),
    ("4'b102", "invalid digits for a base-2 literal: '102'"),
    ("8'd1f", "invalid digits for a base-10 literal: '1f'"),
    ("0'd0", "a bit width must be at least 1"),
])
def test_bad_int_literals(text, message):
    ex = err(text, expr=True)
    assert ex.message == message
    assert at(ex) == (1, 1)


def test_float_bool_literals():
    for text, value in [("1.5", 1.5), ("2e3", 2000.0), ("1.5e-3", 0.0015), ("0.0", 0.0),
                        ("7E+2", 700.0)]:
        lit = parse_expr(text)
        assert (lit.kind, lit.value) == ("float", value)
    assert parse_expr("true") == ast.Lit(True, "bool", Span("<input>", 1, 1, 1, 5))
    assert parse_expr("false").value is False
    # DDlog's floating-point literals with a width: 32 a float, 64 a double
    for text, value, width in [("32'f0.5", 0.5, 32), ("64'f1e3", 1000.0, 64),
                               ("64'f333.36", 333.36, 64)]:
        lit = parse_expr(text)
        assert (lit.kind, lit.value, lit.width) == ("float", value, width)
    ex = err("16'f1.5", expr=True)
    assert ex.message == "a floating-point literal is 32 or 64 bits wide, not 16"


def test_negative_literals_are_folded():
    assert parse_expr("-5") == ast.Lit(-5, "int", Span("<input>", 1, 1, 1, 3))
    assert parse_expr("- 2.5") == ast.Lit(-2.5, "float", Span("<input>", 1, 1, 1, 6))
    assert e("3 - -5") == "(- 3 -5)"
    assert e("-x") == "(neg x)"
    assert e("-8'd3") == "(neg u8:3)"  # a width literal stays an operation
    assert e("-(5)") == "-5"


def test_strings():
    assert parse_expr('"abc"') == ast.Lit("abc", "string", Span("<input>", 1, 1, 1, 6))
    assert parse_expr('""').value == ""
    assert parse_expr(r'"a\"b\\c\nd\te\$f\rg"').value == 'a"b\\c\nd\te$f\rg'
    assert parse_expr('"cost: $5"').value == "cost: $5"
    assert parse_expr('"// not a comment /* nor this */"').value == (
        "// not a comment /* nor this */")
    assert parse_expr('"two\nlines"').value == "two\nlines"
    assert parse_expr(r'"\${x}"').value == "${x}"
    ex = err(r'"a\qb"', expr=True)
    assert (ex.message, at(ex)) == ("unknown escape sequence '\\q'", (1, 3))


def test_interpolation():
    i = parse_expr('"x = ${x}, y = ${y + 1}!"')
    assert isinstance(i, ast.Interp)
    assert sx(i) == '(interp "x = " x ", y = " (+ y 1) "!")'
    assert sx(parse_expr('"${x}"')) == "(interp x)"
    assert sx(parse_expr('"a${x}${y}"')) == '(interp "a" x y)'
    # nested strings and braces inside the interpolation
    assert sx(parse_expr('"${f("}", P{1})}"')) == '(interp (call f "}" (P 1)))'
    assert sx(parse_expr('"${"in${x}"}"')) == "(interp (interp \"in\" x))"
    assert sx(parse_expr('"a\\n${x}\\t"')) == '(interp "a\\n" x "\\t")'
    assert sx(parse_expr('"${ /* c } */ x}"')) == "(interp x)"
    # strings inside an interpolation written DDlog's way, between escaped quotes
    assert sx(parse_expr(r'"${\"a\" ++ \"b\"}"')) == '(interp (++ "a" "b"))'
    assert sx(parse_expr(r'"${if (w > 0) {\"+\"} else {\"}\"}}p${p}"')) == \
        '(interp (if (> w 0) "+" "}") "p" p)'
    assert sx(parse_expr(r'"${f(\"a\\tb\", "c\"d")}"')) == r'(interp (call f "a\tb" "c\"d"))'


def test_raw_strings():
    """DDlog's `[|text|]` and interned `i[|text|]`: the text as written, no escapes, no
    interpolation, and nothing in it read as a comment or a string."""
    assert parse_expr('[|"" >= "a"|]').value == '"" >= "a"'
    assert parse_expr(r'i[|\d+ ${x} // no comment /* |]').value == r"\d+ ${x} // no comment /* "
    assert sx(parse_expr('[|a|] ++ "b${x}"')) == '(++ "a" (interp "b" x))'
    assert parse_expr('"${[|}"|] ++ x}"').parts[0].left.value == '}"'  # inside ${...} too
    prog = parse_program('R([|a\n"b|]) :- S(x), x == [|c|].\n')
    assert prog.rules[0].head.args[0].value == 'a\n"b'
    ex = err('R([|abc) :- S(x).')
    assert ex.message.startswith("unterminated raw string") and at(ex) == (1, 3)


def test_adjacent_strings_are_one():
    assert parse_expr('"a" [|b"|] "c"').value == 'ab"c'
    assert sx(parse_expr('i"x${n}" "!" "?"')) == '(interp "x" n "!?")'


def test_a_head_location_is_read_and_left_out():
    """D3log's `H(..) @loc :- ..`: Spark places the data, so the rule is the same without."""
    with_loc = parse_program("R(x) @ w :- S(x, w).\nR(x) @w, T(x) :- S(x, w).\n")
    plain = parse_program("R(x) :- S(x, w).\nR(x), T(x) :- S(x, w).\n")
    assert [sx(r.head) for r in with_loc.rules] == [sx(r.head) for r in plain.rules]
    assert len(with_loc.rules) == 3


def test_interpolation_spans():
    p = parse_program('R(x) :- S(x), var s = "ab${x + 1}".\n')
    s = p.rules[0].body[1].expr
    add = s.parts[1]
    assert s.span == Span("<input>", 1, 23, 1, 35)
    assert add.span == Span("<input>", 1, 28, 1, 33)
    assert add.left.span == Span("<input>", 1, 28, 1, 29)
    # on a later line of a multi-line string
    s = parse_expr('"first\n  ${y}"')
    assert s.parts[1].span == Span("<input>", 2, 5, 2, 6)
    ex = err('R(x) :- S(x), var s = "a${x +}".')
    assert at(ex) == (1, 30)
    assert ex.message.startswith("unexpected '}'") or ex.message.startswith("unexpected end")
    ex = err('"${}"', expr=True)
    assert (ex.message, at(ex)) == ("empty interpolation '${}'", (1, 2))


def test_interpolation_is_not_a_pattern():
    assert err('match (x) { "${y}" -> 1 }', expr=True).message == (
        "a pattern cannot use string interpolation")


# ---------------------------------------------------------------------------------------------
# Comments


def test_comments():
    p = parse_program("""// line comment
input relation A(x: bigint) // trailing
/* block
   comment */ output relation B(x: bigint)
/* nested /* inner */ still comment */
/* with a "string" and // inside */
B(x) :- A(x), /* inline */ x > 1. // done
""")
    assert [d.name for d in p.relations] == ["A", "B"]
    assert sx(p.rules[0]) == "B(x) :- A(x), cond (> x 1)."
    assert p.relations[1].span == Span("<input>", 4, 15, 4, 43)
    assert p.rules[0].body[1].span == Span("<input>", 7, 28, 7, 33)


def test_comment_markers_inside_strings_are_text():
    r = one('R("/* no */", "// no") :- S(x).')
    assert [a.value for a in r.head.args] == ["/* no */", "// no"]


def test_deeply_nested_comment():
    assert parse_program("/* 1 /* 2 /* 3 */ 2 */ 1 */ R(1).").rules[0].head.args[0].value == 1


def test_unterminated_comment_and_string():
    ex = err("R(1).\n  /* a /* b */ c\nS(1).")
    assert (ex.message, at(ex)) == ("unterminated comment", (2, 3))
    ex = err('R(1).\nS("abc).\n')
    assert (ex.message, at(ex)) == ("unterminated string literal", (2, 3))
    ex = err('R("${x").')
    assert (ex.message, at(ex)) == ("unterminated string literal", (1, 3))


# ---------------------------------------------------------------------------------------------
# Spans


def test_spans():
    text = ("input relation Edge(src: bigint, dst: bigint)\n"
            "Path(x, y) :- Edge(x, y), not Block(x).\n")
    p = parse_program(text, file="g.dl")
    rel = p.relations[0]
    assert rel.span == Span("g.dl", 1, 1, 1, 46)
    assert rel.columns[1].span == Span("g.dl", 1, 34, 1, 45)
    assert rel.columns[1].type.span == Span("g.dl", 1, 39, 1, 45)
    r = p.rules[0]
    assert r.span == Span("g.dl", 2, 1, 2, 40)
    assert r.head.span == Span("g.dl", 2, 1, 2, 11)
    assert r.head.args[1].span == Span("g.dl", 2, 9, 2, 10)
    assert r.body[0].span == Span("g.dl", 2, 15, 2, 25)
    assert r.body[1].span == Span("g.dl", 2, 27, 2, 39)  # includes `not`
    assert r.body[1].atom.span == Span("g.dl", 2, 31, 2, 39)


def test_expression_spans():
    x = parse_expr("  (a + b) * f(c)")
    assert x.span == Span("<input>", 1, 3, 1, 17)
    assert x.left.span == Span("<input>", 1, 4, 1, 9)  # the parentheses are not a node
    assert x.right.span == Span("<input>", 1, 13, 1, 17)
    m = parse_expr("a.f(b)")
    assert m.span == Span("<input>", 1, 1, 1, 7)
    x = parse_expr("x\n  .group")
    assert x.span == Span("<input>", 1, 1, 2, 9)


# ---------------------------------------------------------------------------------------------
# Errors


def test_error_at_closing_paren():
    ex = err("R(x) :- S(x), x + ).")
    assert at(ex) == (1, 19)
    assert ex.message == ("unexpected ')', expected one of: identifier, literal, '&', '(', "
                          "'-', '[', '_', 'match', 'not', '{', '~'")
    assert ex.span.file == "<input>"
    assert str(ex).startswith("<input>:1:19: error: unexpected ')'")


def test_error_missing_dot():
    ex = err("R(x) :- S(x)\nT(x) :- S(x).")
    assert at(ex) == (2, 1)
    assert ex.message == "unexpected 'T', expected one of: ',', '.'"


def test_error_after_operand_lists_operators():
    ex = err("R(x) :- S(x), x 1.")
    assert at(ex) == (1, 17)
    assert ex.message == ("unexpected '1', expected one of: '(', ',', '.', '=', '?', 'in', "
                          "operator")


def test_error_at_end_of_input():
    ex = err("input relation R(x: bigint")
    assert ex.message == "unexpected end of input, expected one of: ')', ','"
    assert at(ex) == (1, 27)
    ex = err("R(x) :-")
    assert ex.message.startswith("unexpected end of input, expected one of: identifier")


def test_error_bad_character():
    ex = err("R(x) :- S(x), x ` 1.")
    assert ex.message == ("unexpected character '`', expected one of: '(', ',', '.', '=', '?', "
                          "'in', operator")
    assert at(ex) == (1, 17)
    ex = err("R(x) :- S(x), x == #.")
    assert ex.message == ("unexpected character '#', expected one of: identifier, literal, '&', "
                          "'(', '-', '[', '_', 'match', 'not', '{', '~'")


def test_error_empty_expression():
    ex = err("   ", expr=True)
    assert ex.message.startswith("unexpected end of input, expected one of: identifier")
    assert at(ex) == (1, 1)


def test_error_declarations():
    ex = err("relation r(x: bigint)")
    assert at(ex) == (1, 10)
    assert ex.message.startswith("unexpected 'r', expected one of: identifier")
    ex = err("typedef T = ")
    assert ex.message.startswith("unexpected end of input")
    ex = err("foo(1).")
    assert ex.message.startswith(
        "unexpected 'foo', expected one of: identifier, '&', 'apply', 'extern', 'for', 'function'")


def test_error_reports_where_in_a_later_line():
    ex = err("input relation A(x: bigint)\n\n  A(1, ]).")
    assert at(ex) == (3, 8)
    assert "\n    A(1, ])." in ex.format() and ex.format().endswith("      ^")


def test_repeated_field_names():
    assert err("R(.x = 1, .x = 2).").message == "field 'x' given twice"
    assert err("P{.a = 1, .a = 2}", expr=True).message == "field 'a' given twice"


def test_cast_targets_are_limited():
    # generic types cannot be cast targets (a `>>` could close two of them)
    err("x as Vec<u8>", expr=True)
    err("x as (u8, u8)", expr=True)


def test_a_closure_changes_only_its_own_parameter():
    # `|k, v| v.x = e` changes v (a `mut` parameter in DDlog): its value is v's new value
    lam = parse_expr("m.map_in_place(|k, v| v.x = v.x + 1)").args[1]
    assert lam.changes == "v" and isinstance(lam.body, ast.Let)
    ex = err("m.map_in_place(|k, v| x = 1)", expr=True)
    assert ex.message == "a closure cannot assign 'x', a variable declared outside it"
    assert at(ex) == (1, 23)
    ex = err("m.map_in_place(|k, v| { k = 1; v = 2 })", expr=True)
    assert ex.message.startswith("a closure can change one of its parameters")


def test_relations_of_a_record_type_and_whole_records():
    prog = parse_program("input relation R[T] primary key (x) x.id\nO[x] :- R[x], not S(x).")
    rel = prog.relations[0]
    assert rel.name == "R" and rel.record.name == "T" and rel.key.var == "x"
    rule = prog.rules[0]
    # in a body, what `R[p]` binds depends on R's type: the checker decides
    assert isinstance(rule.head.whole, ast.Var) and rule.body[0].atom.whole.name == "x"
    assert err("O(1) :- x in R[y].").message.startswith("write `R(..)` here")
