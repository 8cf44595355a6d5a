"""The state directory never loses a user's file and never answers wrong in silence (each case
as a user meets it, from the command line, in separate processes).

Every failing command must exit non-zero with one clear message and leave the directory
byte for byte as it was (`tree_hash`). The random-damage property test is in
test_state_damage.py.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.cli_support import PROGRAMS, DDlogCLI

REACH = PROGRAMS / "reach.dl"


def tree_hash(path: Path) -> str:
    """Every file under `path` (names and contents), so that any change shows."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            p = Path(root) / name
            h.update(str(p.relative_to(path)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def clean_failure(r) -> None:
    """Exit 1 or 2 with a short message: no Python traceback, no JVM stack trace."""
    assert r.code in (1, 2), r
    assert "error" in r.err and "Traceback" not in r.err, r
    assert "\tat org.apache" not in r.err and "Exception in task" not in r.err, r
    assert len(r.err.splitlines()) <= 4, r


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> DDlogCLI:
    return DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))


def reach_state(cli: DDlogCLI, d: Path) -> Path:
    """A reach state at epoch 1 in `d`, run from a CSV file of edges and a JSON file of
    roots written there."""
    (d / "edges.csv").write_text("src,dst\n1,2\n2,3\n3,1\n5,6\n")
    (d / "roots.json").write_text('{"node": 1}\n')
    state = d / "state"
    r = cli("run", REACH, "--state", state, f"--input=Edge=csv:{d / 'edges.csv'}",
            f"--input=Root=json:{d / 'roots.json'}")
    assert r.code == 0, r
    return state


@pytest.fixture(scope="module")
def base(cli, tmp_path_factory) -> Path:
    """A reach state at epoch 2; tests damage copies of it."""
    state = reach_state(cli, tmp_path_factory.mktemp("base"))
    r = cli("feed", "--state", state, "--insert", "Edge(3, 4)")
    assert r.code == 0, r
    return state


@pytest.fixture
def state(base, tmp_path) -> Path:
    copy = tmp_path / "state"
    shutil.copytree(base, copy)
    return copy


def batch_files(state: Path, trace: str) -> list[Path]:
    m = json.loads((state / "manifest.json").read_text())
    return [state / b["path"] / f for b in m["traces"][trace]["batches"]
            for f in sorted(b["files"]) if f.startswith("part-")]


# ---------------------------------------------------------------------------------------------
# Files that are not ours


def test_a_directory_of_other_files_is_refused_and_kept(cli, tmp_path):
    home = tmp_path / "home"
    (home / "data" / "raw").mkdir(parents=True)
    (home / "data" / "raw" / "notes.txt").write_text("the user's notes")
    before = tree_hash(home)
    r = cli("shell", REACH, "--state", home, input="start;\ninsert Edge(1, 2);\ncommit;\n")
    clean_failure(r)
    assert "not empty and holds no ddlog state" in r.err
    r = cli("run", REACH, "--state", home, "--input", "Root=jsn:roots")
    clean_failure(r)
    # a sink is rewritten whole after every commit: never over someone's directory
    r = cli("run", REACH, "--state", tmp_path / "fresh", "--output", f"Reach=csv:{home / 'data'}")
    clean_failure(r)
    assert "holds files that are not a sink's output" in r.err, r
    assert not (tmp_path / "fresh").exists()
    assert tree_hash(home) == before


