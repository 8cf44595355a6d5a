"""Unit tests of the pieces behind the state commands, in-process and without Spark: the state
directory (manifest, locks, journal, garbage), transactions, output formats, SOURCE/SINK specs.
Reading typed sources needs Spark: tests/e2e/test_sources.py."""
from __future__ import annotations

import json
import os

import pytest

from ddlog.app.transaction import CLEAR, Transaction
from ddlog.types import Update
from ddlog.plan import load_text
from ddlog.values.render import change_json_lines, change_lines, csv_text, relation_text, table_text
from ddlog.app.shell import SourceWindow
from ddlog.values import Record
from ddlog.runtime.io import BindingError, parse_binding, parse_spec
from ddlog.runtime.state import (BatchEntry, Manifest, StateDir, StateError, TraceEntry,
                           program_hash)
from tests.support import resealed

PROGRAM = """
typedef Kind = Small | Big{size: bigint}
input relation T(name: string, ok: bool, n: bigint, x: double, b: bit<8>, o: Option<bigint>)
input relation V(k: Kind, v: Vec<string>, t: (bigint, bool))
output relation U(name: string)
U(n) :- T(n, _, _, _, _, _).
"""


@pytest.fixture(scope="module")
def relations():
    return load_text(PROGRAM).program.relations


# ---------------------------------------------------------------------------------------------
# State directory


def test_manifest_round_trip_and_atomic_replace(tmp_path):
    st = StateDir(str(tmp_path / "s"))
    assert not st.exists()
    with pytest.raises(StateError, match="no state in"):
        st.read_manifest()
    st.claim()
    m = Manifest(program_hash("p"), "/x/p.dl", 3,
                 {"rel_T": TraceEntry("{}", [0, 2], [BatchEntry("data/e000001-0123456789ab",
                                                                0, 2, 5, {"part-0": 10})])},
                 {"T": "csv:/a.csv"}, {"U": "parquet:/out"})
    st.write_manifest(m)
    back = st.read_manifest()
    assert back == m and back.committed_at > 0
    assert [f for f in os.listdir(st.path) if ".tmp-" in f] == []  # the temp file was renamed
    (tmp_path / "s" / "manifest.json").write_text("{not json")
    with pytest.raises(StateError, match="manifest.json is damaged"):
        st.read_manifest()


@pytest.mark.parametrize("edit,why", [
    (lambda d: d.update(epoch=d["epoch"] + 1), "checksum does not match"),
    (lambda d: d["traces"].clear(), "checksum does not match"),
    (lambda d: d.update(format=1), "unknown state format 1"),
], ids=["epoch", "traces", "format"])
def test_an_edited_manifest_is_refused(tmp_path, edit, why):
    st = StateDir(str(tmp_path))
    st.claim()
    st.write_manifest(Manifest(program_hash("p"), "/x/p.dl", 3, {"rel_T": TraceEntry(
        "{}", [0], [BatchEntry("data/e000001-0123456789ab", 0, 0, 5, {"part-0": 10})])}))
    d = json.loads((tmp_path / "manifest.json").read_text())
    edit(d)
    (tmp_path / "manifest.json").write_text(json.dumps(d))
    with pytest.raises(StateError, match=why):
        st.read_manifest()


def test_a_format_2_state_is_read_and_written_back_as_format_3(tmp_path):
    """Format 2 stored every batch as Parquet, which format 3 reads the same way."""
    from ddlog.runtime.state.manifest import FORMAT, _checksum

    st = StateDir(str(tmp_path))
    st.claim()
    m = Manifest(program_hash("p"), "/x/p.dl", 3, {"rel_T": TraceEntry(
        "{}", [0], [BatchEntry("data/e000001-0123456789ab", 0, 0, 5, {"part-0": 10})])})
    body = {**m.body(), "format": 2}
    (tmp_path / "manifest.json").write_text(json.dumps({**body, "checksum": _checksum(body)}))
    back = st.read_manifest()
    assert back.traces == m.traces and back.epoch == 3
    st.write_manifest(back)
    assert json.loads((tmp_path / "manifest.json").read_text())["format"] == FORMAT == 3


@pytest.mark.parametrize("text,why", [
    ("[]", "not a JSON object"), ("null", "not a JSON object"), ("", "Expecting value"),
    ('{"format": 2, "traces": []}', "checksum"),
])
def test_a_malformed_manifest_is_refused(tmp_path, text, why):
    st = StateDir(str(tmp_path))
    (tmp_path / "manifest.json").write_text(text)
    with pytest.raises(StateError, match=why):
        st.read_manifest()


