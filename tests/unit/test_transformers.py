"""Relations of tuples and other values (`relation R[(A, B)]`, `relation R[T]`), DDlog's graph
transformers (`apply SCC(Edges, from, to) -> (Labels)`) against a reference written here, and
the pieces of DDlog's syntax that its test `simple.dl` brought in: `index` declarations,
parenthesised statements, `if (c) e` without a block, a constructor's fields bound in a block
(`C{.f = var x} = e;`), nested escaped strings in interpolations."""
from __future__ import annotations

import random

import pytest

from ddlog.check import check_text
from ddlog.errors import ParseError, TypeCheckError
from ddlog.syntax.parser import parse_program
from ddlog.syntax.commands import parse_commands
from ddlog.values.literals import row_of
from ddlog.values.render import dump_lines
from tests.unit.test_oracle import run
from tests.unit.test_typecheck import where

# ---------------------------------------------------------------------------------------------
# Relations of tuples and of other values

VALUES = """
typedef Id = bigint
input relation Ids[Id]
input relation Pairs[(bigint, bigint)]
output relation Shifted[(bigint, bigint)]
output relation Whole[(bigint, bigint)]
output relation Lonely[bigint]
output relation Seconds[Option<bigint>]
Shifted[(a, b + 1)] :- Pairs[(a, b)].
Whole[t] :- Pairs[t], t.0 < t.1.
Lonely[x] :- Ids[x], not Pairs[(x, _)].
Seconds[Some{b}] :- Pairs[(_, b)].
Seconds[None] :- Ids[0].
"""


def test_relations_of_tuples_and_values():
    out = run(VALUES, Ids={(0,), (1,), (5,)}, Pairs={(1, 2), (3, 1)})
    assert out["Shifted"] == {(1, 3), (3, 2)}
    assert out["Whole"] == {(1, 2)}
    assert out["Lonely"] == {(0,), (5,)}
    assert out["Seconds"] == {(2,), (1,), (None,)}


def test_relations_of_tuples_and_values_print_and_read_their_records():
    checked = check_text(VALUES, "t.dl")
    rel = checked.relations["Pairs"]
    assert rel.columns[0][0] == "_0" and rel.shape == "tuple"
    update = parse_commands("insert Pairs[(5, 6)];")[0]
    assert row_of(update.atom, rel) == (5, 6)
    update = parse_commands("insert Ids[7];")[0]
    assert row_of(update.atom, checked.relations["Ids"]) == (7,)
    assert dump_lines(rel, [(5, 6)]) == ["(5, 6)"]
    assert dump_lines(checked.relations["Seconds"], [(None,), (2,)]) == [
        "ddlog_std::None{}", "ddlog_std::Some{.x = 2}"]


def test_a_relation_of_structs_binds_its_record_only_to_a_variable():
    src = "typedef T = T{a: bigint}\ninput relation R[T]\noutput relation O(a: bigint)\n" \
          "O(1) :- not R[x]."
    with pytest.raises(TypeCheckError) as info:
        check_text(src, "t.dl")
    assert "binds a new variable x to the whole record" in info.value.message
    assert (info.value.span.line, info.value.span.col) == where(src, "x]")


# ---------------------------------------------------------------------------------------------
# Graph transformers

GRAPH = """
import graph
input relation Edge(src: bigint, dst: bigint)
function src(e: Edge): bigint { e.src }
function dst(e: Edge): bigint { e.dst }
output relation Scc[(bigint, bigint)]
apply SCC(Edge, src, dst) -> (Scc)
output relation Cc[(bigint, bigint)]
apply graph::ConnectedComponents(Edge, src, dst) -> (Cc)
output relation Cc64[(bigint, bigint)]
apply ConnectedComponents64(Edge, src, dst) -> (Cc64)
output relation Bi[(bigint, bigint)]
apply UnsafeBidirectionalEdges(Edge, src, dst) -> (Bi)
"""