def test_a_regular_file_is_not_a_state(cli, tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("mine")
    for args in (("run", REACH, "--state", f), ("feed", "--state", f, "--insert", "Edge(1, 2)"),
                 ("query", "--state", f, "Reach")):
        r = cli(*args)
        clean_failure(r)
        assert "is a file, not a state directory" in r.err, r
    assert f.read_text() == "mine"


def test_a_failed_run_leaves_no_directory_behind(cli, tmp_path):
    bad = tmp_path / "edges.csv"
    bad.write_text("a,b\n1,2\n")  # a header that does not name the columns
    fresh = tmp_path / "fresh"
    r = cli("run", REACH, "--state", fresh, f"--input=Edge=csv:{bad}")
    clean_failure(r)
    assert "no column src, dst" in r.err and "matched by column name" in r.err, r
    assert not fresh.exists()


def test_an_edited_manifest_is_refused_and_nothing_is_removed(cli, state):
    m = json.loads((state / "manifest.json").read_text())
    dropped = sorted(m["traces"])[0]
    del m["traces"][dropped]  # a manifest that lists fewer traces than exist
    (state / "manifest.json").write_text(json.dumps(m))
    before = tree_hash(state)
    for args in (("feed", "--state", state, "--insert", "Edge(8, 9)"),
                 ("query", "--state", state, "Reach")):
        r = cli(*args)
        clean_failure(r)
        assert "manifest.json is damaged" in r.err and "checksum" in r.err, r
    assert tree_hash(state) == before


# ---------------------------------------------------------------------------------------------
# Damaged data is reported, never read as an answer


def test_a_deleted_or_truncated_batch_is_reported(cli, state, tmp_path):
    part = batch_files(state, "out_Reach")[0]
    other = tmp_path / "other"
    shutil.copytree(state, other)
    shutil.rmtree(part.parent)
    before = tree_hash(state)
    r = cli("query", "--state", state, "Reach")
    clean_failure(r)
    assert "is damaged" in r.err and "cannot be read" in r.err and r.out == "", r
    assert tree_hash(state) == before
    cut = other / part.relative_to(state)
    cut.write_bytes(cut.read_bytes()[:-20])
    before = tree_hash(other)
    r = cli("query", "--state", other, "Reach")
    clean_failure(r)
    assert "changed size" in r.err and r.out == "", r
    assert tree_hash(other) == before


def test_a_changed_byte_is_caught_when_read(cli, state):
    part = batch_files(state, "out_Reach")[0]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the checksum sees it
    part.write_bytes(bytes(data))
    before = tree_hash(state)
    r = cli("query", "--state", state, "Reach")
    clean_failure(r)
    assert "damaged" in r.err and "checksum" in r.err and r.out == "", r
    assert tree_hash(state) == before
    # A feed reads only what its change touches: it may succeed, with the right answer (and
    # the damage is still found by the next read), or fail and leave the state alone.
    r = cli("feed", "--state", state, "--insert", "Root(5)")
    if r.code == 0:
        assert r.out == ("Reach:\nReach{.node = 5}: +1\nReach{.node = 6}: +1\nUnreachable:\n"
                         "Unreachable{.node = 5}: -1\nUnreachable{.node = 6}: -1\n"), r
        r = cli("query", "--state", state, "Reach")
        clean_failure(r)
        assert "checksum" in r.err, r
    else:
        clean_failure(r)
        assert "damaged" in r.err, r
        assert tree_hash(state) == before


def test_a_changed_byte_of_a_parquet_batch_is_caught_when_read(cli, tmp_path):
    """The test above damages a small batch, which is stored as JSON lines (checked against
    the checksum in its file's name); a batch of more rows than the driver keeps is Parquet,
    whose bytes Hadoop's checksum files guard."""
    edges = tmp_path / "edges.csv"
    edges.write_text("src,dst\n" + "".join(f"{k},{k + 1}\n" for k in range(2_100)))
    state = tmp_path / "state"
    r = cli("run", REACH, "--state", state, f"--input=Edge=csv:{edges}")
    assert r.code == 0, r
    part, = [f for f in batch_files(state, "rel_Edge") if f.suffix == ".parquet"]
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    before = tree_hash(state)
    r = cli("query", "--state", state, "Edge", "--limit", "1")
    clean_failure(r)
    assert "damaged" in r.err and "checksum" in r.err and r.out == "", r
    assert tree_hash(state) == before


@pytest.mark.parametrize("text", ["[]", "null", '{"traces": []}', "{", ""],
                         ids=["list", "null", "traces-list", "truncated", "empty"])
def test_a_malformed_manifest_is_reported(cli, state, text):
    (state / "manifest.json").write_text(text)
    before = tree_hash(state)
    for args in (("query", "--state", state, "Reach"),
                 ("feed", "--state", state, "--insert", "Edge(8, 9)"),
                 ("shell", REACH, "--state", state)):
        r = cli(*args, input="dump;\n")
        clean_failure(r)
        assert "manifest.json is damaged" in r.err, (args, r)
    assert tree_hash(state) == before


def test_a_bad_schema_string_is_reported(cli, state):
    from ddlog.runtime.state import StateDir

    st = StateDir(str(state))
    m = st.read_manifest()
    next(iter(m.traces.values())).schema = "not a schema"
    (state / "manifest.json").write_text(m.to_json())  # a valid checksum: written by a bug
    r = cli("query", "--state", state, "Edge")
    assert r.code in (0, 1), r
    r = cli("feed", "--state", state, "--insert", "Edge(8, 9)")
    clean_failure(r)
    assert "is not a Spark schema" in r.err, r


# ---------------------------------------------------------------------------------------------
# Evaluation errors: one message, the state unchanged


SHIFTS = """input relation R(x: bit<32>, d: bigint)
input relation L(s: string)
output relation Shl(x: bigint)
output relation Div(x: bigint)
output relation Len(n: bigint)
Shl(13 << x) :- R(x, _).
Div(10 / d) :- R(_, d).
Len((s.len() - 1) as bigint) :- L(s).
"""


def test_overflow_and_division_by_zero(cli, tmp_path):
    prog = tmp_path / "shifts.dl"
    prog.write_text(SHIFTS)
    state = tmp_path / "st"
    r = cli("shell", prog, "--state", state,
            input="start;\ninsert R(1, 2);\ninsert L(\"a\");\ncommit;\n")
    assert r.code == 0, r
    before = tree_hash(state)
    # usize wraps (0 - 1 is 2^64 - 1), which a bigint (a 64-bit Long here) cannot hold
    for record, why in [("R(64, 1)", "integer overflow"), ("R(2, 0)", "division by zero"),
                        ('L("")', "does not fit in bigint")]:
        r = cli("feed", "--state", state, "--insert", record)
        clean_failure(r)
        assert why in r.err and "rolled back" in r.err, r
        assert tree_hash(state) == before
    r = cli("query", "--state", state, "Shl", "Len")
    assert r.code == 0 and r.out == "Shl{.x = 26}\nLen{.n = 0}\n", r
    r = cli("check", prog)
    assert r.code == 0, r
    prog.write_text(SHIFTS.replace("13 << x", "13 << -1"))
    r = cli("check", prog)
    clean_failure(r)
    assert "shifts.dl:6:11: error: literal -1 out of range for bit<32>" in r.err, r


MAIN = """import lib::reach as r
input relation Root(n: bigint)
output relation Seen(n: bigint)
Seen(n) :- Root(n).
Seen(m) :- Seen(n), r::Edge(n, m).
"""
MODULE = """input relation E(a: bigint, b: bigint)
relation Edge(a: bigint, b: bigint)
Edge(a, b) :- E(a, b).
"""


def test_an_edited_module_is_another_program(cli, tmp_path):
    """A module is read from beside the program, outside the state: editing it must not
    go unnoticed by the commands that reopen the state."""
    (tmp_path / "lib").mkdir()
    module = tmp_path / "lib" / "reach.dl"
    module.write_text(MODULE)
    prog = tmp_path / "main.dl"
    prog.write_text(MAIN)
    state = tmp_path / "st"
    r = cli("shell", prog, "--state", state,
            input="start;\ninsert Root(1);\ninsert lib::reach::E(1, 2);\ncommit;\n")
    assert r.code == 0, r
    m = json.loads((state / "manifest.json").read_text())
    assert list(m["modules"]) == [os.path.join("lib", "reach.dl")], m
    module.write_text(MODULE.replace("Edge(a, b) :-", "Edge(b, a) :-"))  # still compiles
    before = tree_hash(state)
    for args in [("feed", "--state", state, "--insert", "Root(2)"),
                 ("shell", prog, "--state", state)]:
        r = cli(*args, input="dump;\n")
        clean_failure(r)
        assert "module" in r.err and "lib/reach.dl" in r.err, r
        assert tree_hash(state) == before
    module.write_text(MODULE)
    r = cli("query", "--state", state, "Seen")
    assert r.code == 0 and r.out == "Seen{.n = 1}\nSeen{.n = 2}\n", r


# ---------------------------------------------------------------------------------------------
# Commands that must take exactly what they say


def test_insert_takes_exactly_one_record(cli, state):
    before = tree_hash(state)
    r = cli("feed", "--state", state, "--insert", "Edge(9, 9); clear Edge; clear Root")
    clean_failure(r)
    assert "exactly one record" in r.err or "error" in r.err, r
    r = cli("feed", "--state", state, "--epoch", "-1", "--insert", "Edge(9, 9)")
    clean_failure(r)
    assert "epochs are numbered from 1" in r.err, r
    r = cli("feed", "--state", state, "--insert", "edge(9, 9)")
    clean_failure(r)
    assert "start with an upper-case letter" in r.err, r
    assert tree_hash(state) == before


def test_deep_input_through_every_command(cli, state, tmp_path):
    deep = tmp_path / "deep.dl"
    deep.write_text(REACH.read_text() + "Node(x) :- Edge(x, _), " + " + ".join(["x"] * 400)
                    + " > 1.\n")
    r = cli("check", deep)
    clean_failure(r)
    line = REACH.read_text().count("\n") + 1
    assert f"{deep}:{line}:" in r.err and "nested too deeply" in r.err, r
    before = tree_hash(state)
    r = cli("feed", "--state", state, "--insert", "Edge(" + "(" * 500 + "1" + ")" * 500 + ", 2)")
    clean_failure(r)
    assert "--insert:1:" in r.err and "nested too deeply" in r.err, r
    r = cli("shell", REACH, "--state", state,
            input="start;\ninsert Edge(" + "(" * 500 + "1" + ")" * 500 + ", 2);\ncommit;\n")
    clean_failure(r)
    assert "<stdin>:2:" in r.err and "nested too deeply" in r.err, r
    assert tree_hash(state) == before


def test_bad_files_are_named(cli, tmp_path):
    bom = tmp_path / "bom.dl"
    bom.write_bytes(b"\xef\xbb\xbf" + REACH.read_bytes())
    r = cli("check", bom)
    assert r.code == 0, r
    bad = tmp_path / "bad.dat"
    bad.write_bytes(b"start;\ninsert Edge(1, 2);\n# \xff\ncommit;\n")
    r = cli("shell", REACH, "--commands", bad)
    clean_failure(r)
    assert f"{bad}:3:3: error: the file is not UTF-8 text" in r.err, r
    long = tmp_path / "long.dl"
    long.write_text("input relation R(x: bigint)\nR(1) :- " + "x" * 1_000_000 + "?\n")
    r = cli("check", long)
    clean_failure(r)
    assert len(r.err) < 600, len(r.err)
