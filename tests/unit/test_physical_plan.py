"""Physical planning (ddlog/plan/physical.py), without a JVM: each pass alone over a circuit,
then all of them over the example programs, and what `ddlog explain --physical` prints."""
from __future__ import annotations

import os
import subprocess
import sys

from ddlog.plan import load
from ddlog.plan.physical import (Arrangement, StratumPlan, Wave, arrangements, inlinable,
                                 levels, physical_plan, waves)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REACH = os.path.join(ROOT, "programs", "reach.dl")
POINTSTO = os.path.join(ROOT, "programs", "pointsto.dl")


def circuit(path: str, relation: str):
    return next(c for c in load(path).circuits if relation in c.relations)


def test_levels_count_stateful_operators_on_the_longest_path():
    c = circuit(REACH, "Reach")  # #7 join (of the delay and Edge), #10 distinct of the union
    got = levels(StratumPlan(c)).levels
    assert (got[3], got[5], got[7], got[8], got[9], got[10]) == (0, 0, 1, 1, 1, 2)


def test_waves_group_operators_by_level():
    c = circuit(POINTSTO, "PointsTo")
    plan = waves(levels(StratumPlan(c)))
    kinds = [[type(c.node(n)).__name__ for n in w.operators] for w in plan.waves]
    assert kinds == [["Join", "Join", "Join"], ["Join", "Join"], ["Distinct"]]
    assert all(not w.relations for w in plan.waves)


def test_only_joins_read_by_a_relations_distinct_alone_are_inlinable():
    c = circuit(POINTSTO, "PointsTo")
    plan = inlinable(StratumPlan(c))
    joins = {n.id for n in c.nodes if type(n).__name__ == "Join"}
    # the two joins that feed a second join (a Load's and a Store's first step) stay
    assert plan.inlinable < joins and len(joins - plan.inlinable) == 2
    read_by_join = {n.left for n in c.nodes if type(n).__name__ == "Join"} | \
        {n.right for n in c.nodes if type(n).__name__ == "Join"}
    assert not plan.inlinable & read_by_join
    # a non-recursive stratum runs one iteration: nothing to inline across iterations
    assert not inlinable(StratumPlan(circuit(REACH, "Unreachable"))).inlinable


def test_arrangements_follow_keys_back_to_the_traces_that_hold_them():
    plan = arrangements(StratumPlan(circuit(REACH, "Reach")))
    assert plan.arrangements[:2] == (Arrangement("Reach", ("c0",)), Arrangement("Edge", ("c0",)))
    assert Arrangement(7, ("v_y",)) in plan.arrangements  # the join's own output
    assert plan.arranged_cur == ("Root", "Edge")
    assert not arrangements(StratumPlan(circuit(REACH, "Unreachable"))).arranged_cur


def test_the_whole_plan_of_reach():
    plan = physical_plan(load(REACH))
    strata = [[list(plan.strata[k].circuit.relations) for k in g] for g in plan.groups]
    assert strata == [[["Node"]], [["Reach"]], [["Unreachable"]]]
    reach = plan.strata[plan.groups[1][0]]
    assert reach.waves == (Wave((7,)), Wave((10,)))
    assert reach.inlinable == frozenset({7})


def test_explain_physical_prints_what_an_epoch_runs():
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "ddlog", "explain", REACH, "--physical"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    physical = done.stdout.split("what an epoch runs:\n", 1)[1]
    assert physical.splitlines()[:9] == [
        "group 0: strata 2 (Node)",
        "  stratum 2, one iteration:",
        "    wave 1: #9 distinct",
        "    arranged: Edge by (c0)",
        "    arranged: Root by (c0)",
        "group 1: strata 3 (Reach)",
        "  stratum 3, recursive: per iteration:",
        "    wave 1: #7 join",
        "    wave 2: #10 distinct"]
    assert "inlined into their readers' action when it pays: #7" in physical