def _reach(edges: set[tuple]) -> dict[int, set[int]]:
    """Each node's successors through paths of one edge or more."""
    out: dict[int, set[int]] = {}
    for start in {a for a, _ in edges}:
        seen: set[int] = set()
        todo = [b for a, b in edges if a == start]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo += [b for a, b in edges if a == n]
        out[start] = seen
    return out


def reference(edges: set[tuple]) -> dict[str, set[tuple]]:
    """The transformers' meaning, computed directly: SCC labels the nodes on a cycle with the
    least node of their component; ConnectedComponents labels each edge target with the least
    target it can be reached from (itself included); the bidirectional edges are the pairs of
    distinct nodes with edges both ways."""
    reach = _reach(edges)
    scc = {(n, min(m for m in reach[n] if n in reach.get(m, set())))
           for n in reach if n in reach[n]}
    targets = {b for _, b in edges}
    cc = {(n, min({n} | {m for m in targets if n in reach.get(m, set())})) for n in targets}
    bi = {(a, b) for a, b in edges if a != b and (b, a) in edges}
    return {"Scc": scc, "Cc": cc, "Cc64": cc, "Bi": bi}


@pytest.mark.parametrize("seed", range(6))
def test_graph_transformers_against_a_reference(seed):
    rng = random.Random(seed)
    nodes = range(rng.randint(2, 8))
    edges = {(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.randint(0, 14))}
    out = run(GRAPH, Edge=edges)
    assert {k: out[k] for k in ("Scc", "Cc", "Cc64", "Bi")} == reference(edges), edges


def test_transformer_of_edges_with_more_fields_and_a_module_prefix():
    src = """
import graph as g
typedef Link = Link{a: string, b: string, w: bigint}
input relation Links[Link]
function from(l: Link): string { l.a }
function to(l: Link): string { l.b }
output relation Labels[(string, string)]
apply g::SCC(Links, from, to) -> (Labels)
"""
    links = {("x", "y", 1), ("y", "x", 2), ("y", "z", 3)}
    assert run(src, Links=links)["Labels"] == {("x", "x"), ("y", "x")}


def transformer_fails(src: str, message: str, at: str) -> None:
    with pytest.raises(TypeCheckError) as info:
        check_text(src, "t.dl")
    assert message in info.value.message, info.value.message
    assert (info.value.span.line, info.value.span.col) == where(src, at), info.value.span


HEAD = "import graph\ninput relation E(a: bigint, b: bigint)\n" \
       "function f(e: E): bigint { e.a }\nfunction t(e: E): bigint { e.b }\n"


def test_transformer_errors():
    transformer_fails(HEAD + "output relation O[(bigint, bigint)]\napply Nope(E, f, t) -> (O)",
                      "unknown transformer 'Nope'", "apply")
    transformer_fails("extern transformer Mine(R: relation['A]) -> (O: relation['A])\n"
                      "input relation I(x: bigint)\noutput relation O(x: bigint)\n"
                      "apply Mine(I) -> (O)", "transformer 'Mine' is declared `extern`",
                      "apply")
    transformer_fails(HEAD + "output relation O[(bigint, bigint)]\napply SCC(E, f) -> (O)",
                      "takes 3 argument(s), found 2", "apply")
    transformer_fails(HEAD + "output relation O[(bigint, bigint)]\napply SCC(E, f, T) -> (O)",
                      "the argument to of 'graph::SCC' is a function, found 'T'", "T)")
    transformer_fails(HEAD + "output relation O[(bigint, bigint)]\napply SCC(F, f, t) -> (O)",
                      "unknown relation 'F'", "F,")
    transformer_fails(HEAD + "output relation O(a: bigint, b: bigint)\n"
                             "apply SCC(E, f, t) -> (O)",
                      "the output of 'graph::SCC' is a relation of node pairs", "O)")
    transformer_fails(HEAD + "output relation O[(string, string)]\napply SCC(E, f, t) -> (O)",
                      "type mismatch", "apply")
    transformer_fails(HEAD + "output relation O[(bigint, bigint)]\nrelation O__Path(x: bigint)\n"
                             "apply SCC(E, f, t) -> (O)",
                      "relation 'O__Path' is declared by the program", "apply")


