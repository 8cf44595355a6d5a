"""`ddlog stream`: change files arriving in watched directories, one epoch per micro-batch,
checked against the oracle after every batch; exactly once across a replay and SIGKILL; a bad
change file stops the stream with a message and commits nothing of its batch.

The program is reach.dl (recursion, and negation over it). Edge changes come as CSV with a
weight column (inserts and deletes), Root changes as JSON without one (inserts).

DDLOG_TEST_SEED=<n> replays the random changes and kill delay of a failing run.
"""
from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from tests.e2e.cli_support import (PROGRAMS, DDlogCLI, kill_group, manifest_epoch,
                                   oracle_records, parse_dump, state_snapshot)
from tests.oracle import apply_updates

REACH = PROGRAMS / "reach.dl"
OUTPUTS = ("Reach", "Unreachable")


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> DDlogCLI:
    return DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))


def seed() -> int:
    return int(os.environ.get("DDLOG_TEST_SEED", random.randrange(1 << 30)))


class Files:
    """Change files written into the watched directories (each written beside and renamed in,
    as a producer must, so that Spark never lists half a file), and the oracle of their
    effect applied once each, in order."""

    def __init__(self, root: Path):
        self.edge, self.root = root / "edge", root / "root"
        self.edge.mkdir(parents=True)
        self.root.mkdir(parents=True)
        self.inputs: dict[str, set] = {"Edge": set(), "Root": set()}
        self.count = 0
        self.history: list[dict[str, set]] = []  # inputs after each file

    def sources(self) -> list[str]:
        return ["--source", f"Edge=csv:{self.edge}", "--source", f"Root=json:{self.root}"]

    def _put(self, where: Path, suffix: str, text: str) -> None:
        self.count += 1
        tmp = where.parent / f".{self.count}.tmp"
        tmp.write_text(text)
        os.replace(tmp, where / f"f{self.count:04d}.{suffix}")

    def edges(self, changes: list[tuple[int, int, int]]) -> None:
        """(src, dst, weight) rows; the last row of an edge decides."""
        self._put(self.edge, "csv", "src,dst,weight\n" + "".join(f"{s},{d},{w}\n"
                                                                  for s, d, w in changes))
        self.inputs = apply_updates(self.inputs, [("insert" if w > 0 else "delete", "Edge",
                                                   (s, d)) for s, d, w in changes])
        self.history.append(self.inputs)

    def roots(self, nodes: list[int]) -> None:
        self._put(self.root, "json", "".join(json.dumps({"node": n}) + "\n" for n in nodes))
        self.inputs = apply_updates(self.inputs, [("insert", "Root", (n,)) for n in nodes])
        self.history.append(self.inputs)

    def random_edges(self, rng: random.Random, n: int) -> None:
        known = sorted(self.inputs["Edge"])
        rows = []
        for _ in range(n):
            if known and rng.random() < 0.35:
                s, d = rng.choice(known)
                rows.append((s, d, -1))
            else:
                rows.append((rng.randrange(12), rng.randrange(12), 1))
        self.edges(rows)

    def expected(self) -> dict[str, set[str]]:
        return oracle_records(REACH, self.inputs, OUTPUTS)


def dump(cli: DDlogCLI, state: Path) -> dict[str, set[str]]:
    r = cli("query", "--state", state, *OUTPUTS)  # one command, its records name their relation
    assert r.code == 0, r
    return {rel: parse_dump(r.out, rel) for rel in OUTPUTS}


def sink_args(where: Path) -> list[str]:
    return [a for rel in OUTPUTS for a in ("--output", f"{rel}=json:{where / rel}")]


def read_sinks(where: Path) -> dict[str, set[str]]:
    """The outputs as the JSON sinks hold them (rewritten after each batch)."""
    out = {}
    for rel in OUTPUTS:
        out[rel] = {f"{rel}{{.node = {json.loads(line)['node']}}}"
                    for part in (where / rel).glob("part-*.json")
                    for line in part.read_text().splitlines()}
    return out


def read_feed(feed: Path) -> dict[int, set[tuple[str, int]]]:
    """A JSON change feed: epoch -> {(record, weight)}."""
    out: dict[int, set] = {}
    for part in sorted(feed.glob("epoch=*/part-*.json")):
        epoch = int(part.parent.name.split("=")[1])
        for line in part.read_text().splitlines():
            d = json.loads(line)
            out.setdefault(epoch, set()).add((f"Reach{{.node = {d['node']}}}", d["weight"]))
    return out


