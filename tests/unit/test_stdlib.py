"""DDlog's standard library over collections (ddlog/builtins/library.py): each function's value
through the oracle, on each receiver DDlog defines it for, and its type errors. The same
functions run on Spark in tests/differential (programs/stdlib.dl and the `library` program of
test_engine_targeted.py)."""
from __future__ import annotations

import os

import pytest

from ddlog.builtins import FUNCTIONS, GROUP_METHODS, reference
from ddlog.values import Record
from tests.unit.test_oracle import fact, run
from tests.support import ROOT
from tests.unit.test_typecheck import expr_fails

V = "[3, 1, 2, 1]"
M = '[3 -> "c", 1 -> "a", 2 -> "b"]'


@pytest.mark.parametrize("ty,expr,expected", [
    # closures
    ("Vec<bigint>", f"{V}.map(|x| x * 10)", (30, 10, 20, 10)),
    ("Set<bigint>", "[3, 1, 2].to_set().map(|x| x / 2)", (0, 1)),
    ("Vec<bigint>", f"{V}.filter(|x| x != 1)", (3, 2)),
    ("Vec<bigint>", f"{V}.retain(|x| x > 1)", (3, 2)),
    ("Vec<bigint>", f"{V}.flatmap(|x| [x, x])", (3, 3, 1, 1, 2, 2, 1, 1)),
    ("Vec<bigint>", f"{V}.filter_map(|x| if (x > 1) {{ Some{{x}} }} else {{ None }})", (3, 2)),
    ("Option<bigint>", f"{V}.find(|x| x < 3)", 1),
    ("Option<bigint>", f"{V}.find(|x| x > 3)", None),
    ("bool", f"{V}.any(|x| x == 2)", True),
    ("bool", f"{V}.all(|x| x > 1)", False),
    ("usize", f"{V}.count(|x| x == 1)", 2),
    ("bigint", f"{V}.fold(|a, x| a * 10 + x, 0)", 3121),
    ("string", '["a", "b"].fold(|acc, s| acc ++ s, ">")', ">ab"),
    ("Option<bigint>", f"{V}.arg_min(|x| x % 2)", 2),
    ("Option<bigint>", f"{V}.arg_max(|x| x % 2)", 1),  # a Vec's last among ties (Rust)
    ("Option<bigint>", "[1].filter(|x| x > 5).arg_max(|x| x)", None),
    ("Vec<bigint>", f"{V}.sort_by(|x| -x)", (3, 2, 1, 1)),
    # sizes and elements
    ("usize", f"{V}.size()", 4),
    ("bool", '"".is_empty()', True),
    ("Option<bigint>", f"{V}.nth(1)", 1),
    ("Option<bigint>", f"{V}.nth(9)", None),
    ("Option<bigint>", f"{V}.first()", 3),
    ("Option<bigint>", f"{V}.last()", 1),
    ("Set<bigint>", f"{V}.to_set()", (1, 2, 3)),
    ("Vec<bigint>", "Some{4}.to_vec()", (4,)),
    ("Set<bigint>", "Some{4}.to_set()", (4,)),
    # Vec
    ("Vec<bigint>", f"{V}.push_imm(0)", (3, 1, 2, 1, 0)),
    ("Vec<bigint>", f"{V}.append([7])", (3, 1, 2, 1, 7)),
    ("Vec<bigint>", f"{V}.sort()", (1, 1, 2, 3)),
    ("Vec<bigint>", f"{V}.sort_imm().dedup()", (1, 2, 3)),
    ("Vec<bigint>", f"{V}.reverse()", (1, 2, 1, 3)),
    ("Vec<bigint>", f"{V}.resize(6, 0)", (3, 1, 2, 1, 0, 0)),
    ("Vec<bigint>", f"{V}.resize(2, 0)", (3, 1)),
    ("Vec<bigint>", f"{V}.truncate(1)", (3,)),
    ("Vec<bigint>", f"{V}.update_nth(1, 9)", (3, 9, 2, 1)),
    ("Vec<bigint>", f"{V}.update_nth(10, 9)", (3, 1, 2, 1)),
    ("string", '["a", "b", "c"].join(", ")', "a, b, c"),
    ("Vec<(string, isize)>", '["a", "b", "c"].zip([1, 2])', (("a", 1), ("b", 2))),
    ("(Vec<string>, Vec<bigint>)", '["a", "b"].zip([1, 2, 3]).unzip()', (("a", "b"), (1, 2))),
    ("Map<string, bigint>", '["a", "b", "a"].zip([1, 2, 3]).to_map()', (("a", 3), ("b", 2))),
    ("Vec<s64>", "range_vec(10, 15, 2)", (10, 12, 14)),
    ("Vec<s64>", "range_vec(15, 10, -2)", (15, 13, 11)),
    ("Vec<s64>", "range_vec(10, 100, 0)", ()),
    ("Vec<bigint>", "vec_singleton(5)", (5,)),
    ("Vec<bigint>", "vec_empty()", ()),
    # Set
    ("Set<bigint>", "[3, 1].to_set().insert(2)", (1, 2, 3)),
    ("Set<bigint>", "[3, 1].to_set().remove(3)", (1,)),
    ("Set<bigint>", "set_union([3, 1].to_set(), [2, 3].to_set())", (1, 2, 3)),
    ("Set<bigint>", "set_intersection([3, 1].to_set(), [2, 3].to_set())", (3,)),
    ("Set<bigint>", "set_difference([3, 1].to_set(), [2, 3].to_set())", (1,)),
    ("Set<bigint>", "set_singleton(4)", (4,)),
    ("Set<bigint>", "set_empty()", ()),
    # Map (entries sorted by key, one per key; literals `[k -> v]` or pairs where a Map is due)
    ("Map<bigint, string>", f"{M}", ((1, "a"), (2, "b"), (3, "c"))),
    ("Map<bigint, string>", '[(2, "x"), (1, "y"), (2, "z")]', ((1, "y"), (2, "z"))),
    ("Option<string>", f"{M}.get(2)", "b"),
    ("Option<string>", f"{M}.get(7)", None),
    ("bool", f"{M}.contains_key(3)", True),
    ("Vec<bigint>", f"{M}.keys()", (1, 2, 3)),
    ("Vec<string>", f"{M}.values()", ("a", "b", "c")),
    ("Option<bigint>", f"{M}.nth_key(2)", 3),
    ("Option<string>", f"{M}.nth_value(3)", None),
    ("usize", f"{M}.size()", 3),
    ("bool", f"{M}.is_empty()", False),
    ("Map<bigint, string>", f"{M}.insert(0, \"z\").insert(2, \"B\")",
     ((0, "z"), (1, "a"), (2, "B"), (3, "c"))),
    ("Map<bigint, string>", f"{M}.remove(2)", ((1, "a"), (3, "c"))),
    ("Map<bigint, string>", f"{M}.union([3 -> \"C\", 4 -> \"d\"])",
     ((1, "a"), (2, "b"), (3, "C"), (4, "d"))),
    ("Map<bigint, string>", f"{M}.map(|v| v ++ v)", ((1, "aa"), (2, "bb"), (3, "cc"))),
    ("Map<bigint, string>", f"{M}.map(|k, v| v ++ k)", ((1, "a1"), (2, "b2"), (3, "c3"))),
    ("Map<bigint, string>", f"{M}.map_keys(|k| k / 2)", ((0, "a"), (1, "c"))),
    ("Map<bigint, string>", f"{M}.filter(|v| v != \"b\")", ((1, "a"), (3, "c"))),
    ("Map<bigint, string>", f"{M}.retain(|k, v| k > 1)", ((2, "b"), (3, "c"))),
    ("Map<bigint, bigint>", f"{M}.filter_map(|k, v| if (k == 2) {{ None }} else {{ Some{{k}} }})",
     ((1, 1), (3, 3))),
    ("string", f"{M}.fold(|a, v| a ++ v, \">\")", ">abc"),
    ("string", f"{M}.fold(|a, k, v| \"${{a}}${{k}}${{v}}\", \"\")", "1a2b3c"),
    ("Option<string>", f"{M}.find(|v| v > \"a\")", "b"),
    ("bool", f"{M}.any(|k, v| k == 3 and v == \"c\")", True),
    ("Vec<(bigint, string)>", f"{M}.to_vec()", ((1, "a"), (2, "b"), (3, "c"))),
    ("Map<string, bigint>", '[("b", 1), ("a", 2), ("b", 3)].to_map()', (("a", 2), ("b", 3))),
    ("Map<bigint, string>", "map_singleton(1, \"x\")", ((1, "x"),)),
    # map_in_place's closure changes its `mut` value parameter
    ("Map<bigint, (string, bigint)>", f"{{ var m = {M}.map(|k, v| (v, k)); "
     "m.map_in_place(|k, v| v.1 = v.1 * 10 + k); m }", ((1, ("a", 11)), (2, ("b", 22)),
                                                        (3, ("c", 33)))),
    ("Map<bigint, string>", f"{{ var m = {M}; m.map_in_place(|k, v| {{ v = v ++ v; "
     "if (k == 2) { v = \"-\" } }); m }", ((1, "aa"), (2, "-"), (3, "cc"))),
    ("Map<bigint, string>", "map_empty()", ()),
    ("string", f"{{ var s = \"\"; for (e in {M}) {{ s = s ++ e.1 ++ e.0 }}; s }}", "a1b2c3"),
    ("u32", "pow32(2: u32, 32)", 0),
    ("u64", "pow32(2, 32)", 4294967296),
    ("s8", "pow32(-2, 7)", -128),
    ("bigint", "pow32(3, 0)", 1),
    ("string", '"${default(): u32}${default(): string}${default(): bool}"', "0false"),
    ("Map<bigint, string>", "default()", ()),
    # Option
    ("bigint", "None.unwrap_or_default()", 0),
    ("(string, Vec<bigint>, bool)", "None.unwrap_or_default()", ("", (), False)),
])
def test_library_functions(ty, expr, expected):
    assert fact(ty, expr) == expected


