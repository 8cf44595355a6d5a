"""What an epoch records of its Spark actions (runtime/stats), without a JVM: actions land in
the scope recorded on their thread, planning is told apart where a backend shows it, and the
summary splits the epoch's seconds."""
from __future__ import annotations

import contextvars
import threading

from ddlog.runtime import stats
from ddlog.runtime.stats import ActionStats, EpochStats, StratumStats


class Recording:
    """A Recorder without a session: the actions of its scope land in `actions`."""

    def __init__(self, label: str):
        self.label = label
        self.actions: list[ActionStats] = []


def test_actions_land_in_the_epoch_recorded_on_their_thread():
    recording = Recording("stratum 3")
    outside = stats._RECORDING.set(recording)
    try:
        with stats.action(2) as done:
            done.rows = 7
            stats.planned(done, lambda: True)
            stats.planned(done, lambda: False)  # a backend that plans as it runs
        # a thread working for the epoch runs in a copy of its context
        def work() -> None:
            with stats.action(1):
                pass

        worker = threading.Thread(target=contextvars.copy_context().run, args=(work,))
        worker.start()
        worker.join()
    finally:
        stats._RECORDING.reset(outside)
    with stats.action(1):  # no epoch recording: nothing kept
        pass
    assert [(a.scope, a.frames, a.rows) for a in recording.actions] == [
        ("stratum 3", 2, 7), ("stratum 3", 1, 0)]
    assert recording.actions[0].planning is not None
    assert recording.actions[0].seconds >= recording.actions[0].planning


def test_the_epochs_seconds_split_into_actions_planning_and_building():
    epoch = EpochStats(4, seconds=2.0, strata=[
        StratumStats(1, ("R",), mode="incremental", iterations=2, seconds=1.5,
                     spark_seconds=1.2, planning_seconds=0.2)],
        actions=[ActionStats("inputs", 1, 1, 0.3, 0.1), ActionStats("stratum 1", 1, 5, 1.2, 0.2)])
    assert epoch.spark_seconds == 1.5 and abs(epoch.building_seconds - 0.5) < 1e-9
    assert abs(epoch.planning_seconds - 0.3) < 1e-9
    lines = epoch.lines()
    assert lines[1] == ("  2 Spark actions 1.50s: 0.30s planning, 1.20s running, "
                        "0.50s building plans")
    assert lines[2].endswith("1.50s (Spark actions 1.20s: 0.20s planning, 1.00s running)")
    d = epoch.to_dict()
    assert (d["spark_seconds"], d["iterations"], len(d["actions"])) == (1.5, 2, 2)
    # a backend that does not show planning apart: the actions' seconds alone
    remote = EpochStats(5, seconds=1.0, actions=[ActionStats("inputs", 1, 1, 0.4)])
    assert remote.planning_seconds is None
    assert remote.lines()[1] == "  1 Spark actions 0.40s, 0.60s building plans"
