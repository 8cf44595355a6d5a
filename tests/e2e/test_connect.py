"""Spark Connect: a real Connect server on loopback (`sbin/start-connect-server.sh` of the
pyspark wheel, `--wait`), and the commands run through it as a Connect user runs them
(tests/differential/test_connect.py runs the differential tests through one):

- `ddlog run`, `feed`, `query`, `sql`, `shell`, `serve` and `stream` with `--remote sc://...`
  (and SPARK_REMOTE);
- a state written by a classic session and read through Connect, and the other way.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ddlog.plan import load
from tests.e2e.cli_support import PROGRAMS, DDlogCLI, kill_group, oracle_records, parse_dump
from tests.e2e.test_serve import start_server
from tests.oracle import apply_updates, load_dat

if TYPE_CHECKING:
    from bench.connect_server import ConnectServer

REACH = PROGRAMS / "reach.dl"


class ConnectCLI(DDlogCLI):
    def __init__(self, spark_dir: Path, cwd: Path, server: "ConnectServer"):
        super().__init__(spark_dir, cwd)
        self.server = server

    def spark_args(self) -> list[str]:
        return ["--remote", self.server.url]


def test_cli_through_connect(connect_server, tmp_path):
    """run, feed, query and sql with --remote; a state carried between the backends."""
    cli = ConnectCLI(tmp_path / "spark", tmp_path, connect_server)
    classic = DDlogCLI(tmp_path / "spark", tmp_path)
    state = tmp_path / "state"
    program = load(str(REACH)).program
    inputs = load_dat(str(PROGRAMS / "reach.dat"), program)

    def check(r, inputs) -> None:
        assert r.code == 0, r
        want = oracle_records(REACH, inputs, ("Reach", "Unreachable"))
        for rel in ("Reach", "Unreachable"):
            assert parse_dump(r.out, rel) == want[rel], rel

    r = cli("run", REACH, "--state", state, "--input", PROGRAMS / "reach.dat", timeout=900)
    assert r.code == 0, r
    assert r.err == "", r.err
    r = cli("feed", "--state", state, "--insert", "Edge(4, 7)", "--delete", "Edge(3, 4)",
            "--stats", timeout=900)
    assert r.code == 0, r
    # the server's UI answers: its jobs are counted
    assert re.search(r"epoch \d+: [\d.]+s, [1-9]\d* Spark jobs", r.err), r.err
    inputs = apply_updates(inputs, [("insert", "Edge", (4, 7)), ("delete", "Edge", (3, 4))])
    check(cli("query", "--state", state, "Reach", "Unreachable", timeout=900), inputs)

    # written through Connect, read and fed by a classic session, and back
    check(classic("query", "--state", state, "Reach", "Unreachable", timeout=900), inputs)
    r = classic("feed", "--state", state, "--insert", "Root(6)", timeout=900)
    assert r.code == 0, r
    inputs = apply_updates(inputs, [("insert", "Root", (6,))])
    by_env = DDlogCLI(tmp_path / "spark", tmp_path)
    by_env.spark_args = lambda: []  # SPARK_REMOTE alone, as PySpark's own tools take it
    check(by_env("query", "--state", state, "Reach", "Unreachable", timeout=900,
                 env={"SPARK_REMOTE": connect_server.url}), inputs)

    r = cli("sql", "--state", state, "SELECT count(*) AS n FROM Reach", timeout=900)
    want = oracle_records(REACH, inputs, ("Reach",))["Reach"]
    assert r.code == 0 and str(len(want)) in r.out, r
    r = cli("sql", "--state", state, "DROP TABLE Reach", timeout=900)
    assert r.code != 0 and "only reads" in r.err and "Traceback" not in r.err, r

    script = "start;\ninsert Root(5);\ncommit dump_changes;\ndump Reach;\n"
    r = cli("shell", REACH, "--state", state, input=script, timeout=900)
    inputs = apply_updates(inputs, [("insert", "Root", (5,))])
    assert r.code == 0, r
    assert parse_dump(r.out, "Reach") == oracle_records(REACH, inputs, ("Reach",))["Reach"]

    # served: the server's engine runs on a Connect session; clients go through it
    served = start_server(cli, state)
    try:
        r = cli("feed", "--state", state, "--insert", "Edge(5, 11)", timeout=900)
        assert r.code == 0 and "Reach{.node = 11}: +1" in r.out, r
        inputs = apply_updates(inputs, [("insert", "Edge", (5, 11))])
        check(cli("query", "--state", state, "Reach", "Unreachable", timeout=900), inputs)
    finally:
        kill_group(served)

    # the README's example: CSV and JSON sources read by the server, a Parquet sink it writes
    d = tmp_path / "files"
    d.mkdir()
    (d / "edges.csv").write_text("src,dst\n1,2\n2,3\n3,1\n3,4\n5,6\n6,5\n")
    (d / "roots.json").write_text('{"node": 1}\n')
    r = cli("run", REACH, "--state", tmp_path / "from-files", f"--input=Edge=csv:{d / 'edges.csv'}",
            f"--input=Root=json:{d / 'roots.json'}", f"--output=Unreachable=parquet:{d / 'out'}",
            timeout=900)
    assert r.code == 0 and "Unreachable: 2 rows" in r.out, r
    assert list((d / "out").glob("*.parquet")), "no Parquet written"
    check(cli("query", "--state", tmp_path / "from-files", "Reach", "Unreachable", timeout=900),
          {"Edge": {(1, 2), (2, 3), (3, 1), (3, 4), (5, 6), (6, 5)}, "Root": {(1,)}})

    # a stream: this command lists the directory itself (Connect has no foreachBatch here)
    changes = tmp_path / "changes" / "edge"
    changes.mkdir(parents=True)
    (changes / "a.csv").write_text("src,dst,weight\n5,12,1\n5,11,-1\n")
    r = cli("stream", REACH, "--state", state, "--source", f"Edge=csv:{changes}",
            "--trigger", "available-now", timeout=900)
    assert r.code == 0 and "1 batch committed" in r.out, r
    assert "Traceback" not in r.err, r
    inputs = apply_updates(inputs, [("insert", "Edge", (5, 12)), ("delete", "Edge", (5, 11))])
    (changes / "b.csv").write_text("src,dst,weight\n12,13,1\n")
    r = cli("stream", REACH, "--state", state, "--source", f"Edge=csv:{changes}",
            "--trigger", "available-now", timeout=900)
    assert r.code == 0 and "1 batch committed" in r.out, r  # a.csv is not read again
    inputs = apply_updates(inputs, [("insert", "Edge", (12, 13))])
    check(cli("query", "--state", state, "Reach", "Unreachable", timeout=900), inputs)
    # the state remembers who listed its files: Spark's file source would read a.csv again
    r = classic("stream", REACH, "--state", state, "--source", f"Edge=csv:{changes}",
                "--trigger", "available-now", timeout=900)
    assert r.code != 0 and "stream it through Connect again" in r.err, r
    assert "Traceback" not in r.err, r
