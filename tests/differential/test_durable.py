"""Durable epochs in one process: a state directory's traces are written at each epoch's end
by several threads at once (config.persist_threads), and what they wrote must be the
oracle's answer, both in the running engine and in the state read back from its files.

The command line's tests (tests/e2e) cover the same commits across processes; here the
threads are the subject, on the test session's Spark.
"""
from __future__ import annotations

import random
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from ddlog.app.database import Database, Transaction
from runtime.spark import side_by_side
from runtime.stats import JobCounter
from tests.oracle import apply_updates, evaluate

REACH = Path(__file__).resolve().parents[2] / "programs" / "reach.dl"


def test_side_by_side_counts_every_thread_and_waits_for_all(spark):
    """Jobs started by the threads belong to the caller's job group; results keep the calls'
    order; a failing call raises only once every other call has finished."""
    counter = JobCounter(spark)
    with counter.counting("threads") as counted:
        got = side_by_side(spark, [lambda k=k: spark.range(k + 1).count() for k in range(3)],
                           threads=3)
    assert got == [1, 2, 3]
    assert counted.jobs >= 3

    finished = []
    release = threading.Event()

    def slow():
        release.wait(30)
        spark.range(2).count()
        finished.append("slow")

    def failing():
        release.set()
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        side_by_side(spark, [slow, failing], threads=2)
    assert finished == ["slow"]


@pytest.mark.parametrize("threads", [1, 4])
def test_durable_epochs_against_the_oracle(spark, tmp_path, threads):
    """Random inserts and deletes into reach.dl, committed to a state directory: after every
    epoch the engine's relations are the oracle's, and so are those of the state opened
    again from its files at the end."""
    rng = random.Random(7 + threads)
    state = tmp_path / "state"
    db = Database.for_program(str(REACH), str(state))
    db.config = replace(db.config, persist_threads=threads, max_past_batches=2)
    program = db.program
    inputs: dict[str, set] = {"Edge": set(), "Root": set()}
    updates = [("insert", "Root", (0,))]  # the first epoch's, with its edges
    try:
        for epoch in range(6):
            for _ in range(5):
                known = sorted(inputs["Edge"])
                if known and rng.random() < 0.3:
                    updates.append(("delete", "Edge", rng.choice(known)))
                else:
                    updates.append(("insert", "Edge", (rng.randrange(8), rng.randrange(8))))
            txn = Transaction()
            for kind, rel, row in updates:
                getattr(txn, kind)(rel, row)
            db.commit(txn)
            inputs = apply_updates(inputs, updates)
            updates = []
            want = evaluate(program, inputs)
            for rel in ("Reach", "Unreachable"):
                assert set(db.rows(rel)) == want[rel], f"epoch {epoch + 1}: {rel}"
    finally:
        db.close()
    again = Database.open(str(state))
    try:
        assert again.epoch == 6
        for rel in ("Reach", "Unreachable", "Edge"):
            assert set(again.rows(rel)) == want[rel], f"re-opened: {rel}"
    finally:
        again.close()
