"""The circuit IR is the one contract between the language and the runtime: every expression a
circuit node holds is an IR expression (ddlog/plan/exprs.py), never a syntax node, for every
example program and for each kind of expression."""
from __future__ import annotations

import dataclasses
import glob
import os

import pytest

from ddlog.plan import exprs as ir
from ddlog.plan import load, load_text
from ddlog.plan.explain import explain_text
from ddlog.tree import Node
from tests.support import PROGRAMS

EVERYTHING = """
typedef Shape = Circle{r: bigint} | Square{side: bigint}
input relation R(x: bigint, s: string, o: Option<bigint>, v: Vec<bigint>, sh: Shape)
output relation S(a: bigint, b: string, c: bool)
output relation G(x: bigint, n: usize, m: bigint)
S(x + 1, "${s}!", not (x > 2) and is_some(o)) :- R(x, s, o, v, sh), var y = FlatMap(v),
    y != x, var z = match (sh) { Circle{r} -> r, Square{.side = d} -> d * 2 },
    var t = (x, s), t.0 == x, var w = if (x < 0) { -x } else { x as bigint },
    var q = unwrap_or(o, 0), var e = [1, 2].push(q), len(e) > 0.
G(x, n, m) :- R(x, _, _, _, _), var g = x.group_by(x), var n = g.count(),
    var m = g.sum_of(|v| v * 2).
"""


def _expressions(cp):
    """Every expression a node holds (in its fields, through lists and (name, expr) pairs)."""
    for c in cp.circuits:
        for node in c.nodes:
            stack = [getattr(node, f.name) for f in dataclasses.fields(node)]
            while stack:
                x = stack.pop()
                if isinstance(x, (list, tuple)):
                    stack.extend(x)
                elif isinstance(x, Node):
                    yield node, x


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(PROGRAMS, "*.dl"))) + [None],
                         ids=lambda p: os.path.basename(p) if p else "everything")
def test_circuits_hold_only_ir(path):
    cp = load(path) if path else load_text(EVERYTHING)
    seen = 0
    for node, e in _expressions(cp):
        for sub in e.walk():
            seen += 1
            assert isinstance(sub, ir.IRNode), (type(node).__name__, type(sub).__name__, sub)
    assert seen
    explain_text(cp)


COUNTED = """
input relation E(a: bigint, b: bigint)
relation A(a: bigint)
A(a) :- E(a, _).
relation B(a: bigint)
B(a) :- A(a).
B(a) :- E(_, a).
multiset M(a: bigint)
M(a) :- B(a).
relation C(a: bigint)
C(a) :- M(a).
relation Neg(a: bigint)
Neg(a) :- E(a, _).
relation Rec(a: bigint)
Rec(a) :- E(a, _).
Rec(b) :- Rec(a), E(a, b).
relation Old(a: bigint)
Old(a) :- E(a, _).
relation Plain(a: bigint)
Plain(a) :- E(a, _).
output relation G(n: usize)
G(n) :- C(a), not Neg(a), Rec(a), Old-1(a), var n = a.group_by(()).count_distinct().
output relation P(a: bigint)
P(a) :- Plain(a).
"""


def test_counted_relations_are_those_a_group_sees_the_multiplicities_of():
    """A group reads C (whose multiplicities come from the multiset M, and M's from B, B's
    from A): those internal relations are counted and have no distinct; a relation negated, a
    recursive one, one read through a delay and one no group reads stay sets. DDlog's
    --output-internal-relations (distinct_internal) counts none."""
    from ddlog.plan.circuit import Distinct, Output

    cp = load_text(COUNTED)
    assert cp.counted == {"A", "B", "C"}
    for circuit in cp.circuits:
        for rel, out in circuit.outputs.items():
            inp = circuit.nodes[circuit.nodes[out].input]
            assert isinstance(circuit.nodes[out], Output)
            assert isinstance(inp, Distinct) == (rel in {"Neg", "Rec", "Old", "Plain", "P", "G"})
    assert load_text(COUNTED, distinct_internal=True).counted == frozenset()
