"""Property: whatever one file of a state suffers (deleted, cut short, a byte changed, the
manifest edited), every command either answers exactly what the oracle says or fails with one
clear message and leaves the directory as it was; never a traceback, never a wrong answer.

The commands run in this process (`ddlog.app.cli.main` on the session's SparkSession), so that a
few dozen damaged states cost seconds each rather than a JVM start each.
"""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from ddlog.app.cli import main
from ddlog.plan import load
from ddlog.values import format_record
from tests.support import seed_for
from tests.oracle import apply_updates, evaluate
from tests.e2e.test_state_safety import tree_hash

ROOT = Path(__file__).resolve().parents[2]
REACH = ROOT / "programs" / "reach.dl"
EDGES = {(1, 2), (2, 3), (3, 1), (5, 6), (3, 4)}
ROOTS = {(1,)}
CASES = 14


def run(capsys, *args) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:  # argparse
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def records(inputs) -> dict[str, list[str]]:
    program = load(str(REACH)).program
    values = evaluate(program, inputs)
    return {r.name: [format_record(r.name, r.columns, row) for row in sorted(values[r.name])]
            for r in program.outputs()}


def damage(rng: random.Random, state: Path) -> str:
    """Damage one file of `state` at random; returns what was done."""
    files = sorted(p for p in state.rglob("*") if p.is_file())
    target = rng.choice(files)
    rel = target.relative_to(state)
    kind = rng.choice(["delete", "truncate", "corrupt", "manifest"])
    if kind == "manifest":
        target = state / "manifest.json"
        m = json.loads(target.read_text())
        trace = rng.choice(sorted(m["traces"]))
        edit = rng.randrange(3)
        if edit == 0:
            m["epoch"] += 1
        elif edit == 1:
            del m["traces"][trace]
        else:
            m["traces"][trace]["batches"][0]["rows"] += 1
        target.write_text(json.dumps(m))
        return f"manifest: edit {edit} of {trace}"
    data = target.read_bytes()
    if kind == "delete":
        target.unlink()
    elif kind == "truncate":
        target.write_bytes(data[:rng.randrange(len(data))] if data else b"")
    else:
        if not data:
            target.write_bytes(b"\0")
        else:
            b = bytearray(data)
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            target.write_bytes(bytes(b))
    return f"{kind} {rel}"


def clear_message(code: int, err: str) -> bool:
    lines = err.strip().splitlines()
    return code in (1, 2) and bool(lines) and "error" in lines[0] and len(lines) <= 4


@pytest.fixture(scope="module")
def base(spark, tmp_path_factory):
    d = tmp_path_factory.mktemp("damage")
    (d / "edges.csv").write_text("src,dst\n" + "".join(f"{a},{b}\n" for a, b in
                                                      sorted(EDGES - {(3, 4)})))
    (d / "roots.json").write_text('{"node": 1}\n')
    state = d / "state"
    assert main(["run", str(REACH), "--state", str(state), f"--input=Edge=csv:{d / 'edges.csv'}",
                 f"--input=Root=json:{d / 'roots.json'}"]) == 0
    assert main(["feed", "--state", str(state), "--insert", "Edge(3, 4)"]) == 0
    return state


def test_random_damage_never_answers_wrong(base, tmp_path, capsys):
    rng = random.Random(seed_for("state/damage"))
    inputs = {"Edge": EDGES, "Root": ROOTS}
    expected = records(inputs)
    after_feed = records(apply_updates(inputs, [("insert", "Edge", (4, 7))]))
    outcomes = []
    for case in range(CASES):
        state = tmp_path / f"c{case}"
        shutil.copytree(base, state)
        what = damage(rng, state)
        where = f"case {case} ({what})"
        before = tree_hash(state)
        for rel in sorted(expected):
            code, out, err = run(capsys, "query", "--state", state, rel)
            if code == 0:
                assert out.splitlines() == expected[rel], (where, rel, out)
            else:
                assert clear_message(code, err), (where, rel, code, err)
                assert tree_hash(state) == before, where
        code, out, err = run(capsys, "feed", "--state", state, "--insert", "Edge(4, 7)")
        if code != 0:
            assert clear_message(code, err), (where, "feed", code, err)
            assert tree_hash(state) == before, where
            outcomes.append("refused")
            continue
        outcomes.append("answered")
        for rel in sorted(after_feed):
            code, out, err = run(capsys, "query", "--state", state, rel)
            if code == 0:
                assert out.splitlines() == after_feed[rel], (where, rel, out)
            else:
                assert clear_message(code, err), (where, rel, code, err)
    # the damage was real: most cases must have been refused, some survived harmlessly
    assert "refused" in outcomes, outcomes
