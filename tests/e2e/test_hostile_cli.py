"""A second round of careless and hostile input, from the command line as a user meets it: no
command writes where it should not, no change file is misread in silence, user input is never
called state damage, no input fills the memory. Each failing command exits non-zero with one
clear message and leaves the state as it was (test_state_safety.tree_hash).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import time
from pathlib import Path

import pytest

from tests.e2e.cli_support import PROGRAMS, DDlogCLI, kill_group, manifest_epoch, parse_dump
from tests.e2e.test_serve import start_server
from tests.e2e.test_state_safety import clean_failure, reach_state, tree_hash

REACH = PROGRAMS / "reach.dl"


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> DDlogCLI:
    return DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="module")
def base(cli, tmp_path_factory) -> Path:
    return reach_state(cli, tmp_path_factory.mktemp("base"))


@pytest.fixture
def state(base, tmp_path) -> Path:
    copy = tmp_path / "state"
    shutil.copytree(base, copy)
    return copy


def live_batch(state: Path) -> Path:
    m = json.loads((state / "manifest.json").read_text())
    return state / m["traces"]["out_Reach"]["batches"][0]["path"]


# ---------------------------------------------------------------------------------------------
# Data loss


def test_sql_only_reads(cli, state):
    """`ddlog sql` runs queries and the commands that show something; anything that writes a
    file, a table or a setting is refused before it runs, naming what it is."""
    before = tree_hash(state)
    batch = live_batch(state)
    for query, words in [
        (f"INSERT OVERWRITE DIRECTORY '{batch}' USING json SELECT * FROM Reach", "only reads"),
        ("CREATE TABLE t USING parquet AS SELECT * FROM Reach", "not a query"),
        ("WITH r AS (SELECT * FROM Reach) INSERT INTO t SELECT * FROM r", "writes"),
        ("SET spark.sql.ansi.enabled=false", "`SET` is not a query"),
        ("SELECT reflect('java.lang.System', 'exit', 0)", "reflect"),
        ("DROP TABLE Reach", "not a query"),
    ]:
        r = cli("sql", "--state", state, query)
        clean_failure(r)
        assert words in r.err, (query, r)
    assert tree_hash(state) == before
    assert not (Path(cli.cwd) / "spark-warehouse").exists()
    for query in ("SHOW TABLES", "DESCRIBE Reach", "EXPLAIN SELECT * FROM Reach",
                  "WITH r AS (SELECT node FROM Reach) SELECT count(*) AS n FROM r"):
        r = cli("sql", "--state", state, query)
        assert r.code == 0, (query, r)
    assert "3" in r.out


def test_sinks_never_write_into_a_state(cli, state, tmp_path):
    """A sink or change feed inside a state directory (this one or another), around this
    state, or overlapping another sink or a watched source, is refused before anything runs;
    a failing run given an empty directory leaves it there."""
    before = tree_hash(state)
    other = tmp_path / "other"
    r = cli("run", REACH, "--state", other, "--input", PROGRAMS / "reach.dat",
            "--output", f"Reach=json:{live_batch(state)}")
    clean_failure(r)
    assert "inside the ddlog state directory" in r.err, r
    assert not other.exists()
    (tmp_path / "in").mkdir()
    for extra, words in [
        (["--output", f"Unreachable=json:{live_batch(state)}"], "inside the ddlog state"),
        (["--output", f"Unreachable=json:{tmp_path}"], "the state directory"),
        (["--changes", f"Reach=json:{tmp_path / 'in' / 'edge'}"], "overlap"),
        (["--output", f"Reach=json:{tmp_path / 'o'}", "--changes",
          f"Reach=json:{tmp_path / 'o' / 'feed'}"], "overlap"),
    ]:
        r = cli("stream", REACH, "--state", state, "--source",
                f"Edge=csv:{tmp_path / 'in' / 'edge'}", "--trigger", "available-now", *extra)
        clean_failure(r)
        assert words in r.err, (extra, r)
    assert tree_hash(state) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("run", REACH, "--state", empty, "--input", f"Edge=csv:{tmp_path / 'nope.csv'}")
    clean_failure(r)
    assert empty.is_dir() and not list(empty.iterdir())


def test_the_state_is_its_owners_only(cli, state):
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "manifest.json").stat().st_mode) == 0o600


# ---------------------------------------------------------------------------------------------
# Change files, read literally and exactly


def stream_failure(r) -> None:
    """A stream that stops on a file: as clean_failure, but the stream may first have said
    what it watches and which files of an earlier failed attempt are gone."""
    lines = [line for line in r.err.splitlines() if not line.startswith("ddlog stream: ")]
    clean_failure(type(r)(r.code, r.out, "\n".join(lines) + "\n"))


def stream(cli: DDlogCLI, state: Path, root: Path, edge: Path, *extra: str):
    return cli("stream", REACH, "--state", state, "--source", f"Root=json:{root}", "--source",
               f"Edge=csv:{edge}", "--trigger", "available-now", *extra)


def roots_of(cli: DDlogCLI, state: Path) -> set[str]:
    r = cli("query", "--state", state, "Root")
    assert r.code == 0, r
    return parse_dump(r.out, "Root")


def test_change_files_are_read_as_named(cli, tmp_path):
    """Names with glob characters are each read once, as they are; a file dated a month
    back is applied like any other; a name read before, with other contents, stops the
    stream with a message; a misspelt weight column, in CSV or JSON, is an error naming it."""
    root, edge, state = tmp_path / "root", tmp_path / "edge", tmp_path / "state"
    root.mkdir()
    edge.mkdir()
    for name, node in [("e1.json", 1), ("e2.json", 2), ("e?.json", 3), ("[e]1.json", 4)]:
        (root / name).write_text(json.dumps({"node": node}) + "\n")
    r = stream(cli, state, root, edge)
    assert r.code == 0, r
    assert roots_of(cli, state) == {f"Root{{.node = {n}}}" for n in (1, 2, 3, 4)}

    old = tmp_path / "old.json"
    old.write_text('{"node": 30}\n')
    month = time.time() - 30 * 86400
    os.utime(old, (month, month))
    os.replace(old, root / "old.json")
    r = stream(cli, state, root, edge)
    assert r.code == 0 and "1 batch committed" in r.out, r
    assert "Root{.node = 30}" in roots_of(cli, state)

    before = tree_hash(state)
    (root / "e1.json").unlink()
    (tmp_path / "new.json").write_text('{"node": 77}\n')
    os.replace(tmp_path / "new.json", root / "e1.json")
    r = stream(cli, state, root, edge)
    stream_failure(r)
    assert "has the name of a file that batch 0 applied" in r.err and "e1.json" in r.err, r
    assert tree_hash(state) == before
    (root / "e1.json").unlink()

    for header, words in [("src,dst,wieght", "'wieght'"), ("src,dst,weight ", "'weight '"),
                          ("src,dst,weights", "'weights'"),
                          ("src,dst,weight,weight", "weight appears more than once")]:
        (edge / "bad.csv").write_text(f"{header}\n1,2,-1\n")
        r = stream(cli, state, root, edge)
        stream_failure(r)
        assert words in r.err and "bad.csv" in r.err, (header, r)
    (edge / "bad.csv").unlink()
    (root / "bad.json").write_text('{"node": 1, "Weight": -1}\n')
    r = stream(cli, state, root, edge)
    stream_failure(r)
    assert "'Weight'" in r.err and "did you mean weight?" in r.err, r
    (root / "bad.json").write_text('{"node": 1, "weight": "-1"}\n')
    r = stream(cli, state, root, edge)
    stream_failure(r)
    assert "bad.json:1: weight must be 1 (insert) or -1 (delete)" in r.err, r
    assert "damaged" not in r.err
    (root / "bad.json").write_text('{"node": 1, "weight": -1}\n')
    (root / "2024-01-01T10:00.json").write_text('{"node": 5}\n')
    r = stream(cli, state, root, edge)
    stream_failure(r)
    assert "2024-01-01T10:00.json: Spark cannot read a file whose name holds ':'" in r.err, r
    (root / "2024-01-01T10:00.json").unlink()
    r = stream(cli, state, root, edge)
    assert r.code == 0, r
    assert "Root{.node = 1}" not in roots_of(cli, state)
    assert tree_hash(state) != before


def test_text_that_is_not_utf8_and_csv_that_round_trips(cli, tmp_path):
    """Latin-1 text is an error at its line, not U+FFFD in silence; what `query --format
    csv` writes (empty strings, commas, quotes, line breaks) reads back as it was."""
    prog = tmp_path / "s.dl"
    prog.write_text("input relation S(a: string, b: Option<string>, n: bigint)\n"
                    "output relation O(a: string, b: Option<string>, n: bigint)\n"
                    "O(a, b, n) :- S(a, b, n).\n")
    (tmp_path / "rows.dat").write_text(
        'start;\ninsert S("", None, 1),\ninsert S("x,y", Some{""}, 2),\n'
        'insert S("line\\nbreak", Some{"q\\"uote"}, 3),\ninsert S(" sp ", Some{"ok"}, 4);\n'
        "commit;\n")
    r = cli("run", prog, "--state", tmp_path / "a", "--input", tmp_path / "rows.dat")
    assert r.code == 0, r
    r = cli("query", "--state", tmp_path / "a", "O", "--format", "csv")
    assert r.code == 0, r
    (tmp_path / "o.csv").write_text(r.out)
    r = cli("run", prog, "--state", tmp_path / "b", "--input", f"S=csv:{tmp_path / 'o.csv'}")
    assert r.code == 0, r
    a, b = (cli("query", "--state", tmp_path / s, "O") for s in ("a", "b"))
    assert a.code == b.code == 0 and a.out == b.out and a.out.count("\n") == 4, (a, b)
    changes = tmp_path / "changes"
    changes.mkdir()
    (changes / "latin1.csv").write_bytes("a,b,n\nok,,1\ncaf\xe9,,2\n".encode("latin-1"))
    r = cli("stream", prog, "--state", tmp_path / "c", "--source", f"S=csv:{changes}",
            "--trigger", "available-now")
    stream_failure(r)
    assert "latin1.csv:3: not UTF-8 text" in r.err, r


# ---------------------------------------------------------------------------------------------
# User input is not state damage; no input fills the memory


def test_user_input_is_named_as_such(cli, state, tmp_path):
    before = tree_hash(state)
    r = cli("run", REACH, "--state", tmp_path / "s1", "--input",
            f"Edge=csv:{tmp_path / 'nope.csv'}")
    clean_failure(r)
    assert "nope.csv" in r.err and "damaged" not in r.err, r
    r = cli("run", REACH, "--state", tmp_path / "s2", "--input", "Root=jsn:roots.json")
    clean_failure(r)
    assert "no format 'jsn'" in r.err, r
    r = cli("feed", "--state", state, "--insert", f"Edge({'9' * 5000}, 1)")
    clean_failure(r)
    assert "integer literal 99" in r.err and "too large" in r.err, r
    for args in (("check", "/dev/zero"), ("feed", "--state", state, "/dev/zero"),
                 ("shell", REACH, "--commands", "/dev/zero")):
        started = time.monotonic()
        r = cli(*args)
        clean_failure(r)
        assert "more than 64 MiB of text" in r.err, (args, r)
        assert time.monotonic() - started < 120
    assert tree_hash(state) == before


def test_sql_settings_never_reach_a_served_state(cli, tmp_path):
    """Through `serve`, a `SET` would change the session every later client uses (without
    ANSI mode, x * 2 overflows to a wrong value in silence): it is refused, and a query runs
    in a session of its own; then the overflow is still an error."""
    prog = tmp_path / "y.dl"
    prog.write_text("input relation X(x: bigint)\noutput relation Y(y: bigint)\n"
                    "Y(x * 2) :- X(x).\n")
    state = tmp_path / "state"
    (tmp_path / "x.csv").write_text("x\n1\n")
    r = cli("run", prog, "--state", state, "--input", f"X=csv:{tmp_path / 'x.csv'}")
    assert r.code == 0, r
    server = start_server(cli, state)
    try:
        r = cli("sql", "--state", state, "SET spark.sql.ansi.enabled=false")
        clean_failure(r)
        r = cli("feed", "--state", state, "--insert", "X(9223372036854775807)")
        clean_failure(r)
        assert "overflow" in r.err, r
        r = cli("query", "--state", state, "Y")
        assert r.code == 0 and r.out == "Y{.y = 2}\n", r
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=120)


def test_a_group_sigterm_lets_the_batch_finish(cli, tmp_path):
    """SIGTERM to the whole process group (systemd's stop, `timeout`): the stream finishes
    its batch and stops cleanly; its JVM is not killed under it."""
    root, edge, state = tmp_path / "root", tmp_path / "edge", tmp_path / "state"
    root.mkdir()
    edge.mkdir()
    (root / "a.json").write_text('{"node": 1}\n')
    p = cli.popen("stream", REACH, "--state", state, "--source", f"Root=json:{root}",
                  "--source", f"Edge=csv:{edge}", "--trigger", "1s")
    try:
        deadline = time.time() + 300
        while not (state / "manifest.json").exists():
            assert p.poll() is None, p.stderr.read()
            assert time.time() < deadline
            time.sleep(0.5)
        (tmp_path / "b.csv").write_text("src,dst\n1,2\n")
        os.replace(tmp_path / "b.csv", edge / "b.csv")
        time.sleep(1.5)  # likely inside the batch that applies it
        os.killpg(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            kill_group(p)
    assert p.returncode == 0, err
    assert "Connection refused" not in err and "Traceback" not in err, err
    r = cli("stream", REACH, "--state", state, "--source", f"Root=json:{root}", "--source",
            f"Edge=csv:{edge}", "--trigger", "available-now")
    assert r.code == 0, r
    assert manifest_epoch(state) == 2
    r = cli("query", "--state", state, "Reach")
    assert r.out.splitlines() == ["Reach{.node = 1}", "Reach{.node = 2}"], r
