"""`ddlog serve`: a warm owner of a state that feed, query, sql and shell talk to.

Concurrent feeds from several client processes are all applied, one epoch each (the oracle's
answer in the end); a bad feed is refused as without a server; the shell keeps a transaction
across its lines; the server killed with SIGKILL loses nothing committed, and its stale file
makes clients fall back to opening the state themselves; SIGTERM stops it cleanly.
"""
from __future__ import annotations

import json
import os
import stat
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ddlog.plan import load
from tests.e2e.cli_support import (PROGRAMS, DDlogCLI, kill_group, manifest_epoch, oracle_records,
                                   parse_changes, parse_dump, state_snapshot)
from tests.oracle import load_dat

REACH = PROGRAMS / "reach.dl"


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> DDlogCLI:
    return DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))


def start_server(cli: DDlogCLI, state: Path):
    p = cli.popen("serve", "--state", state)
    deadline = time.time() + 300
    while not _serving(state, p.pid):
        assert p.poll() is None, p.stderr.read()
        assert time.time() < deadline, "the server did not start"
        time.sleep(0.5)
    return p


def _serving(state: Path, pid: int) -> bool:
    try:
        return json.loads((state / ".serve.json").read_text())["pid"] == pid
    except (OSError, ValueError):
        return False


def expected(inputs) -> dict[str, set[str]]:
    return oracle_records(REACH, inputs, ("Reach", "Unreachable"))


def query(cli: DDlogCLI, state: Path, *relations: str) -> dict[str, set[str]]:
    r = cli("query", "--state", state, *relations)
    assert r.code == 0, r
    return {rel: parse_dump(r.out, rel) for rel in relations}


def test_serve_feeds_queries_shell_and_restarts(cli, tmp_path):
    state = tmp_path / "state"
    assert cli("run", REACH, "--state", state, "--input", PROGRAMS / "reach.dat").code == 0
    inputs = load_dat(str(PROGRAMS / "reach.dat"), load(str(REACH)).program)
    inputs = {r: set(inputs.get(r, ())) for r in ("Edge", "Root")}
    server = start_server(cli, state)
    try:
        info = json.loads((state / ".serve.json").read_text())
        mode = stat.S_IMODE((state / ".serve.json").stat().st_mode)
        assert mode == 0o600, oct(mode)  # the token is the owner's only
        # a request that does not prove the token is refused before its body is read (a
        # huge one too), and the server goes on
        for size in ("100", str(10**15)):
            req = urllib.request.Request(
                f"http://127.0.0.1:{info['port']}/", method="POST",
                data=json.dumps({"op": "command", "token": "guess",
                                 "argv": ["query", "--state", str(state), "Reach"]}).encode(),
                headers={"X-DDlog-Nonce": "n" * 32, "X-DDlog-Auth": "guess",
                         "Content-Length": size})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(req, timeout=30)
            assert refused.value.code == 403

        # concurrent feeds from six clients: six epochs, none lost
        new_edges = [(4, 20 + k) for k in range(6)]
        results = [None] * len(new_edges)

        def feed(k: int) -> None:
            results[k] = cli("feed", "--state", state, "--insert", f"Edge{new_edges[k]}")

        threads = [threading.Thread(target=feed, args=(k,)) for k in range(len(new_edges))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for (_, dst), r in zip(new_edges, results):
            assert r.code == 0, r
            assert parse_changes(r.out)["Reach"] == {(f"Reach{{.node = {dst}}}", 1)}
        inputs["Edge"] |= set(new_edges)
        assert manifest_epoch(state) == 1 + len(new_edges)
        want = expected(inputs)
        assert query(cli, state, "Reach", "Unreachable") == want  # served: both at once

        # a client in another directory naming the state relatively, through a symbolic
        # link, finds the server (the writer lock is the server's: a feed not served fails)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        os.symlink(state, elsewhere / "link")
        away = DDlogCLI(cli.spark_dir, elsewhere)
        r = away("feed", "--state", "link", "--insert", "Edge(4, 40)")
        assert r.code == 0 and "Reach{.node = 40}: +1" in r.out, r
        r = away("feed", "--state", os.path.relpath(state, elsewhere), "--delete", "Edge(4, 40)")
        assert r.code == 0 and "Reach{.node = 40}: -1" in r.out, r
        # a command the server does not take says why (the writer lock is never reached)
        r = away("feed", "--state", "link", "--insert", "Nope(1)")
        assert r.code == 1 and "unknown relation 'Nope'" in r.err, r

        # a bad feed is refused with its message, the state untouched
        before = state_snapshot(state)
        r = cli("feed", "--state", state, "--insert", "Edge(1, \"x\")")
        assert r.code == 1 and "Traceback" not in r.err and "Edge" in r.err, r
        assert state_snapshot(state) == before

        # a shell session: a transaction across lines, then a dump
        script = "start;\ninsert Root(5);\ndelete Edge(3, 4);\ncommit dump_changes;\ndump Reach;\n"
        r = cli("shell", REACH, "--state", state, input=script)
        assert r.code == 0, r
        inputs["Root"].add((5,))
        inputs["Edge"].discard((3, 4))
        want = expected(inputs)
        assert parse_dump(r.out, "Reach") >= want["Reach"]
        r = cli("shell", PROGRAMS / "tc.dl", "--state", state, input="dump;\n")
        assert r.code == 1 and "belongs to a different program" in r.err, r
        r = cli("sql", "--state", state, "SELECT count(*) AS n FROM Unreachable")
        assert r.code == 0 and str(len(want["Unreachable"])) in r.out, r

        # SIGKILL: nothing committed is lost; the stale file is ignored by clients
        kill_group(server)
        assert (state / ".serve.json").exists()
        assert query(cli, state, "Unreachable")["Unreachable"] == want["Unreachable"]
        server = start_server(cli, state)
        r = cli("feed", "--state", state, "--delete", "Root(5)")
        assert r.code == 0, r
        inputs["Root"].discard((5,))
        want = expected(inputs)
        assert query(cli, state, "Reach")["Reach"] == want["Reach"]
        server.terminate()  # SIGTERM to the ddlog process
        out, err = server.communicate(timeout=120)
        assert server.returncode == 0, err
        assert "stopped after" in err and not (state / ".serve.json").exists()
    finally:
        if server.poll() is None:
            kill_group(server)
    assert query(cli, state, "Unreachable")["Unreachable"] == want["Unreachable"]
