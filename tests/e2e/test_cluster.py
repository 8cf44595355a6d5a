"""A real Spark standalone cluster on loopback: a master and two workers started with the
`spark-class` that ships in the pyspark wheel, and run, feed, stream and query against it with
`--master spark://127.0.0.1:PORT`, checked against the oracle. Lineage is cut with reliable
checkpoints under the state directory (an executor-local checkpoint would vanish with its
executor); a commit made to cut lineage through them gives the oracle's answer too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.connect_server import SPARK_HOME, free_port
from ddlog.plan import load
from tests.e2e.cli_support import PROGRAMS, ROOT, DDlogCLI, oracle_records, parse_dump
from tests.oracle import apply_updates, load_dat

REACH = PROGRAMS / "reach.dl"


class Cluster:
    def __init__(self, work: Path):
        self.work = work
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def env(self) -> dict[str, str]:
        env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOG_DIR=str(self.work),
                   PYSPARK_PYTHON=sys.executable)
        env.pop("SPARK_MASTER", None)
        return env

    def _start(self, name: str, *args: str) -> Path:
        log = self.work / f"{name}.log"
        with open(log, "w") as out:
            self.procs.append(subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args], stdout=out,
                stderr=subprocess.STDOUT, env=self.env(), start_new_session=True))
        return log

    def start(self, workers: int = 2) -> None:
        master = self._start("master", "org.apache.spark.deploy.master.Master", "--host",
                             "127.0.0.1", "--port", str(self.port), "--webui-port", "0")
        self._wait(master, "I have been elected leader")
        for k in range(1, workers + 1):
            d = self.work / f"worker{k}"
            d.mkdir()
            log = self._start(f"worker{k}", "org.apache.spark.deploy.worker.Worker", "--host",
                              "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                              "0", "--work-dir", str(d), self.url)
            self._wait(log, "Successfully registered with master")

    def _wait(self, log: Path, line: str, timeout: float = 180) -> None:
        deadline = time.time() + timeout
        while line not in log.read_text():
            if any(p.poll() is not None for p in self.procs) or time.time() > deadline:
                raise AssertionError(f"{log.name}: no {line!r}:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        """By their process ids (each started in a session of its own)."""
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=30)


class ClusterCLI(DDlogCLI):
    def __init__(self, spark_dir: Path, cwd: Path, cluster: Cluster):
        super().__init__(spark_dir, cwd)
        self.cluster = cluster

    def spark_args(self) -> list[str]:
        return ["--master", self.cluster.url,
                "--conf", "spark.executor.memory=1g",
                "--conf", "spark.driver.memory=1g",
                "--conf", "spark.sql.shuffle.partitions=2",
                "--conf", f"spark.sql.warehouse.dir={self.spark_dir / 'warehouse'}"]

    def env(self, extra=None):
        return super().env({"PYSPARK_PYTHON": sys.executable, **(extra or {})})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def expected(inputs) -> dict[str, set[str]]:
    return oracle_records(REACH, inputs, ("Reach", "Unreachable"))


# A commit in the API with no local relations (every result is cut by a checkpoint): prints
# the checkpoint files written under the state, then the rows of Reach as JSON.
CHECKPOINTED_COMMIT = """
import json, os, sys
from ddlog.app.database import Database, SparkOptions, Transaction
from ddlog.runtime.config import Config
state, master = sys.argv[1], sys.argv[2]
# one commit and done: a short-lived session (its JVMs compile with C1 only)
db = Database.open(state, SparkOptions(master, {"spark.executor.memory": "1g",
                                                "spark.driver.memory": "1g"},
                                       short_lived=True))
db.config = Config(local_rows=0, driver_rows=0, recompute_ratio=float("inf"))
txn = Transaction()
txn.insert("Edge", (4, 40)); txn.insert("Edge", (40, 41)); txn.delete("Edge", (1, 2))
db.commit(txn)
where = db.spark.sparkContext.getCheckpointDir()
files = sum(len(f) for _, _, f in os.walk(where.removeprefix("file:")))
print(json.dumps({"dir": where, "files": files,
                  "reach": sorted(r[0] for r in db.rows("Reach"))}))