def test_group_methods_with_closures():
    out = run("""
input relation S(k: string, v: bigint)
output relation G(k: string, m: Vec<bigint>, f: Vec<bigint>, s: bigint, a: bool, n: usize,
                  mn: bigint, last: bigint, nth: Option<bigint>)
G(k, g.map(|x| x * 2), g.filter(|x| x > 1), g.fold(|a, x| a + x, 100), g.all(|x| x > 0),
  g.count(|x| x > 1), g.arg_min(|x| -x), g.last(), g.nth(1)) :-
    S(k, v), var g = v.group_by(k).
""", S={("a", 1), ("a", 3), ("b", 2)})
    assert out["G"] == {("a", (2, 6), (3,), 104, True, 1, 3, 3, 3),
                        ("b", (4,), (2,), 102, True, 1, 2, 2, None)}


def test_default_of_a_struct_is_its_first_constructor():
    src = "typedef Sh = Circle{r: bigint} | Dot\n"
    assert fact("Sh", "None.unwrap_or_default()", src) == Record("Circle", (0,))


def test_library_type_errors():
    expr_fails("x.map(|y| y)", "function 'map' expects a Vec, Set or Group as the receiver, "
               "found bigint", "x.map")
    expr_fails("v.filter(|y| y + 1)", "expects a closure returning bool, found bigint", "y + 1")
    expr_fails("v.fold(|a| a, 0)", "expects a closure of 2 parameters", "|a| a")
    expr_fails("v.fold(|a, y| s, 0)", "expects a closure returning the accumulator's type "
               "bigint, found string", "s, 0")
    expr_fails("v.flatmap(|y| y)", "expects a closure returning a Vec, found bigint", "y)")
    expr_fails("vec_empty()", "function 'vec_empty' needs its type from the context",
               "vec_empty", result="bigint")
    expr_fails("v.join(\",\")", "type mismatch: expected Vec<string>, found Vec<bigint>", "v.")
    expr_fails("[1 -> \"a\"].get(\"b\")", "type mismatch: expected bigint, found string",
               '"b")', result="Option<string>")
    expr_fails("x.get(1)", "function 'get' expects a Map as the receiver, found bigint", "x.get",
               result="Option<string>")
    expr_fails("[1 -> \"a\"].fold(|a, k, v, w| a, 0)", "expects a closure of 2 parameters",
               "|a, k, v, w|")
    expr_fails("[1 -> \"a\", \"b\" -> \"c\"]", "type mismatch", '"b" ->',
               result="Map<bigint, string>")
    expr_fails("map_empty()", "function 'map_empty' needs its type from the context",
               "map_empty", result="bigint")
    expr_fails('"${default()}"', "function 'default' needs its type from the context",
               "default", result="string")
    expr_fails("pow32(2, x)", "type mismatch: expected bit<32>, found bigint", "x)",
               result="u64")
    expr_fails("[1 -> 2].map_in_place(|k, v| v + 1)", "function 'map_in_place' expects a "
               "closure changing its parameter 'v' (`|k, v| v.f = e`)", "|k, v|",
               result="Map<bigint, bigint>")
    expr_fails("[1 -> 2].map(|k, v| v = 1)", "function 'map' expects a closure that gives a "
               "value, found one changing its parameter 'v'", "|k, v|",
               result="Map<bigint, bigint>")
    expr_fails("[1 -> 2].insert(1)", "method 'insert' expects 2 arguments after the receiver, "
               "found 1", "[1 -> 2]")


