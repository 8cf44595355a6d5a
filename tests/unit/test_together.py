"""Which strata an epoch runs side by side (ddlog/plan/physical.together): each group's actions are
packed into one Spark action, so fewer groups are fewer jobs. A stratum may only run after every
stratum that writes a relation it reads, and a recursive one runs alone."""
from __future__ import annotations

import glob
import os

import pytest

from ddlog.plan import load
from ddlog.plan.circuit import Circuit
from ddlog.plan.physical import physical_plan

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Two aggregates over a recursive relation: the stratifier orders each group-by just before
# the relation that reads it (G1, Count, G2, Lowest), so that pairs of consecutive strata
# depend on each other.
LEVELS = """
input relation Edge(src: bigint, dst: bigint)
relation Path(src: bigint, dst: bigint)
output relation Count(src: bigint, n: usize)
output relation Lowest(src: bigint, m: bigint)
output relation Both(src: bigint)
output relation Next(dst: bigint)
output relation Loop(n: bigint)
Path(x, y) :- Edge(x, y).
Path(x, z) :- Path(x, y), Edge(y, z).
Count(x, n) :- Path(x, y), var n = y.group_by(x).count().
Lowest(x, m) :- Path(x, y), var m = y.group_by(x).min().
Both(x) :- Count(x, _), Lowest(x, _).
Next(y) :- Both(x), Edge(x, y).
Loop(x) :- Edge(x, x).
"""


def groups_of(circuits: list[Circuit]) -> list[list[Circuit]]:
    plan = physical_plan(circuits)
    return [[plan.strata[k].circuit for k in g] for g in plan.groups]


def assert_runnable(groups: list[list[Circuit]]) -> None:
    """A recursive stratum alone; no stratum reads what its own group or a later one writes."""
    for k, g in enumerate(groups):
        assert len(g) == 1 or not any(c.recursive for c in g), g
        here = {r for c in g for r in c.relations}
        later = {r for h in groups[k + 1:] for c in h for r in c.relations}
        assert not any(c.imports() & (here | later) for c in g), g


def test_strata_of_one_level_run_together():
    groups = groups_of(load(LEVELS).circuits)
    assert_runnable(groups)
    names = [sorted(r for c in g for r in c.relations if not r.startswith("__")) for g in groups]
    # Path (recursive) alone; then both group-bys and Loop; then the relations that read the
    # group-bys; Both; Next. Grouping consecutive strata only took 6 groups, the group-bys
    # apart.
    assert names == [["Path"], ["Loop"], ["Count", "Lowest"], ["Both"], ["Next"]], names
    assert [len(g) for g in groups] == [1, 3, 2, 1, 1]


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "programs", "*.dl"))),
                         ids=os.path.basename)
def test_every_program_runs_its_strata_in_order(path):
    with open(path) as f:
        circuits = load(f.read()).circuits
    groups = groups_of(circuits)
    assert_runnable(groups)
    assert sorted(id(c) for g in groups for c in g) == sorted(map(id, circuits))