def test_stream_batches_against_the_oracle(cli, tmp_path):
    """Several runs of `--trigger available-now`, each one epoch of the files that arrived
    (several files of both relations in one batch are one transaction), checked against the
    oracle after each; the change feed of Reach adds up to its value, epoch by epoch."""
    rng = random.Random(seed())
    files = Files(tmp_path / "in")
    state, feed = tmp_path / "state", tmp_path / "feed"
    expected_by_epoch = {0: {"Reach": set(), "Unreachable": set()}}
    for epoch in range(1, 4):
        files.random_edges(rng, 6)
        files.roots([rng.randrange(12)])
        if epoch == 2:
            files.random_edges(rng, 4)  # two files of Edge in one batch, applied in order
        r = cli("stream", REACH, "--state", state, *files.sources(), "--trigger",
                "available-now", "--changes", f"Reach=json:{feed}",
                "--changes", f"Unreachable=parquet:{tmp_path / 'unreachable'}",
                *(sink_args(tmp_path / "out") if epoch == 1 else []))  # kept in the state
        assert r.code == 0, r
        assert f"is at epoch {epoch}" in r.out, r
        assert "input rows changed" in r.err  # progress per batch
        assert "WARN" not in r.err and "INFO" not in r.err, r.err  # quiet
        assert manifest_epoch(state) == epoch
        expected_by_epoch[epoch] = files.expected()
        assert read_sinks(tmp_path / "out") == expected_by_epoch[epoch], f"epoch {epoch}"
    # nothing new: no batch, no epoch
    r = cli("stream", REACH, "--state", state, *files.sources(), "--trigger", "available-now")
    assert r.code == 0 and "0 batches committed" in r.out, r
    assert manifest_epoch(state) == 3
    assert dump(cli, state) == expected_by_epoch[3]
    changes = read_feed(feed)
    for epoch in range(1, 4):
        before, after = expected_by_epoch[epoch - 1]["Reach"], expected_by_epoch[epoch]["Reach"]
        want = {(rec, 1) for rec in after - before} | {(rec, -1) for rec in before - after}
        assert changes.get(epoch, set()) == want, f"change feed of epoch {epoch}"
    # downstream: the Parquet change feed of Unreachable (node, weight), consumed as change
    # files by another stream, rebuilds it as that state's Root
    other = tmp_path / "downstream"
    r = cli("stream", REACH, "--state", other, "--source",
            f"Root=parquet:{tmp_path / 'unreachable'}", "--trigger", "available-now")
    assert r.code == 0, r
    r = cli("query", "--state", other, "Root")
    assert r.code == 0, r
    assert {line.replace("Root", "Unreachable") for line in parse_dump(r.out, "Root")} == \
        expected_by_epoch[3]["Unreachable"]


def test_stream_processing_time_trigger_and_sigterm(cli, tmp_path):
    """`--trigger 1s` runs until SIGTERM: files dropped one at a time become epochs while it
    runs; SIGTERM ends it cleanly (exit 0) with everything committed."""
    rng = random.Random(seed())
    files = Files(tmp_path / "in")
    state = tmp_path / "state"
    p = cli.popen("stream", REACH, "--state", state, *files.sources(), "--trigger", "1s",
                  *sink_args(tmp_path / "out"))
    try:
        for k in range(3):
            files.random_edges(rng, 5) if k else files.roots([0, 1])
            deadline = time.time() + 300
            while not (state / "manifest.json").exists() or manifest_epoch(state) < k + 1:
                assert p.poll() is None, p.stderr.read()
                assert time.time() < deadline, "the stream did not pick up the file"
                time.sleep(0.5)
        os.kill(p.pid, signal.SIGTERM)  # the ddlog process (as `kill PID` does), not its JVM
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            kill_group(p)
    assert p.returncode == 0, err
    assert "is at epoch 3" in out, out
    assert read_sinks(tmp_path / "out") == files.expected()