def test_program_check(tmp_path):
    st = StateDir(str(tmp_path))
    st.claim()
    m = Manifest(program_hash("prog A"), "/p/a.dl", 1, modules={"lib/m.dl": program_hash("m")})
    st.check_program(m, "prog A", "a.dl", {"lib/m.dl": program_hash("m")})
    with pytest.raises(StateError, match="belongs to a different program"):
        st.check_program(m, "prog B", "b.dl", {"lib/m.dl": program_hash("m")})
    for modules in [{"lib/m.dl": program_hash("m2")}, {}, {"lib/m.dl": program_hash("m"),
                                                           "lib/n.dl": program_hash("n")}]:
        with pytest.raises(StateError, match="other contents of the module"):
            st.check_program(m, "prog A", "a.dl", modules)
    assert Manifest.from_json(m.to_json()).modules == m.modules
    st.write_program("prog A")
    assert st.read_program(m) == "prog A"
    st.write_program("prog A, edited by hand")
    with pytest.raises(StateError, match="does not match the hash"):
        st.read_program(m)


def test_the_fallbacks_measurements_are_kept_and_checked(tmp_path):
    """Manifest.costs: each stratum's last evaluation from scratch, last give-up and paces
    read back as written; a state written before they were kept has none; a malformed one is
    refused, naming the field."""
    costs = {"2": {"scratch": {"seconds": 1.5, "rows": 10, "iterations": 3, "cold": True,
                               "deltas": [4, 9, 2]},
                   "gave_up": {"ratio": 0.25, "left": 7},
                   "paces": {"seen": [[3, 0, 0.5], [40, 3, 1.25]],
                             "misses": {"depth": [0.5, 2.0], "guess": [1.0]}}}}
    m = Manifest(program_hash("p"), "/x/p.dl", 3, costs=costs)
    assert Manifest.from_json(m.to_json()).costs == costs
    # paces kept before their rules' misses were have none
    older = {"2": {"paces": {"seen": [[3, 0, 0.5]]}}}
    read = Manifest.from_json(resealed(m, costs=older)).costs["2"]["paces"]
    assert read == {"seen": [[3, 0, 0.5]], "misses": {}}
    # a scratch measured before `cold` was kept counts as warm (as it was used then), one
    # before its `deltas` were kept has none (its incremental runs' paces cannot tell ahead)
    older = {"2": {"scratch": {"seconds": 1.5, "rows": 10, "iterations": 3}}}
    read = Manifest.from_json(resealed(m, costs=older)).costs["2"]["scratch"]
    assert read["cold"] is False and read["deltas"] == []
    assert "costs" not in json.loads(resealed(m, drop=("costs",)))
    assert Manifest.from_json(resealed(m, drop=("costs",))).costs == {}
    for bad, message in [
        ({"x": {}}, "costs.x: not a stratum number"),
        ({"2": []}, "costs.2: not a JSON object"),
        ({"2": {"scratch": {"seconds": "1", "rows": 1, "iterations": 1}}},
         "costs.2.scratch.seconds: not a non-negative number"),
        ({"2": {"scratch": {"seconds": 1, "rows": 1}}}, "costs.2.scratch.iterations: missing"),
        ({"2": {"gave_up": {"ratio": -1, "left": 1}}},
         "costs.2.gave_up.ratio: not a non-negative number"),
        ({"2": {"gave_up": {"ratio": 1, "left": 1, "when": 0}}},
         "costs.2.gave_up: unknown fields when"),
        ({"2": {"budget": {}}}, "costs.2.budget: not a measurement"),
        ({"2": {"scratch": {"seconds": 1, "rows": 1, "iterations": 1, "cold": 1}}},
         "costs.2.scratch.cold: not true or false"),
        ({"2": {"scratch": {"seconds": 1, "rows": 1, "iterations": 1, "deltas": 3}}},
         "costs.2.scratch.deltas: not a list"),
        ({"2": {"scratch": {"seconds": 1, "rows": 1, "iterations": 1, "deltas": [1, -2]}}},
         r"costs.2.scratch.deltas\[1\]: not a non-negative integer"),
        ({"2": {"paces": {}}}, "costs.2.paces.seen: missing"),
        ({"2": {"paces": {"seen": [[1, 2]]}}},
         r"costs.2.paces.seen\[0\]: not \[rows, rows before, seconds\]"),
        ({"2": {"paces": {"seen": [[1, 2, 0.5], [1, -2, 0.5]]}}},
         r"costs.2.paces.seen\[1\].before: not a non-negative integer"),
        ({"2": {"paces": {"seen": [[1, 2, "fast"]]}}},
         r"costs.2.paces.seen\[0\].seconds: not a non-negative number"),
        ({"2": {"paces": {"seen": [], "misses": {"last": [1.0]}}}},
         "costs.2.paces.misses.last: not a rule of the fallback"),
        ({"2": {"paces": {"seen": [], "misses": {"guess": 1.0}}}},
         "costs.2.paces.misses.guess: not a list"),
        ({"2": {"paces": {"seen": [], "misses": {"depth": [0.5, -1]}}}},
         r"costs.2.paces.misses.depth\[1\]: not a non-negative number"),
    ]:
        with pytest.raises(ValueError, match=message):
            Manifest.from_json(resealed(m, costs=bad))