db.close()
"""


def test_cluster_session(cluster, tmp_path):
    cli = ClusterCLI(tmp_path / "spark", tmp_path, cluster)
    state = tmp_path / "state"
    program = load(str(REACH)).program
    inputs = load_dat(str(PROGRAMS / "reach.dat"), program)

    r = cli("run", REACH, "--state", state, "--input", PROGRAMS / "reach.dat", timeout=900)
    assert r.code == 0, r
    assert r.err == "", r.err  # quiet, on a cluster too
    updates = [("insert", "Edge", (4, 7)), ("delete", "Edge", (3, 4)), ("insert", "Root", (6,))]
    r = cli("feed", "--state", state, "--insert", "Edge(4, 7)", "--delete", "Edge(3, 4)",
            "--insert", "Root(6)", timeout=900)
    assert r.code == 0, r
    inputs = apply_updates(inputs, updates)

    changes = tmp_path / "changes" / "edge"
    changes.mkdir(parents=True)
    (changes / "a.csv").write_text("src,dst,weight\n3,4,1\n7,8,1\n6,5,-1\n")
    inputs = apply_updates(inputs, [("insert", "Edge", (3, 4)), ("insert", "Edge", (7, 8)),
                                    ("delete", "Edge", (6, 5))])
    r = cli("stream", REACH, "--state", state, "--source", f"Edge=csv:{changes}",
            "--trigger", "available-now", timeout=900)
    assert r.code == 0 and "is at epoch 3" in r.out, r

    want = expected(inputs)
    r = cli("query", "--state", state, "Reach", "Unreachable", timeout=900)
    assert r.code == 0, r
    for rel in ("Reach", "Unreachable"):
        assert parse_dump(r.out, rel) == want[rel], rel

    p = subprocess.run([sys.executable, "-c", CHECKPOINTED_COMMIT, str(state), cluster.url],
                       capture_output=True, text=True, cwd=tmp_path, timeout=900,
                       env=cli.env({"PYTHONPATH": str(ROOT)}))
    assert p.returncode == 0, p.stderr[-3000:]
    done = json.loads(p.stdout.strip().splitlines()[-1])
    assert done["dir"] and str(state / "checkpoints") in done["dir"], done
    assert done["files"] > 0, "no reliable checkpoint was written"
    assert not os.listdir(state / "checkpoints"), "checkpoints are removed at close"
    inputs = apply_updates(inputs, [("insert", "Edge", (4, 40)), ("insert", "Edge", (40, 41)),
                                    ("delete", "Edge", (1, 2))])
    want = expected(inputs)
    assert {f"Reach{{.node = {n}}}" for n in done["reach"]} == want["Reach"]


def test_a_cluster_without_workers_fails_fast(tmp_path):
    """A master whose workers are gone: a command waits a bounded time for an executor, then
    fails naming the master and what it waited for, the state as it was; the checkpoint
    directory a killed command left is removed by the next writer."""
    from tests.e2e.test_state_safety import clean_failure, tree_hash

    state = tmp_path / "state"
    local = DDlogCLI(tmp_path / "spark", tmp_path)
    assert local("run", REACH, "--state", state, "--input", PROGRAMS / "reach.dat").code == 0
    leftover = state / "checkpoints" / "p999999999-0badc0de"  # no such process
    leftover.mkdir(parents=True)
    c = Cluster(tmp_path / "cluster")
    (tmp_path / "cluster").mkdir()
    try:
        c.start(workers=0)
        cli = ClusterCLI(tmp_path / "spark", tmp_path, c)
        started = time.monotonic()
        r = cli("feed", "--state", state, "--insert", "Edge(4, 7)", "--conf",
                "ddlog.executor_wait=8", timeout=600)
        assert time.monotonic() - started < 300
        clean_failure(r)
        assert f"no Spark executor joined within 8 s on {c.url}" in r.err, r
    finally:
        c.stop()
    assert not leftover.exists(), "the writer sweeps a gone process's checkpoints"
    before = tree_hash(state)
    r = local("query", "--state", state, "Reach")
    assert r.code == 0 and tree_hash(state) == before
    assert not os.listdir(state / "checkpoints")