def test_stream_exactly_once_across_replay_and_sigkill(cli, tmp_path):
    """Killed after the epoch is committed but before Spark marks the batch done: the replay
    is recognised and skipped. Killed before the manifest is renamed: the batch is applied by
    the next run. Killed at a random moment: each file counts exactly once in the end."""
    rng = random.Random(seed())
    files = Files(tmp_path / "in")
    state = tmp_path / "state"
    args = ("stream", REACH, "--state", state, *files.sources(), "--trigger", "available-now")

    files.roots([0])
    files.random_edges(rng, 8)
    r = cli(*args, env={"DDLOG_FAILPOINT": "stream-batch-committed"})
    assert r.code == -signal.SIGKILL, r
    assert manifest_epoch(state) == 1  # committed, but Spark will replay the batch
    r = cli(*args)
    assert r.code == 0 and "already committed" in r.err, r
    assert manifest_epoch(state) == 1  # not applied twice
    assert dump(cli, state) == files.expected()

    files.random_edges(rng, 8)
    r = cli(*args, env={"DDLOG_FAILPOINT": "before-manifest-rename"})
    assert r.code == -signal.SIGKILL, r
    assert manifest_epoch(state) == 1  # nothing of the batch committed
    r = cli(*args)
    assert r.code == 0, r
    assert manifest_epoch(state) == 2
    assert dump(cli, state) == files.expected()

    for _ in range(3):
        files.random_edges(rng, 5)
    p = cli.popen(*args)
    time.sleep(rng.uniform(3.0, 20.0))
    kill_group(p)
    r = cli(*args)
    assert r.code == 0, r
    assert dump(cli, state) == files.expected()


def test_bad_change_file_commits_nothing(cli, tmp_path):
    files = Files(tmp_path / "in")
    state = tmp_path / "state"
    args = ("stream", REACH, "--state", state, *files.sources(), "--trigger", "available-now")
    files.edges([(1, 2, 1)])
    files.roots([1])
    assert cli(*args).code == 0
    before = state_snapshot(state)
    files.edges([(2, 3, 1)])
    (files.edge / "bad.csv").write_text("src,dst,weight\n3,4,1\n4,x,1\n")
    r = cli(*args)
    assert r.code == 1, r
    assert "bad.csv" in r.err and "column dst: not a bigint" in r.err, r.err
    assert "Traceback" not in r.err, r.err
    assert state_snapshot(state) == before
    # a weight that is neither 1 nor -1
    (files.edge / "bad.csv").write_text("src,dst,weight\n3,4,2\n")
    r = cli(*args)
    assert r.code == 1 and "weight must be 1 (insert) or -1 (delete)" in r.err, r
    assert state_snapshot(state) == before
    # fixed in place: the batch goes through, exactly once
    (files.edge / "bad.csv").write_text("src,dst,weight\n3,4,1\n")
    files.inputs = apply_updates(files.inputs, [("insert", "Edge", (3, 4))])
    r = cli(*args)
    assert r.code == 0, r
    assert dump(cli, state) == files.expected()
    # without its streaming checkpoint a streamed state is not continued (files would be
    # applied twice or skipped)
    os.rename(state / "stream", tmp_path / "stream-moved")
    r = cli(*args)
    assert r.code == 1 and "streaming checkpoint" in r.err and "Traceback" not in r.err, r
    os.rename(tmp_path / "stream-moved", state / "stream")
    r = cli(*args)
    assert r.code == 0 and "0 batches committed" in r.out, r


def test_stream_refuses_bad_arguments(cli, tmp_path):
    state = tmp_path / "state"
    for extra, message in [
        (["--source", "Reach=csv:/tmp/x"], "cannot stream into relation 'Reach'"),
        (["--source", "Edge=table:t"], "change files are csv, json, parquet"),
        (["--source", f"Edge=csv:{tmp_path}/e", "--trigger", "soon"], "--trigger soon"),
        (["--source", f"Edge=csv:{tmp_path}/e", "--changes", f"Edge=json:{tmp_path}/c"],
         "only an output relation's changes"),
        ([], "needs at least one --source"),
    ]:
        r = cli("stream", REACH, "--state", state, *extra, "--trigger", "available-now") \
            if "--trigger" not in extra else cli("stream", REACH, "--state", state, *extra)
        assert r.code != 0 and message in r.err, (extra, r)
        assert "Traceback" not in r.err
        assert not state.exists(), "a refused stream leaves no state behind"