def test_one_writer_and_readers_block_garbage_collection(tmp_path):
    a, b = StateDir(str(tmp_path)), StateDir(str(tmp_path))
    a.lock_writer()
    with pytest.raises(StateError, match="in use by another ddlog process"):
        b.lock_writer()
    live, garbage = a.new_batch_path(1), a.new_batch_path(2)  # recorded in the journal
    for rel in (live, garbage, "data/e000003-aaaaaaaaaaaa", "data/raw"):
        os.makedirs(tmp_path / rel)
    (tmp_path / "data" / "raw" / "notes.txt").write_text("the user's")
    (tmp_path / ".manifest.json.tmp-99").write_text("left by a crash")
    m = Manifest("h", "f", 1, {"t": TraceEntry("{}", [0], [BatchEntry(live, 0, 0, 1)])})
    reader = StateDir(str(tmp_path))
    a.write_manifest(m)
    reader.lock_reader()
    assert a.collect_garbage(m) == 0  # a reader may still need old files: nothing removed
    assert os.path.isdir(tmp_path / garbage)
    reader.release()
    assert a.collect_garbage(m) == 1
    # only what the journal recorded goes; what this state did not write stays
    assert sorted(os.listdir(tmp_path / "data")) == sorted(
        [os.path.basename(live), "e000003-aaaaaaaaaaaa", "raw"])
    assert (tmp_path / "data" / "raw" / "notes.txt").read_text() == "the user's"
    assert a.journal() == [live]
    assert not (tmp_path / ".manifest.json.tmp-99").exists()
    a.release()
    b.lock_writer()  # the lock is free again
    b.release()


def test_a_directory_of_other_files_is_never_a_state(tmp_path):
    (tmp_path / "data" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "raw" / "notes.txt").write_text("keep me")
    st = StateDir(str(tmp_path))
    with pytest.raises(StateError, match="not empty and holds no ddlog state"):
        st.lock_writer()
    assert sorted(os.listdir(tmp_path)) == ["data"]
    file = tmp_path / "data" / "raw" / "notes.txt"
    for make in (StateDir(str(file)).lock_writer, StateDir(str(file)).read_manifest,
                 StateDir(str(file)).lock_reader):
        with pytest.raises(StateError, match="is a file, not a state directory"):
            make()
    fresh = StateDir(str(tmp_path / "new"))
    fresh.lock_writer()  # a new directory becomes a state; abandoned, it goes away again
    assert fresh.is_state() and not fresh.exists()
    fresh.release()
    fresh.abandon()
    assert not (tmp_path / "new").exists()


# ---------------------------------------------------------------------------------------------
# Transactions and the shell's source window


def test_transaction_folds_updates_in_order():
    t = Transaction()
    assert not t
    t.insert("T", (1,))
    t.insert("T", (2,))
    t.delete("T", (1,))  # the last update of a row decides
    assert t.steps["T"] == [{(1,): -1, (2,): 1}]
    t.clear("T")  # what came before is moot
    t.insert("T", (3,))
    assert t.steps["T"] == [CLEAR, {(3,): 1}]
    t.add_frame("T", -1, "df")
    t.insert("T", (4,))
    assert t.steps["T"][2:] == [Update(-1, "df"), {(4,): 1}]


