"""Lineage stays bounded: the plans the engine materialises do not grow with the
number of fixpoint iterations, nor with the number of epochs.

Every delta is cut from its lineage by `runtime.physical.checkpoint_leaf` (large) or
`runtime.physical.local_relation` (small); this test records the size of each plan handed to them and checks that the late ones are no larger than the early ones (up to a constant
factor), on a chain whose reachability needs one iteration per edge, then over many epochs."""
from __future__ import annotations

import pytest

import runtime.physical as physical

CHAIN = """
input relation Edge(src: bigint, dst: bigint)
input relation Root(node: bigint)
output relation Reach(node: bigint)
Reach(r) :- Root(r).
Reach(y) :- Reach(x), Edge(x, y).
"""


@pytest.fixture
def plan_sizes(monkeypatch):
    sizes: list[int] = []

    def recording(original):
        def cut(df):
            sizes.append(len(df._jdf.queryExecution().logical().toString()))
            return original(df)
        return cut

    for name in ("checkpoint_leaf", "local_relation"):
        monkeypatch.setattr(physical, name, recording(getattr(physical, name)))
    return sizes


def test_plans_do_not_grow_with_iterations_or_epochs(spark, plan_sizes):
    from ddlog.api import Program

    n = 36
    p = Program.load(CHAIN, spark)
    p.insert("Edge", [(k, k + 1) for k in range(n)])
    p.insert("Root", [(0,)])
    p.commit()
    assert p.engine.iterations[max(p.engine.iterations)] >= n  # one iteration per chain link
    assert p.relation("Reach").count() == n + 1
    # the last plan is the epoch's end, which folds every trace's batches of the epoch at once
    # (at most config.max_cur_batches per trace, however many iterations ran)
    first_epoch = list(plan_sizes)[:-1]
    early, late = first_epoch[8:16], first_epoch[-8:]
    assert max(late) <= 1.5 * max(early), (early, late)

    plan_sizes.clear()
    for k in range(n, n + 12):  # extend the chain one edge per epoch
        p.insert("Edge", [(k, k + 1)])
        p.commit()
    assert p.relation("Reach").count() == n + 13
    early, late = plan_sizes[:len(plan_sizes) // 3], plan_sizes[-len(plan_sizes) // 3:]
    assert max(late) <= 1.5 * max(early), (early, late)