def test_statements_that_give_back_a_value():
    # DDlog's Map remove returns the removed value; swap_nth trades an element for a variable
    src = """
function drop2(m: Map<bigint, string>): (Map<bigint, string>, Option<string>, Option<string>) {
    var m2 = m;
    var s = m2.remove(2);
    var t = m2.remove(2);
    (m2, s, t)
}
function swap(i: usize): (Vec<bigint>, bigint) {
    var v = [1, 2, 3];
    var x = 9;
    v.swap_nth(i, x);
    (v, x)
}
output relation O(d: (Map<bigint, string>, Option<string>, Option<string>),
                  a: (Vec<bigint>, bigint), b: (Vec<bigint>, bigint))
O(drop2([1 -> "a", 2 -> "b"]), swap(1), swap(5)).
"""
    assert run(src)["O"] == {((((1, "a"),), "b", None), ((1, 9, 3), 2), ((1, 2, 3), 9))}


def test_to_string_of_the_program_converts_its_types():
    src = """
typedef E = A | B{x: u32}
function to_string(e: E): string { match (e) { A -> "A", B{x} -> "B${x}" } }
output relation O(s: string)
O("${A}/" ++ B{3}).
"""
    assert run(src)["O"] == {("A/B3",)}


def test_a_rule_of_several_heads():
    out = run("""
input relation I(x: bigint)
output relation A(x: bigint)
output relation B(x: bigint, y: bigint)
A(x), B(x, y) :- I(x), var y = x * 2.
""", I={(1,), (2,)})
    assert out["A"] == {(1,), (2,)} and out["B"] == {(1, 2), (2, 4)}


def test_concatenation_converts_what_follows_a_string():
    # DDlog's `++` converts its second operand to a string when the first is one
    assert fact("string", '"n=" ++ 4 ++ ", b=" ++ true') == "n=4, b=true"
    assert fact("Vec<bigint>", "[1] ++ [2]") == (1, 2)
    expr_fails('"a" ++ [1]', "cannot convert a value of type Vec<bigint> to a string", "[1]",
               result="string")


def test_each_function_is_defined_once_and_documented():
    assert not set(FUNCTIONS) & {n for n, g in GROUP_METHODS.items()
                                 if FUNCTIONS.get(n) and FUNCTIONS[n].arity == g.arity}
    table = reference()
    for name in [*FUNCTIONS, *GROUP_METHODS]:
        assert f"| `{name}` |" in table


def test_readme_lists_every_builtin():
    # the README's table is reference()'s output: regenerate it when a function changes
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        assert reference() in f.read()
