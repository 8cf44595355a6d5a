"""runtime/spark.SettingsGate: who may change a session's SQL settings and who waits."""
from __future__ import annotations

import threading

import pytest

from ddlog.runtime.spark import SettingsGate


def test_shared_holders_run_together_and_an_exclusive_one_waits_for_them():
    gate = SettingsGate()
    both_in = threading.Barrier(2, timeout=10)
    order: list[str] = []
    release = threading.Event()

    def shared(name: str):
        with gate.shared():
            both_in.wait()  # two shared holders at once, or this times out
            order.append(f"{name} in")
            release.wait(10)
            order.append(f"{name} out")

    def exclusive():
        with gate.exclusive():
            with gate.exclusive():  # reentrant within its thread
                with gate.shared():  # its own settings: no wait
                    order.append("exclusive")

    readers = [threading.Thread(target=shared, args=(n,)) for n in ("a", "b")]
    for t in readers:
        t.start()
    while len(order) < 2:
        threading.Event().wait(0.01)
    writer = threading.Thread(target=exclusive)
    writer.start()
    writer.join(0.3)
    assert writer.is_alive(), "the exclusive holder did not wait for the shared ones"
    release.set()
    for t in [*readers, writer]:
        t.join(10)
    assert order[-1] == "exclusive" and sorted(order[:2]) == ["a in", "b in"]


def test_shared_holders_wait_for_an_exclusive_one():
    gate = SettingsGate()
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def exclusive():
        with gate.exclusive():
            inside.set()
            release.wait(10)
            order.append("exclusive")

    def shared():
        with gate.shared():
            order.append("shared")

    w = threading.Thread(target=exclusive)
    w.start()
    inside.wait(10)
    r = threading.Thread(target=shared)
    r.start()
    r.join(0.3)
    assert r.is_alive()
    release.set()
    for t in (w, r):
        t.join(10)
    assert order == ["exclusive", "shared"]


def test_asking_for_it_exclusively_while_holding_it_shared_raises():
    gate = SettingsGate()
    with gate.shared():
        with pytest.raises(RuntimeError, match="cannot change"):
            with gate.exclusive():
                pass
    with gate.exclusive():  # the gate is free again
        pass