def test_source_window_keeps_recent_lines():
    w = SourceWindow(keep=2)
    w.add("a\nb\n")
    w.add("c\npar")
    w.add("tial")
    assert w.text().split("\n") == ["", "b", "c", "partial"]


# ---------------------------------------------------------------------------------------------
# Output formats


def test_text_json_csv_formats(relations):
    t, v = relations["T"], relations["V"]
    row = ("a \"q\"", True, -3, 0.5, 255, None)
    assert relation_text(t, [row], "text") == \
        'T{.name = "a \\"q\\"", .ok = true, .n = -3, .x = 0.5, .b = 255, .o = ddlog_std::None{}}\n'
    assert json.loads(relation_text(t, [row], "json")) == \
        {"name": 'a "q"', "ok": True, "n": -3, "x": 0.5, "b": 255, "o": None}
    assert csv_text(t, [row, ("b,c", False, 1, 2.0, 0, 7)]).splitlines() == \
        ["name,ok,n,x,b,o", '"a ""q""",true,-3,0.5,255,', '"b,c",false,1,2.0,0,7']
    vrow = (Record("Big", (5,)), ("x", "y"), (1, False))
    assert json.loads(relation_text(v, [vrow], "json")) == \
        {"k": {"_tag": "Big", "size": 5}, "v": ["x", "y"], "t": [1, False]}
    assert relation_text(v, [vrow], "text") == \
        'V{.k = Big{.size = 5}, .v = ["x", "y"], .t = (1, false)}\n'
    assert csv_text(v, [vrow]).splitlines()[1] == 'Big{.size = 5},"[""x"", ""y""]","(1, false)"'


def test_change_formats(relations):
    changes = {"U": [(("a",), 1), (("b",), -1)]}
    assert change_lines(relations, changes) == \
        ["U:", 'U{.name = "a"}: +1', 'U{.name = "b"}: -1']
    assert [json.loads(x) for x in change_json_lines(relations, changes)] == \
        [{"relation": "U", "weight": 1, "record": {"name": "a"}},
         {"relation": "U", "weight": -1, "record": {"name": "b"}}]


def test_sql_table_format():
    rows = [("a", 1, None), ("bb", 22, True)]
    assert table_text(["s", "n", "f"], rows, "text").splitlines() == \
        ["s   n   f", "--  --  ----", "a   1   NULL", "bb  22  true", "(2 rows)"]
    assert table_text(["s", "n", "f"], rows, "csv").splitlines() == \
        ["s,n,f", "a,1,", "bb,22,true"]


# ---------------------------------------------------------------------------------------------
# SOURCE / SINK specs


def test_specs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert parse_spec("table:db.t") == parse_spec("table:db.t", sink=True)
    assert parse_spec("table:db.t").target == "db.t"
    assert parse_spec("csv:in/e.csv").target == str(tmp_path / "in" / "e.csv")
    assert parse_spec("data/e.parquet").kind == "parquet"  # kind from the extension
    assert parse_spec("facts.dat").kind == "dat"
    with pytest.raises(BindingError, match="bad SINK 'dat:x.dat'"):
        parse_spec("dat:x.dat", sink=True)
    with pytest.raises(BindingError, match="nothing after 'csv:'"):
        parse_spec("csv:")
    assert parse_binding("Edge=json:e.json") == ("Edge", parse_spec("json:e.json"))
    assert parse_binding("facts.dat") == (None, parse_spec("facts.dat"))
    with pytest.raises(BindingError, match="expected RELATION=SINK"):
        parse_binding("out.csv", sink=True)


def test_a_sink_never_overwrites_other_files(tmp_path):
    from ddlog.runtime.io import check_sink_path

    check_sink_path(parse_spec(f"csv:{tmp_path / 'new'}"))  # a new path is fine
    out = tmp_path / "out"
    out.mkdir()
    for name in ("part-00000-x.csv", ".part-00000-x.csv.crc", "_SUCCESS", "._SUCCESS.crc"):
        (out / name).write_text("")
    check_sink_path(parse_spec(f"csv:{out}"))  # an earlier output: rewritten
    (out / "notes.txt").write_text("the user's")
    with pytest.raises(BindingError, match="holds files that are not a sink's output"):
        check_sink_path(parse_spec(f"parquet:{out}"))
    with pytest.raises(BindingError, match="the path is a file"):
        check_sink_path(parse_spec(f"json:{out / 'notes.txt'}"))