# ---------------------------------------------------------------------------------------------
# Syntax from DDlog's simple.dl

def test_index_declarations_are_checked():
    src = "input relation R(a: bigint, b: string)\n" \
          "index ByA(a: bigint) on R(a, _)\nindex ByB(b: string,) on R(_, b,)\n"
    check_text(src, "t.dl")
    for bad, message, at in [
            ("index I(a: bigint) on S(a)", "unknown relation 'S'", "S(a)"),
            ("index I(c: bigint) on R(a, _)", "field 'c' of index 'I' is not a variable", "c:"),
            ("index I(a: string) on R(a, _)", "type mismatch", "a: string"),
            ("index I(a: bigint) on R(a + 1, _)", "variables and `_` only", "a + 1"),
            ("index I(a: bigint) on R(a)", "gives each of the 2 column(s)", "R(a)")]:
        text = "input relation R(a: bigint, b: string)\n" + bad
        with pytest.raises(TypeCheckError) as info:
            check_text(text, "t.dl")
        assert message in info.value.message, info.value.message
        assert (info.value.span.line, info.value.span.col) == where(text, at)


STATEMENTS = r"""
typedef C = C{f1: string, f2: string}
function all(xs: Vec<bool>): bool {
    for (x in xs) {
        if (not x) return false
    };
    return true
}
function first_big(xs: Vec<bigint>, n: bigint): Option<bigint> {
    var seen = 0;
    for (x in xs) {
        seen = seen + 1;
        if (x > n) { return Some{x * 10 + seen} }
    };
    None
}
function parens(): bigint {
    (var x = 1);
    (x = x + 1);
    (for (y in [10, 20]) { x = x + y });
    x; x + 0
}
function fields(): string {
    var y = C{.f1 = "foo", .f2 = "bar"};
    C{.f1 = var e} = y;
    C{var c, var d} = y;
    e ++ c ++ d
}
output relation Out(a: bool, b: bool, n: bigint, s: string, bell: string)
Out(all([true, true]), all([true, false]), parens(), fields(), "\a\v").
output relation Big(a: Option<bigint>, b: Option<bigint>)
Big(first_big([1, 5, 7], 4), first_big([1], 4)).
output relation Strings(s: string)
Strings("${\"${\\\"${8+8}\\\"}\"}").
Strings("${\"${\\\"${\\\\\\\"${9+9}\\\\\\\"}\\\"}\"}").
Strings("${ $[| \"${3+7}\" |] }").
"""


def test_statements_and_strings_of_ddlog_simple():
    out = run(STATEMENTS)
    assert out["Out"] == {(True, False, 32, "foofoobar", "\a\v")}
    assert out["Strings"] == {("16",), ("18",), (' "10" ',)}
    assert out["Big"] == {(52, None)}


def test_return_in_a_loop_is_refused_where_a_fold_cannot_stop():
    nested = "function f(v: Vec<Vec<u8>>): u8 {\n  for (w in v) {\n    for (x in w) {\n" \
             "      return x\n    }\n  };\n  0\n}"
    with pytest.raises(ParseError) as info:
        parse_program(nested, "t.dl")
    assert "inside another `for` loop is not supported" in info.value.message
    closure = "function f(v: Vec<u8>): u8 {\n  var g = |w: Vec<u8>| {\n" \
              "    for (x in w) { return x };\n    0\n  };\n  g(v)\n}"
    with pytest.raises(ParseError) as info:
        parse_program(closure, "t.dl")
    assert "a `for` loop of a closure is not supported" in info.value.message
