"""DDlog's statement and binding forms: blocks with `var`, assignments and mutating methods,
closures, `d in R(..)`, binding patterns `Some{var x} = e`, `group_by((k1, k2))`, literals
typed by their use, and `import` of the standard and of user modules. Each form: what the
parser makes of it, the checker's errors with their location, and its value through the
oracle (the engine's differential tests run the same programs on Spark)."""
from __future__ import annotations

import pytest

from ddlog.check import check_file
from ddlog.errors import ParseError, TypeCheckError
from ddlog.syntax import ast
from ddlog.syntax.parser import parse_program
from ddlog.types import TInt, TVec
from ddlog.values import Record
from tests.oracle.evaluate import evaluate
from tests.unit.test_oracle import run
from tests.unit.test_typecheck import check, fails, where


def parse_fails(src: str, message: str, at: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_program(src, "t.dl")
    assert message in info.value.message, info.value.message
    assert (info.value.span.line, info.value.span.col) == where(src, at)


# ---------------------------------------------------------------------------------------------
# Blocks


def test_block_statements_become_lets():
    prog = parse_program("function f(x: bigint): bigint { var y = x; y = y * 2; y + 1 }")
    body = prog.functions[0].body
    assert isinstance(body, ast.Let) and body.var == "y" and not body.rebind
    assert isinstance(body.body, ast.Let) and body.body.rebind
    assert isinstance(body.body.body, ast.BinOp)


def test_field_assignment_and_mutating_methods():
    src = """
typedef P = P{a: bigint, b: (string, Vec<bigint>)}
function g(p: P): P { var q = p; q.b.1.push(7); q.a = 9; q }
function h(v: Vec<bigint>): Vec<bigint> { var w = v; w.push(3); w.push(4); w }
output relation S(p: P)
output relation V(v: Vec<bigint>)
S(g(P{1, ("s", [5])})).
V(h([1, 2])).
V({ var w: Vec<bigint> = []; w.push(1); w }).
"""
    out = run(src)
    assert out["S"] == {(Record("P", (9, ("s", (5, 7)))),)}
    assert out["V"] == {((1, 2, 3, 4),), ((1,),)}


def test_block_literal_takes_the_type_of_its_use():
    out = run("""
output relation T(x: u8, y: Vec<s32>)
T(x, y) :- var x = { var z = 3; z + 1 }, var y = { var v = [1, 2]; v }.
""")
    assert out["T"] == {(4, (1, 2))}
    rule = check("output relation T(x: u8)\nT(x) :- var x = { var z = 3; z + 1 }.").rules[0]
    assert rule.body[0].expr.ty == TInt(False, 8)


def test_block_errors():
    # a statement without effect is checked, and its value dropped, as in DDlog
    fails("function f(x: bigint): bigint { x + y; x }", "unknown variable 'y'", "y")
    parse_fails("function f(x: bigint): bigint { var y = x; (y + 1) = 2; y }",
                "only a variable or its fields", "y + 1)")
    src = "function f(x: bigint): bigint { y = 2; x }"
    fails(src, "assignment to unknown variable 'y'", "y = 2")
    src = "function f(x: bigint): bigint { var y = x; y = \"s\"; y }"
    fails(src, "type mismatch: expected bigint, found string (assignment to 'y')", "\"s\"")
    src = "function f(x: (bigint, bigint)): bigint { var y = x; y.2 = 1; 0 }"
    fails(src, "tuple index 2 out of range", "y.2 = 1")


# ---------------------------------------------------------------------------------------------
# Closures


def test_closure_forms_parse():
    prog = parse_program("""
output relation R(a: bigint)
R([1].fold(|a, x: bigint|: bigint a + x, 0)).
R([1].fold(function(a: bigint, x: bigint): bigint { a + x }, 0)).
""")
    lams = prog.find(ast.Lambda)
    assert [lam.params for lam in lams] == [["a", "x"], ["a", "x"]]
    assert lams[0].annotations[0] is None and lams[0].annotations[1].name == "bigint"
    assert lams[1].result.name == "bigint"


def test_closure_annotation_mismatch_and_arity():
    base = "input relation I(k: string, n: bigint)\noutput relation O(k: string, s: bigint)\n"
    fails(base + "O(k, s) :- I(k, n), var s = n.group_by(k).sum_of(|x: string| 1).",
          "type mismatch: expected bigint, found string (parameter 'x' of the closure)",
          "string| 1")
    fails(base + "O(k, s) :- I(k, n), var s = n.group_by(k).sum_of(|a, b| a).",
          "expects a closure of 1 parameter", "|a, b|")
    fails(base + "O(k, s) :- I(k, n), var s = n.group_by(k).sum_of(|x|: string x).",
          "expected string, found bigint (result of the closure)", "x).")


def test_function_name_as_closure():
    out = run("""
function double(x: bigint): bigint = x * 2
input relation I(k: string, n: bigint)
output relation O(k: string, s: bigint)
O(k, s) :- I(k, n), var s = n.group_by(k).sum_of(double).
""", I={("a", 1), ("a", 2), ("b", 5)})
    assert out["O"] == {("a", 6), ("b", 10)}


def test_closure_captures_and_shadows():
    out = run("""
input relation I(k: string, n: bigint, m: bigint)
output relation O(k: string, s: bigint)
O(k, s) :- I(k, n, m), var x = m, var s = (n, m).group_by(k).sum_of(|x| x.0 * x.1).
""", I={("a", 1, 2), ("a", 3, 4)})
    assert out["O"] == {("a", 14)}


# ---------------------------------------------------------------------------------------------
# Binding forms


def test_record_binding_with_in():
    src = """
input relation D(x: bigint, o: Option<(bigint, string)>)
output relation Q(d: Vec<D>)
output relation P(d: D)
Q(v) :- d in D(.x = y), var v = d.group_by(y).to_vec().
P(d) :- d in D(), d.x > 1.
output relation S(d: D)
S(d) :- d in D(3, _).
output relation T(d: D)
T(d) :- d in D(.o = Some{(_, "a")}).
"""
    out = run(src, D={(1, (2, "a")), (3, None)})
    assert out["Q"] == {((Record("D", (1, (2, "a"))),),), ((Record("D", (3, None)),),)}
    assert out["P"] == {(Record("D", (3, None)),)}
    # a constant or a pattern in the atom selects the records
    assert out["S"] == {(Record("D", (3, None)),)}
    assert out["T"] == {(Record("D", (1, (2, "a"))),)}


def test_binding_patterns():
    src = """
input relation D(x: bigint, o: Option<(bigint, string)>)
output relation O(x: bigint, a: bigint, s: string)
output relation U(x: bigint, a: bigint)
O(x, a, s) :- D(x, o), Some{(var a, var s)} = o.
U(x, a) :- D(x, o), Some{var p} = o, (var a, _) = p.
"""
    out = run(src, D={(1, (2, "a")), (3, None)})
    assert out["O"] == {(1, 2, "a")}
    assert out["U"] == {(1, 2)}
    parse_fails("input relation D(o: Option<(bigint, bigint)>)\noutput relation O(a: bigint)\n"
                "O(a) :- D(o), Some{(var a, var a)} = o.", "a variable is bound twice",
                "Some{(var a")
    # `_` anywhere, a compared part, named fields of a constructor
    src2 = src + """
output relation L(x: bigint, s: string)
L(x, s) :- D(x, o), Some{var p} = o, (_, var s) = p.
output relation N(s: string)
N(s) :- D(_, o), Some{.x = (2, var s)} = o.
"""
    out = run(src2, D={(1, (2, "a")), (4, (3, "b")), (3, None)})
    assert out["L"] == {(1, "a"), (4, "b")}
    assert out["N"] == {("a",)}
    # `var x` declares a variable in such a pattern only
    fails("output relation O(t: (bigint, bigint))\nO((var a, 1)).",
          "`var a` declares a variable only in the pattern of a rule's body item", "var a")


def test_destructuring_statements():
    # `(var a, b, _) = e;` in a function body declares, assigns or skips each part
    out = run("""
function split(t: (bigint, (string, bigint))): (string, bigint) {
    var n = 0;
    (var a, (var s, n)) = t;
    (_, var m) = (1, a + n);
    (s, m)
}
function firsts(v: Vec<(bigint, bigint)>): bigint {
    var total = 0;
    for (p in v) { (var x, _) = p; total = total + x };
    total
}
output relation O(s: string, m: bigint)
O(s, m) :- (var s, var m) = split((1, ("z", 5))).
output relation L(t: bigint)
L(firsts([(1, 2), (3, 4)])).
""")
    assert out["O"] == {("z", 6)} and out["L"] == {(4,)}
    parse_fails("function f(t: (bigint, bigint)): bigint { (var a, 1) = t; a }",
                "only a variable or its fields", "1) = t")


def test_group_by_tuple_keys():
    out = run("""
input relation I(a: string, b: bigint, v: bigint)
output relation O(k: (string, bigint), n: usize)
output relation All(k: (), n: usize)
O(k, n) :- I(a, b, v), var g = v.group_by((a, b)), var k = g.key(), var n = g.count().
All(k, n) :- I(a, b, v), var g = v.group_by(()), var k = g.key(), var n = g.count().
""", I={("x", 1, 5), ("x", 1, 6), ("y", 2, 7)})
    assert out["O"] == {(("x", 1), 2), (("y", 2), 1)}
    assert out["All"] == {((), 3)}


def test_flatmap_literals_take_the_column_type():
    src = """
relation X(x: bit<10>, y: bit<10>)
output relation Y(x: bit<10>, z: bit<10>)
Y(x, x << (y as u32)) :- X(x, y).
X(x, y) :- var x = FlatMap([1, 3]), var y = FlatMap([9, 16]).
"""
    assert run(src)["Y"] == {(1, 512), (1, 1), (3, 512), (3, 3)}
    rule = check(src).rules[1]
    assert rule.body[0].expr.ty == TVec(TInt(False, 10))
    # a variable used as two different types is still an error
    fails("output relation A(x: u8)\noutput relation B(x: s16)\n"
          "A(x) :- var x = 1.\nB(x) :- var x = 1, A(x).\n",
          "type mismatch: expected signed<16>, found bit<8>", "x) :- var x = 1, A")


# ---------------------------------------------------------------------------------------------
# Modules


def test_std_imports_and_qualified_names():
    out = run("""
import vec
import ddlog_std
output relation O(n: usize, o: Option<bigint>)
O(vec::len([1, 2]), ddlog_std::Some{3}).
""")
    assert out["O"] == {(2, 3)}


def test_user_modules(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "graph.dl").write_text("""
typedef Weight = Weight{w: bigint}
input relation Edge(a: bigint, b: bigint, w: Weight)
output relation Path(a: bigint, b: bigint)
function heavy(w: Weight): bool = w.w > 5
Path(a, b) :- Edge(a, b, w), not heavy(w).
Path(a, c) :- Path(a, b), Edge(b, c, w), not heavy(w).
""")
    main = tmp_path / "main.dl"
    main.write_text("""
import lib::graph as g
import vec
output relation Far(a: bigint, b: bigint, w: g::Weight)
Far(a, b, g::Weight{1}) :- g::Path(a, b), not g::Edge(a, b, _).
""")
    prog = check_file(str(main))
    assert set(prog.relations) == {"lib::graph::Edge", "lib::graph::Path", "Far"}
    assert "lib::graph::Weight" in prog.types
    (tmp_path / "bad.dl").write_text("import nowhere\n")
    with pytest.raises(ParseError) as info:
        check_file(str(tmp_path / "bad.dl"))
    assert "module 'nowhere' not found" in info.value.message
    # an error inside a module quotes the module's own text
    (tmp_path / "broken.dl").write_text("output relation P(a: bigint)\nP(\"x\").\n")
    (tmp_path / "main2.dl").write_text("import broken\n")
    with pytest.raises(TypeCheckError) as info:
        check_file(str(tmp_path / "main2.dl"))
    assert info.value.span.file.endswith("broken.dl")
    assert 'P("x")' in info.value.format()


def test_a_capitalised_alias_qualifies_types_functions_and_relations(tmp_path):
    """`import mylib as ML` (DDlog's `import tinyset as TS`): `ML::Pair`, `ML::swap`,
    `ML::Seen` are mylib's."""
    (tmp_path / "mylib.dl").write_text(
        "typedef Pair = Pair{a: bigint, b: bigint}\n"
        "function swap(p: Pair): Pair = Pair{p.b, p.a}\nrelation Seen(p: Pair)\n")
    main = tmp_path / "main.dl"
    main.write_text("import mylib as ML\ninput relation In(a: bigint, b: bigint)\n"
                    "output relation Out(p: ML::Pair)\n"
                    "Out(ML::swap(ML::Pair{a, b})) :- In(a, b).\n"
                    "ML::Seen(ML::Pair{a, b}) :- In(a, b).\n")
    prog = check_file(str(main))
    assert set(prog.relations) == {"In", "Out", "mylib::Seen"}
    assert "mylib::Pair" in prog.types


def test_modules_are_found_under_the_library_roots(tmp_path):
    """`import a::b` is a/b.dl under the main program's directory, then each `-L` root in
    order, then the importing file's own directory; a module in a root imports its
    neighbours by their paths from the root (DDlog's `foolib/lib.dl` importing
    `foolib::ns1::m2`)."""
    for root in ("r1", "r2"):
        (tmp_path / root / "foolib" / "ns1").mkdir(parents=True)
    (tmp_path / "r1" / "foolib" / "lib.dl").write_text(
        "import foolib::ns1::m2 as m2\noutput relation L(x: bigint)\nL(m2::k()).\n")
    (tmp_path / "r2" / "foolib" / "ns1" / "m2.dl").write_text("function k(): bigint = 2\n")
    (tmp_path / "r1" / "foolib" / "ns1" / "m2.dl").write_text("function k(): bigint = 1\n")
    (tmp_path / "prog").mkdir()
    main = tmp_path / "prog" / "main.dl"
    main.write_text("import foolib::lib\n")
    with pytest.raises(ParseError) as info:
        check_file(str(main))
    assert info.value.message.startswith(
        f"module 'foolib::lib' not found: no {tmp_path / 'prog' / 'foolib' / 'lib.dl'} ")
    prog = check_file(str(main), (str(tmp_path / "r2"), str(tmp_path / "r1")))
    assert set(prog.relations) == {"foolib::lib::L"}
    # the first root that holds it
    assert sorted(prog.ast.sources) == [str(tmp_path / "r1" / "foolib" / "lib.dl"),
                                        str(tmp_path / "r2" / "foolib" / "ns1" / "m2.dl")]


def test_names_of_a_module_imported_without_alias_are_used_unqualified(tmp_path):
    """`import lib` then `swap(..)`, `Pair{..}`, `Seen(..)`: lib's, as DDlog resolves them; a
    name two imported modules declare must be qualified; the program's own name wins."""
    (tmp_path / "lib.dl").write_text(
        "typedef Pair = Pair{a: bigint, b: bigint}\n"
        "function swap(p: Pair): Pair = Pair{p.b, p.a}\nrelation Seen(p: Pair)\n"
        "function twice(x: bigint): bigint = x * 2\n")
    (tmp_path / "other.dl").write_text("function twice(x: bigint): bigint = x + x\n")
    main = tmp_path / "main.dl"
    main.write_text("import lib\ninput relation In(a: bigint, b: bigint)\n"
                    "output relation Out(p: Pair)\nOut(swap(Pair{a, b})) :- In(a, b).\n"
                    "Seen(Pair{a, b}) :- In(a, b).\n")
    prog = check_file(str(main))
    assert set(prog.relations) == {"In", "Out", "lib::Seen"}
    main.write_text("import lib\nimport other\noutput relation O(x: bigint)\nO(twice(1)).\n")
    with pytest.raises(TypeCheckError) as info:
        check_file(str(main))
    assert "unknown function 'twice'" in info.value.message
    main.write_text("import lib\nimport other\noutput relation O(x: bigint)\n"
                    "O(other::twice(1)).\nfunction swap(x: bigint): bigint = x\nO(swap(1)).\n")
    assert set(check_file(str(main)).relations) == {"O", "lib::Seen"}


def test_import_regex_is_the_library_that_comes_with_ddlog(tmp_path):
    """`import regex` reads ddlog's own regex.dl after the program's directory and the -L
    roots, which may hold a regex.dl of their own."""
    main = tmp_path / "main.dl"
    main.write_text("import regex\noutput relation O(m: bool)\n"
                    "O(regex_match(regex(\"a+\"), \"baa\")).\n")
    prog = check_file(str(main))
    assert "regex::Regex" in prog.types
    (tmp_path / "regex.dl").write_text("function regex_match(a: string, b: string): bool = true\n"
                                       "function regex(p: string): string = p\n")
    assert "regex::Regex" not in check_file(str(main)).types


def test_modules_may_import_each_other(tmp_path):
    """As DDlog's (its net::ipv4 and net::ipv6 do): each sees the other's names, used
    unqualified or qualified, and the program both."""
    (tmp_path / "a.dl").write_text("import b\ntypedef A = A{x: u32}\n"
                                   "function a2b(a: A): B { B{a.x + 1} }\n")
    (tmp_path / "b.dl").write_text("import a\ntypedef B = B{y: u32}\n"
                                   "function b2a(b: B): a::A { A{b.y * 2} }\n")
    (tmp_path / "main.dl").write_text("import a\nimport b\noutput relation O(x: u32)\n"
                                      "O(b2a(a2b(A{5})).x).\n")
    prog = check_file(str(tmp_path / "main.dl"))
    assert {"a::A", "b::B"} <= set(prog.types)
    assert evaluate(prog, {})["O"] == {(12,)}


# ---------------------------------------------------------------------------------------------
# Generic functions


def test_generic_functions():
    src = """
function or_else(o: Option<'A>, d: 'A): 'A { var r: Option<'A> = o; r.unwrap_or(d) }
function pair(a: 'A, b: 'B): ('A, 'B) = (a, b)
input relation I(o: Option<bigint>)
output relation O(a: bigint, s: string, p: (string, bool))
O(or_else(o, 0), or_else(None, "none"), pair("x", true)) :- I(o).
"""
    assert run(src, I={(4,), (None,)})["O"] == {(4, "none", ("x", True)),
                                                 (0, "none", ("x", True))}
    fails("function same(a: 'A, b: 'A): bool = a == b\noutput relation O(b: bool)\n"
          "O(same(1, \"x\")).", "type mismatch: expected string, found bigint (argument 'a' "
          "of function 'same')", "1, ")
    fails("function mk(a: bigint): 'A = a\n", "has a type variable that no parameter has", "'A")


# ---------------------------------------------------------------------------------------------
# Loops


def test_for_loops_fold_the_variables_they_change():
    src = """
function vsep(strs: Vec<string>): string {
    var res = "";
    for (s in strs) {
        res = res ++ s ++ ";"
    };
    res
}
function stats(v: Vec<bigint>): (bigint, bigint, Vec<bigint>) {
    var n = 0;
    var total = 0;
    var big: Vec<bigint> = [];
    for (x in v) {
        var y = x * 2;
        n = n + 1;
        total = total + y;
        big.push(y)
    };
    (n, total, big)
}
output relation O(s: string, t: (bigint, bigint, Vec<bigint>))
O(vsep(["a", "b"]), stats([1, 2, 3])).
"""
    assert run(src)["O"] == {("a;b;", (3, 12, (2, 4, 6)))}
    parse_fails("function f(v: Vec<bigint>): bigint { for (x in v) { var y = x }; 0 }",
                "this loop has no effect", "for (x")


def test_if_statements_rebind_what_their_branches_change():
    src = """
function sgn(x: bigint): bigint {
    var r = 0;
    if (x > 0) { r = 1 } else if (x < 0) { r = -1 };
    r
}
function clamp(x: bigint): bigint {
    var y = x;
    if (y > 10) { y = 10 };
    if y < 0 { y = 0; }
    else if y == 3 { y = 33 }
    else if y == 4 { y = 44 };
    y
}
function split(v: Vec<bigint>): (bigint, bigint, Vec<bigint>) {
    var pos = 0;
    var neg = 0;
    var zeros: Vec<bigint> = [];
    for (x in v) {
        if (x > 0) { pos = pos + x } else if (x < 0) { neg = neg - x } else { zeros.push(x) }
    };
    (pos, neg, zeros)
}
function unit(x: bigint): () { }
input relation I(x: bigint)
output relation O(x: bigint, s: bigint, c: bigint, t: (bigint, bigint, Vec<bigint>))
output relation U(u: ())
O(x, sgn(x), clamp(x), split([x, -2, 0, 5])) :- I(x).
U(unit(1)).
"""
    out = run(src, I={(-5,), (0,), (3,), (4,), (12,)})
    assert out["O"] == {(-5, -1, 0, (5, 7, (0,))), (0, 0, 0, (5, 2, (0, 0))),
                        (3, 1, 33, (8, 2, (0,))), (4, 1, 44, (9, 2, (0,))),
                        (12, 1, 10, (17, 2, (0,)))}
    assert out["U"] == {((),)}
    # a block ending with a statement has the value ()
    fails("function f(x: bigint): bigint { var y = x; if (x == 1) { y = 10 } else "
          "{ var z = x * 3; y = z } }", "expected bigint, found () (result of function 'f')",
          "var y")
    parse_fails("function f(x: bigint): bigint { var y = x; if (x > 1) { var z = 2 }; y }",
                "this `if` statement has no effect", "if (x > 1)")
    fails("function f(x: bigint): bigint { if (x > 1) { y = 2 }; x }",
          "assignment to unknown variable 'y'", "y = 2")
    fails("function f(x: bigint): bigint { var y = if (x > 1) { x = 2 } else { x = 3 }; y }",
          "this block assigns 'x', declared outside it", "{ x = 2 }")


def test_return_ends_the_function():
    src = """
function sgn(x: bigint): bigint {
    if (x > 0) { return 1 } else if (x < 0) { return -1 };
    return 0;
    99
}
function first_big(v: Vec<bigint>): Option<bigint> {
    var big = v.filter(|y| y > 10);
    if (big.is_empty()) { return None };
    big.nth(0)
}
function acc(x: bigint): bigint {
    var r = x;
    if (x > 5) { r = r * 2; return r } else { r = r + 1 };
    r * 100
}
function both(x: bigint): string { if (x == 1) { return "one" } else { return "other" } }
function unit(x: bigint): () { return; }
input relation I(x: bigint)
output relation O(x: bigint, s: bigint, f: Option<bigint>, a: bigint, b: string, u: ())
output relation C(x: bigint)
O(x, sgn(x), first_big([x, x * 3]), acc(x), both(x), unit(x)) :- I(x).
C(y) :- I(x), var y = [x].map(function(z: bigint): bigint { if (z < 0) { return 0 }; z })
                         .nth(0).unwrap_or(7).
"""
    out = run(src, I={(-5,), (0,), (1,), (6,)})
    assert out["O"] == {(-5, -1, None, -400, "other", ()), (0, 0, None, 100, "other", ()),
                        (1, 1, None, 200, "one", ()), (6, 1, 18, 12, "other", ())}
    assert out["C"] == {(0,), (1,), (6,)}
    # a `return` in a loop stops the loop's fold and returns its value after it
    src = ("function f(v: Vec<bigint>): bigint { var n = 0; for (x in v) { n = x; "
           "if (x > 2) return n * 10 }; n }\ninput relation V(v: Vec<bigint>)\n"
           "output relation R(v: Vec<bigint>, r: bigint)\nR(v, f(v)) :- V(v).")
    assert run(src, V={((1, 5, 9),), ((1, 2),)})["R"] == {((1, 5, 9), 50), ((1, 2), 2)}


def test_return_as_the_value_of_a_branch():
    # DDlog's `return` is an expression: in an `if` or `match` branch of a variable's value
    # it ends the function, and the rest of the block goes on in the other branches
    src = """
function addr_port(ip: string, proto: string, preferred: bit<16>): string {
    var port: bit<16> =
        match (proto) {
            "FTP"   -> 20,
            "HTTPS" -> 443,
            _       -> {
                if (preferred != 0)
                    preferred
                else
                    return "${ip}:80"
            }
        };
    "${ip}:${port}"
}
function sign(x: s32): string = if (x < 0) return "neg" else "pos"
function f(x: s32): s32 {
    var y = 0;
    y = if (x > 10) return 99 else x + 1;
    if (x == 5) return 55 else ();
    y * 2
}
input relation E(ip: string, proto: string, p: bit<16>)
input relation I(x: s32)
output relation S(s: string)
output relation T(s: string, n: s32)
S(addr_port(ip, proto, p)) :- E(ip, proto, p).
T(sign(x), f(x)) :- I(x).
"""
    out = run(src, E={("a", "FTP", 0), ("b", "HTTP", 8080), ("c", "X", 0), ("d", "HTTPS", 1)},
              I={(-1,), (3,), (5,), (20,)})
    assert out["S"] == {("a:20",), ("b:8080",), ("c:80",), ("d:443",)}
    assert out["T"] == {("neg", 0), ("pos", 8), ("pos", 55), ("pos", 99)}
    parse_fails("function f(x: bigint): bigint { var y = [return 2]; 0 }",
                "`return` is allowed as a statement and as the value of a branch",
                "return 2")
    fails("input relation I(x: bigint)\noutput relation O(x: bigint)\n"
          "O(if (x > 1) x else return 0) :- I(x).",
          "`return` is allowed in a function's or closure's body, not in a rule", "return 0")


def test_a_variable_assigned_a_typed_value_takes_its_type():
    # `var y = 0; y = x + 1;` with x: s32 makes y an s32, as DDlog's inference does
    src = """
function f(x: s32): s32 { var y = 0; y = x + 1; y * 2 }
input relation I(x: s32)
output relation O(y: s32)
O(f(x)) :- I(x).
"""
    assert run(src, I={(3,), (-4,)})["O"] == {(8,), (-6,)}
    fails("function f(x: s32): s32 { var y = 0; y = \"a\"; 1 }\n",
          "type mismatch: expected bigint, found string (assignment to 'y')", '"a"')


def test_for_loops_with_patterns_over_maps_and_groups():
    # a Group's loop visits (value, weight) pairs, as DDlog's group iterator does (a group
    # holds distinct values here: the two ("x", 5) rows are one, of weight 1); a Map's loop
    # visits its (key, value) entries
    src = """
function best(g: Group<string, (string, u64)>): string {
    var who = "";
    var low = 'hffffffffffffffff;  // beyond bigint: typed by its first use (`low = price`)
    var seen: s64 = 0;
    for (((vendor, price), w) in g) {
        seen = seen + w;
        if (price < low) { who = vendor; low = price }
    };
    "${group_key(g)}: ${who} ${low} of ${seen}"
}
function keys(m: Map<string, bigint>): bigint {
    var n = 0;
    for ((_, v) in m) { n = n + v };
    n
}
input relation Price(item: string, vendor: string, price: u64, day: bigint)
output relation Best(s: string)
output relation K(n: bigint)
Best(s) :- Price(item, vendor, price, _), var s = (vendor, price).group_by(item).best().
K(keys(m)) :- var m: Map<string, bigint> = [("a", 2), ("b", 5)].
"""
    out = run(src, Price={("nut", "x", 5, 1), ("nut", "x", 5, 2), ("nut", "y", 3, 1),
                          ("bolt", "z", 9, 1)})
    assert out["Best"] == {("nut: y 3 of 2",), ("bolt: z 9 of 1",)}
    assert out["K"] == {(7,)}
    fails("function f(x: bigint): bigint { var big = 'hffffffffffffffff; big + x }\n"
          "output relation O(x: bigint)\nO(f(1)).",
          "literal 18446744073709551615 out of range for bigint", "'hfff")
    parse_fails("function f(v: Vec<Option<bigint>>): bigint { var n = 0; "
                "for (Some{x} in v) { n = x }; n }",
                "a `for` loop's pattern is a variable, `_`, or a tuple of them", "Some{x}")


def test_typed_variables_in_rules_and_literals_without_width():
    src = """
input relation I(x: bigint)
output relation O(a: bit<8>, b: u64, n: usize)
O(a, b, n) :- I(x), var g: Group<bigint, bigint> = x.group_by(x), var n = g.count(),
              var a: bit<8> = 'hff, var b: u64 = 'd12 + 'b11.
"""
    assert run(src, I={(1,)})["O"] == {(255, 15, 1)}
    base = "input relation I(x: bigint)\noutput relation O(a: bigint)\n"
    fails(base + "O(a) :- I(x), var a: string = x.",
          "type mismatch: expected string, found bigint (variable 'a')", "x.")
    fails(base + "O(x) :- I(x), var g: Group<bigint, string> = x.group_by(x).",
          "expected Group<bigint, string>, found Group<bigint, bigint>", "Group<bigint, s")
    parse_fails("function f(): s8 = 'sd5", "a signed literal needs its width", "'sd5")
    # a u128 holds 128 bits (stored as two Longs), not one more
    fails(base + "O(1) :- I(x), var a: bit<100> = 'h10_0000_0000_0000_0000_0000_0000.",
          "literal 1267650600228229401496703205376 out of range for bit<100>", "'h10_")
    fails(base + "O(1) :- I(x), var a: s128 = 170141183460469231731687303715884105728.",
          "literal 170141183460469231731687303715884105728 out of range for signed<128>",
          "1701")


def test_extern_functions_take_their_body_from_the_extern_file(tmp_path):
    (tmp_path / "p.dl").write_text("""
extern function slice(x: string, from: bit<64>, to: bit<64>): string
input relation W(w: string)
output relation F(s: string)
F(slice(w, 0, 3)) :- W(w).
""")
    (tmp_path / "p.extern.dl").write_text("""
function slice(x: string, from: bit<64>, to: bit<64>): string {
    string_substr(x, from as usize, to as usize)
}
""")
    prog = check_file(str(tmp_path / "p.dl"))
    assert evaluate(prog, {"W": {("hello",), ("ab",)}})["F"] == {("hel",), ("ab",)}
    (tmp_path / "p.extern.dl").write_text(
        "function slice(s: string, a: bit<64>, b: bit<64>): string = s\n")
    with pytest.raises(ParseError) as info:
        check_file(str(tmp_path / "p.dl"))
    assert "the body of extern function 'slice' must take the parameters of its " \
           "declaration (x, from, to)" in info.value.message
    assert info.value.span.file.endswith("p.extern.dl")
    (tmp_path / "p.extern.dl").unlink()
    with pytest.raises(TypeCheckError) as info:
        check_file(str(tmp_path / "p.dl"))
    assert "extern function 'slice' has no body: DDlog runs it as Rust" in info.value.message
    assert "function slice(x: string, from: bit<64>, to: bit<64>): string { ... }" \
        in info.value.message
    assert (info.value.span.line, info.value.span.col) == (5, 3)


def test_patterns_as_atom_arguments():
    # a constructor or tuple with new variables or `_` in it matches the column; `b@p` binds
    # b to the whole value; a bound variable inside a pattern is compared
    src = """
typedef Book = Book { author: string, title: string }
input relation Library(book: Book)
input relation Author(name: string, born: u32)
input relation LB(id: bigint, ls: bigint, p: Option<string>, q: (bigint, Option<bigint>))
output relation ByAuthor(book: Book, author: Author)
output relation P(id: bigint, s: string)
output relation Q(id: bigint, x: bigint)
output relation R(id: bigint)
ByAuthor(b, author) :-
    Library(.book = b@Book{.author = author_name}),
    author in Author(.name = author_name).
P(id, s) :- LB(id, _, Some{s}, _).
Q(id, x) :- LB(id, ls, _, (ls, Some{x})).
R(id) :- LB(id, _, Some{_}, (_, None)).
"""
    book = Record("Book", ("ann", "t1"))
    out = run(src, Library={(book,), (Record("Book", ("bob", "t2")),)},
              Author={("ann", 1970)},
              LB={(1, 5, "tcp", (5, 7)), (2, 5, None, (4, 8)), (3, 6, "udp", (6, None))})
    assert out["ByAuthor"] == {(book, Record("Author", ("ann", 1970)))}
    assert out["P"] == {(1, "tcp"), (3, "udp")}
    assert out["Q"] == {(1, 7)}
    assert out["R"] == {(3,)}
    base = "input relation I(o: Option<bigint>)\noutput relation O(x: bigint)\n"
    fails(base + "O(1) :- I(o), not I(Some{_}).",
          "a pattern cannot be an argument of `not I(..)`", "Some{_}")
    fails(base + "O(x) :- I(o@Some{x}), I(o@None).", "variable 'o' is already bound",
          "o@None")
    fails(base + "O(x@1) :- I(Some{x}).", "`x@..` binds a variable only as an argument",
          "x@1")


FLWOR = """
typedef stage_t = IN | OUT
input relation Switch(ls: bigint)
input relation Balancer(lb: bigint, ls: bigint, addr: string, protocol: Option<string>)
output relation Flow(lr: bigint, stage: stage_t, m: string)
output relation M(lb: bigint, s: string)
for (lb in Balancer) {
    var a = lb.addr in
    match (lb.protocol) {
        Some{_} -> Flow(lb.ls, IN, "ip4.dst == ${a}"),
        None -> {}
    }
}
for (ls in Switch) {
    for (lb in Balancer if lb.ls == ls.ls) {
        Flow(ls.ls, OUT, "ip4")
    }
}
for (lb in Balancer(.ls = 5)) {
    match (lb.protocol) {
        Some{"tcp"} -> M(lb.lb, "tcp"),
        Some{p} -> { M(lb.lb, "other ${p}"); M(lb.lb, "any") },
        _ -> if (lb.lb > 1) { M(lb.lb, "none>1") } else M(lb.lb, "none")
    }
}
"""


def test_a_value_matching_a_pattern_written_as_an_expression():
    # DDlog's `(192, 168, _, _) = addr_to_tuple(a)`: `_`, literals, tuples and constructors
    # match; any other part (a bound variable, an expression) is compared
    src = """
input relation H(t: (bigint, bigint, Option<bigint>))
input relation K(k: bigint)
output relation O(t: (bigint, bigint, Option<bigint>), k: bigint)
O(t, k) :- H(t), K(k), (1, _, Some{k + 1}) = t.
"""
    out = run(src, H={((1, 5, 3),), ((1, 6, None),), ((2, 5, 3),), ((1, 7, 4),)}, K={(2,)})
    assert out["O"] == {((1, 5, 3), 2)}


def test_flwor_rules():
    # each way to a head is a rule; a `match` arm holds only when no earlier arm matches
    prog = parse_program(FLWOR, "t.dl")
    rules = [d for d in prog.decls if isinstance(d, ast.Rule)]
    assert [r.head.relation for r in rules] == ["Flow", "Flow", "M", "M", "M", "M", "M"]
    out = run(FLWOR, Switch={(5,)},
              Balancer={(1, 5, "1.1", "tcp"), (2, 5, "2.2", None), (3, 6, "3.3", "udp"),
                        (4, 5, "4.4", "udp"), (0, 5, "0.0", None)})
    IN, OUT = Record("IN", ()), Record("OUT", ())
    assert out["Flow"] == {(5, IN, "ip4.dst == 1.1"), (5, IN, "ip4.dst == 4.4"),
                           (6, IN, "ip4.dst == 3.3"), (5, OUT, "ip4")}
    assert out["M"] == {(1, "tcp"), (4, "other udp"), (4, "any"), (2, "none>1"),
                        (0, "none")}
    parse_fails("input relation B(x: bigint)\nfor (b in B) { var y = b.x }\n",
                "unexpected '}'", "}")
    fails("input relation B(x: bigint)\noutput relation O(x: bigint)\n"
          "for (b in B) { O(b.y) }\n", "has no field 'y'", "b.y")


CLOSURES = """
typedef vec_to_vec = |Vec<s64>|: Vec<s64>
input relation Inc(i: s64)
input relation Arg(a: s64)
relation IntF(f: |s64|: s64)
relation VecF(f: vec_to_vec)
output relation Applied(a: s64, r: s64)
output relation Mapped(d: string, v: Vec<s64>)
output relation Same(a: string, b: string, eq: bool, lt: bool)
output relation Kept(f: function(s64): s64)
IntF(|x| x + inc) :- Inc(inc).
IntF(|x: s64| x * x).
IntF(function(x: s64): s64 { var y = x; y - 1 }).
VecF(|v| v.map(f)) :- IntF(f).
Applied(a, f(a)) :- IntF(f), Arg(a).
Mapped("${g}", g([1, 2])) :- VecF(g).
Same("${f}", "${g}", f == g, f < g) :- IntF(f), IntF(g), Inc(1).
Kept(f) :- IntF(f), f(2) > 3.
"""


def test_closures_as_values():
    # a closure is a value of a function type: stored in relations, called, compared and
    # printed (with the values it captured), and captured by other closures
    out = run(CLOSURES, Inc={(1,), (10,)}, Arg={(3,)})
    assert out["Applied"] == {(3, 4), (3, 13), (3, 9), (3, 2)}
    mapped = {d: v for d, v in out["Mapped"]}
    # printed as DDlog prints them: its compiler's rendering of the typed closure (see
    # ddlog/check/closure_text.py), or, for what that does not cover (a block), the text
    vec_f = ("<closure: (function(v: ddlog_std::Vec<ddlog_std::s64>):ddlog_std::Vec<"
             "ddlog_std::s64>{(vec::map(v, f))}), captured_args: ")
    assert mapped[vec_f + "<closure: (function(x: signed<64>):signed<64>{(x + inc)}), "
                  "captured_args: 10>>"] == (11, 12)
    assert mapped[vec_f + "<closure: (function(x: signed<64>):signed<64>{(x * x)}), "
                  "captured_args: ()>>"] == (1, 4)
    assert mapped[vec_f + "<closure: function(x: s64): s64 { var y = x; y - 1 }, "
                  "captured_args: ()>>"] == (0, 1)
    assert len(out["Same"]) == 16 and sum(eq for _, _, eq, _ in out["Same"]) == 4
    assert {f.text for (f,) in out["Kept"]} == {
        "(function(x: signed<64>):signed<64>{(x + inc)})",
        "(function(x: signed<64>):signed<64>{(x * x)})"}
    base = "relation F(f: |s64|: s64)\noutput relation O(x: s64)\n"
    fails(base + "O(f(1, 2)) :- F(f).", "'f' is a closure of type function(signed<64>): "
          "signed<64>: it takes 1 argument, found 2", "f(1, 2)")
    fails(base + "O(f(1)) :- F(f).", "no closure of type function(signed<64>): signed<64> is "
          "made in this program", "f(1)")
    fails(base + "F(|x| g(x)) :- F(g).\nO(f(1)) :- F(f).",
          "a closure of type function(signed<64>): signed<64> calls a closure of its own type",
          "g(x)")
    fails(base + "F(|x, y| x).", "expected a closure of 1 parameter", "|x, y|")


def test_closure_values_print_as_ddlog_renders_them():
    src = """
typedef P = P{a: s32, b: string}
function twice(x: s64): s64 { x * 2 }
relation F(f: |Vec<s64>|: Vec<s64>)
relation G(g: |(s64, P)|: string)
relation H(h: |Set<bit<8>>|: bool)
output relation O(s: string)
F(|v| v.map(|x| -x + 1).filter(|x| x != 3)).
F(|v| v.map(ref_new)).
F(|v| v.map(twice)).
F(|v| v.map(|x| twice(x))).
G(|t| "q\\"\\n" ++ t.1.b.to_lowercase()).
G(|t| "${t.0}").
G(|t| if (t.0 > 0) { "a" } else { "b" }).
H(|s| s.any(|x| x == 7) and not s.contains(8'd1)).
O("${f}") :- F(f).
O("${g}") :- G(g).
O("${h}") :- H(h).
"""
    texts = {s for (s,) in run(src)["O"]}
    vec = "ddlog_std::Vec<ddlog_std::s64>"
    assert texts == {
        # calls and operators in parentheses, library functions by their module (the
        # receiver's kind), integer literals with their width, nested closures typed
        f"<closure: (function(v: {vec}):{vec}{{(vec::filter((vec::map(v, (function(x: "
        "signed<64>):signed<64>{((- x) + 64'sd1)}))), (function(x: signed<64>):bool"
        "{(x != 64'sd3)})))}), captured_args: ()>",
        # a library function passed by name
        f"<closure: (function(v: {vec}):{vec}{{(vec::map(v, ddlog_std::ref_new))}}), "
        "captured_args: ()>",
        # a function of the program, inlined by the checker: the program's text
        "<closure: |v| v.map(twice), captured_args: ()>",
        "<closure: |v| v.map(|x| twice(x)), captured_args: ()>",
        # tuple and struct fields, string literals as DDlog's compiler writes them; an
        # interpolation or an `if`: the program's text
        '<closure: (function(t: (ddlog_std::s64, P)):string{("q\\"\\n" ++ '
        "(ddlog_std::to_lowercase(((t.1).b))))}), captured_args: ()>",
        '<closure: |t| "${t.0}", captured_args: ()>',
        '<closure: |t| if (t.0 > 0) { "a" } else { "b" }, captured_args: ()>',
        "<closure: (function(s: ddlog_std::Set<ddlog_std::u8>):bool{((set::any(s, "
        "(function(x: bit<8>):bool{(x == 8'd7)}))) and (not (ddlog_std::contains(s, "
        "8'd1))))}), captured_args: ()>",
    }

def test_functions_of_one_name_and_different_parameter_types():
    # DDlog overloads a function name by its parameters' types: `"${m}"` finds the
    # to_string of m's type, a call the function its arguments' types fit
    src = """
typedef mac_t = Mac{addr: bit<48>}
typedef ip_t = Ip{addr: bit<32>}
function to_string(m: mac_t): string = "mac ${m.addr}"
function to_string(i: ip_t): string = "ip ${i.addr}"
function show(x: bigint, s: string): string = "${x}${s}"
function show(s: string, x: bigint): string = "${s}${x}"
function both(m: mac_t, i: ip_t): string = "${m} ${i}"
output relation O(s: string)
O("${Mac{5}} / ${Ip{7}} / " ++ show(1, "a") ++ show("b", 2) ++ " / " ++ both(Mac{1}, Ip{2})).
"""
    assert run(src)["O"] == {("mac 5 / ip 7 / 1ab2 / mac 1 ip 2",)}
    fails(src.replace('show("b", 2)', 'show(true, 2)'),
          "none of the functions 'show' takes arguments of types (bool, bigint)",
          "show(true")


def test_bit_concatenation_hex_split_and_shadowed_function_names(tmp_path):
    src = """
function hexes(b: bit<8>, c: bit<4>): string = "${hex(b ++ c)} ${hex(-1: s8)}"
function count(count: bigint): bigint = count + 1
output relation O(h: string, p: Vec<string>, e: Vec<string>, n: bigint)
O(hexes(171, 5), split("a  b", " "), split("ab", ""), count(1)).
"""
    assert run(src)["O"] == {("ab5 ff", ("a", "", "b"), ("", "a", "b", ""), 2)}
    fails("output relation O(x: bit<8>)\nO(((1: bit<128>) ++ (2: bit<8>)) as bit<8>).",
          "`++` of bit<128> and bit<8> makes a bit<136>, wider than the widest integer",
          "(1: bit<128>)")
    # in a module, a parameter named like a function is the parameter
    (tmp_path / "m.dl").write_text("function inv(): bigint = 5\n"
                                   "function get(inv: bigint): bigint = inv + inv()\n")
    (tmp_path / "main.dl").write_text("import m\noutput relation O(x: bigint)\nO(m::get(1)).\n")
    assert evaluate(check_file(str(tmp_path / "main.dl")), {})["O"] == {(6,)}


def test_continue_and_break_in_loops():
    src = """
function stop_at_negative(v: Vec<s64>): (Vec<s64>, s64) {
    var res: Vec<s64> = [];
    var n: s64 = 0;
    for (x in v) {
        if (x < 0) { break };
        n = n + 1;
        if (x % 2 == 0) { continue };
        vec_push(res, x)
    };
    (res, n)
}
function sum_odd(v: Vec<s64>): s64 {
    var s: s64 = 0;
    for (x in v) { if (x % 2 == 0) { continue }; s = s + x };
    s
}
input relation I(v: Vec<s64>)
output relation O(v: Vec<s64>, r: (Vec<s64>, s64), s: s64)
O(v, stop_at_negative(v), sum_odd(v)) :- I(v).
"""
    out = run(src, I={((1, 2, 3, -1, 5),), ((2, 4),), ((),)})
    assert out["O"] == {((1, 2, 3, -1, 5), ((1, 3), 3), 8), ((2, 4), ((), 2), 0),
                        ((), ((), 0), 0)}
    parse_fails("function f(x: s64): s64 { if (x > 1) { break }; x }",
                "`break` is allowed in a `for` loop's body only", "break")


def test_references_interning_and_strings():
    # `relation &R` and `&R(..)`, `&C{..}`: Ref<T> is T here; istring, intern/ival likewise;
    # `i"milk"` is a string; a backslash ending a line continues the string
    src = """
input relation &School(name: string, address: string)
relation Info(s: Ref<School>, n: istring)
Info(school, intern(school.name)) :- school in &School(.address = a), a != "".
output relation O(name: string, addr: string, long: string)
O(ival(n), a, "one \\
          two") :- Info(&School{.address = a}, n), n != i"none".
"""
    out = run(src, School={("x", "1 Main"), ("none", "2 Side"), ("y", "")})
    assert out["O"] == {("x", "1 Main", "one two")}


def test_the_question_mark_returns_none():
    # `e?`: e's value when Some, else the function returns None; inside an operand it takes
    # the rest of the expression into its Some branch, inside an `if` branch only that branch
    src = """
function price(inv: Map<string, string>, item: string): Option<u64> {
    Some{ inv.get(item)?.parse_dec_u64()? * 100 }
}
function first2(v: Vec<s64>): Option<s64> = Some{v.nth(0)? + v.nth(1)?}
function pick(o: Option<s64>, c: bool): Option<s64> {
    var x = if (c) o? else 0;
    Some{x + 1}
}
input relation I(i: string, v: Vec<s64>, o: Option<s64>, c: bool)
output relation O(p: Option<u64>, f: Option<s64>, k: Option<s64>)
O(price(["a" -> "12", "b" -> "x", "c" -> "-1"], i), first2(v), pick(o, c)) :- I(i, v, o, c).
"""
    out = run(src, I={("a", (1, 2), 5, True), ("b", (3,), None, True),
                      ("c", (), None, False), ("d", (4, 5, 6), 7, False)})
    assert out["O"] == {(1200, 3, 6), (None, None, None), (None, None, 1), (None, 9, 1)}
    parse_fails("function f(o: Option<s64>): s64 = o? + 1", "`?` returns None or an Err "
                "from the function: it is allowed in a function or closure declared to return "
                "an Option<..> or a Result<..>", "o?")


def test_untyped_literals_take_the_integer_type_a_later_use_wants():
    # DDlog infers `[-5, 0]` as Vec<s64> from `y == x` with x: s64, and `[1, 2, 3]` from
    # the fold's s64 accumulator; the literals' default (bigint) is retried with that type
    src = """
typedef T = Ref<Vec<s64>>
output relation O(v: Vec<s64>, n: s64, r: T)
function f(xs: Vec<s64>): Vec<s64> {
    var res = xs;
    var exclude = [-5, 0];
    exclude.push(7);
    res.retain(|x| is_none(exclude.find(|y| y == x)));
    res
}
O(f([-5, 1, 7, 2]), [1, 2, 3].fold(|a, x| a + x, 0), ref_new([4]).deref()).
"""
    assert run(src)["O"] == {((1, 2), 6, (4,))}


# ---------------------------------------------------------------------------------------------
# Output format


def test_values_print_as_ddlog_prints_them():
    from ddlog.types import DOUBLE, FLOAT, TOption, BIGINT
    from ddlog.values import format_value

    assert format_value(None, TOption(BIGINT)) == "ddlog_std::None{}"
    assert format_value(5, TOption(BIGINT)) == "ddlog_std::Some{.x = 5}"
    assert [format_value(v, DOUBLE) for v in (1.0, 0.5, -0.0, float("nan"), 1e20)] == \
        ["1", "0.5", "-0", "NaN", "100000000000000000000"]
    assert format_value(1.0471975803375244, FLOAT) == "1.0471976"  # shortest for 32 bits


def test_bit_slices():
    out = run("""
input relation I(x: bit<32>, s: s8)
output relation O(hi: bit<4>, lo: bit<8>, one: bit<1>, neg: bit<3>)
O(x[31:28], x[7:0], x[0:0], s[7:5]) :- I(x, s).
""", I={(0xaabbccdd, -1)})
    assert out["O"] == {(0xa, 0xdd, 1, 7)}
    parse_fails("input relation I(x: bit<8>)\noutput relation O(y: bit<8>)\n"
                "O(x[0:3]) :- I(x).", "needs its high bit first", "x[0:3]")
    fails("input relation I(x: bit<8>)\noutput relation O(y: bit<9>)\nO(x[8:0]) :- I(x).",
          "literal 511 out of range for bit<8>", "x[8:0]")


def test_question_mark_in_a_closure_whose_value_is_a_result():
    # `?` returns from the closure, whose type comes from its value's constructor (`Ok{..}`)
    src = """
function half(x: bigint): Result<bigint, string> {
    if (x % 2 == 0) { Ok{x / 2} } else { Err{"odd"} }
}
input relation In(x: bigint)
output relation O(x: bigint, r: Option<Result<bigint, string>>)
O(x, Some{x}.map(|v| Ok{half(v)? + 1})) :- In(x).
"""
    out = run(src, In={(4,), (3,)})["O"]
    assert out == {(4, Record("Ok", (3,))), (3, Record("Err", ("odd",)))}


def test_an_empty_collection_takes_the_type_its_uses_give():
    src = """
import tinyset as TS
input relation In(v: Vec<u8>)
output relation O(s: Set<u8>, t: TS::Set64<u8>, w: Vec<string>)
O(s, t, w) :- In(v),
    var s = { var s = set_empty(); for (x in v) { s.insert(x) }; s },
    var t = { var t = TS::empty(); for (x in v) { if (x > 1) { t.TS::insert(x) } }; t },
    var w = { var w = []; for (x in v) { w.push("${x}") }; w }.
"""
    assert run(src, In={((3, 1, 3),)})["O"] == {((1, 3), (3,), ("3", "1", "3"))}


def test_generic_ascriptions_and_comparisons_after_a_colon():
    # `Name<` is one token: after an ascription's `:` it opens type arguments, while a name,
    # a space and `<` compare
    src = """
typedef Box<'T> = Box{v: 'T}
typedef Small = Small{n: u8}
input relation In(n: u8)
output relation O(b: Box<u8>, lt: bool)
O(Box{n}: Box<u8>, (Small{n}: Small < Small{5})) :- In(n).
"""
    assert run(src, In={(3,), (7,)})["O"] == {(Record("Box", (3,)), True),
                                             (Record("Box", (7,)), False)}


def test_a_reference_pattern_binding_its_value_in_an_atom():
    src = """
typedef T = A{x: bigint} | B{y: string}
input relation R(t: T)
output relation O(s: string, t: T)
O(y, t) :- R(.t = &t@B{.y = y}).
"""
    rows = {(Record("A", (1,)),), (Record("B", ("b",)),)}
    assert run(src, R=rows)["O"] == {("b", Record("B", ("b",)))}
