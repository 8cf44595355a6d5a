"""`ddlog check` end to end, as a user runs it (a subprocess, `python -m ddlog`)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted((ROOT / "programs").glob("*.dl"))

pytest.importorskip("ddlog.syntax.parser")
pytest.importorskip("ddlog.check.rules")


def ddlog(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "ddlog", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_there_are_example_programs_with_data():
    assert len(PROGRAMS) >= 8
    for p in PROGRAMS:
        assert p.with_suffix(".dat").is_file(), p
        assert p.read_text().startswith("//"), f"{p.name} should start with a comment"


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.stem)
def test_check_accepts_example(program: Path):
    r = ddlog("check", str(program))
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "relations:" and "strata:" in out
    strata = out[out.index("strata:") + 1:]
    assert strata and all(re.fullmatch(r"  \d+ +\S.*", line) for line in strata)
    assert [int(line.split()[0]) for line in strata] == list(range(len(strata)))
    relations = out[1:out.index("strata:")]
    assert all(re.fullmatch(r"  (input|output|internal) +\w+\(.*\)", line) for line in relations)
    # every relation appears in exactly one stratum
    names = sorted(re.match(r"  \w+ +(\w+)\(", line).group(1) for line in relations)
    in_strata = sorted(n for line in strata
                       for n in line.split(maxsplit=1)[1].split("  ")[0].split(", "))
    assert names == in_strata


def test_check_output_of_transitive_closure():
    r = ddlog("check", "programs/tc.dl")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("relations:\n"
                        "  input    Edge(src: bigint, dst: bigint)\n"
                        "  output   Path(src: bigint, dst: bigint)\n"
                        "strata:\n"
                        "  0  Edge\n"
                        "  1  Path  (recursive)\n")


def test_check_marks_mutual_recursion_as_one_stratum():
    r = ddlog("check", "programs/evenodd.dl")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^  \d+  Odd, Even  \(recursive\)$", r.stdout, re.M), r.stdout


# ---------------------------------------------------------------------------------------------
# errors

HEADER = "input relation Edge(src: bigint, dst: bigint)\noutput relation Path(src: bigint, dst: bigint)\n"


def located(stderr: str, file: Path, line: int) -> re.Match | None:
    """`file:line:col: error: ...`, then the source line, then a caret line."""
    return re.search(rf"^{re.escape(str(file))}:{line}:(\d+): error: .+\n  .*\n  *\^+", stderr,
                     re.M)


def check_bad(tmp_path: Path, text: str, line: int) -> str:
    path = tmp_path / "bad.dl"
    path.write_text(text)
    r = ddlog("check", str(path))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ""
    m = located(r.stderr, path, line)
    assert m, r.stderr
    # the caret sits under the reported column
    caret_line = r.stderr.splitlines()[2]
    assert caret_line.index("^") - 2 == int(m.group(1)) - 1
    return r.stderr


def test_syntax_error(tmp_path: Path):
    check_bad(tmp_path, HEADER + "Path(x, y) :- Edge(x, y).\nPath(x z) :- Edge(x, z).\n", 4)


def test_type_error(tmp_path: Path):
    text = HEADER + 'Path(x, y) :- Edge(x, y), y == "three".\n'
    check_bad(tmp_path, text, 3)


def test_unknown_relation(tmp_path: Path):
    check_bad(tmp_path, HEADER + "Path(x, y) :- Edge(x, y).\nPath(x, y) :- Egde(x, y).\n", 4)


def test_stratification_error(tmp_path: Path):
    text = HEADER + ("output relation Ok(src: bigint, dst: bigint)\n"
                     "Path(x, y) :- Edge(x, y).\n"
                     "Ok(x, y) :- Path(x, y).\n"
                     "Path(x, y) :- Edge(x, y), not Ok(x, y).\n")
    err = check_bad(tmp_path, text, 6)
    assert "relation 'Path' depends on itself through negation: Path -> Ok -> Path" in err
    assert ":6:1: error:" in err


def test_missing_file():
    r = ddlog("check", "programs/does_not_exist.dl")
    assert r.returncode == 2
    assert "does_not_exist.dl" in r.stderr and "Traceback" not in r.stderr


def test_usage_errors_exit_2():
    assert ddlog().returncode == 2
    assert ddlog("check").returncode == 2
    assert ddlog("no-such-command").returncode == 2


def test_main_returns_int(capsys):
    from ddlog.app.cli import main

    assert main(["check", str(ROOT / "programs" / "tc.dl")]) == 0
    assert "Path  (recursive)" in capsys.readouterr().out


def test_query_of_several_relations_is_text_only(capsys, tmp_path):
    """Several relations print one after another in DDlog's text format, whose records name
    their relation; a CSV header or JSON line would not, so those formats take one. The
    refusal comes before the state is opened (no Spark, nothing touched)."""
    from ddlog.app.cli import build_parser, main

    assert build_parser().parse_args(["query", "--state", "s", "A", "B"]).relations == ["A", "B"]
    for fmt in ("csv", "json"):
        code = main(["query", "--state", str(tmp_path / "none"), "A", "B", "--format", fmt])
        assert code == 1
        assert f"--format {fmt} prints one relation, not 2" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_short_commands_start_their_jvm_with_the_quick_compiler_only():
    from ddlog.app.cli import build_parser, spark_options
    from ddlog.runtime.spark import QUICK_JIT, java_options

    def short(*argv: str) -> bool:
        return spark_options(build_parser().parse_args(argv)).short_lived

    assert short("feed", "--state", "s", "--insert", "R(1)")
    assert short("query", "--state", "s", "R") and short("shell", "p.dl")
    assert not short("run", "p.dl", "--state", "s")
    assert not short("serve", "--state", "s") and not short("refresh", "--state", "s")
    # the driver's options and the executors' (a short command's executors live as long as it
    # does: on a cluster, they start with it)
    assert set(QUICK_JIT.split()) <= set(java_options("", "off", quick_jit=True).split())
    assert not set(QUICK_JIT.split()) & set(java_options("", "off").split())
    # the user's options come last, so that theirs win
    assert java_options("-XX:TieredStopAtLevel=4", "off", True).split()[-1] == \
        "-XX:TieredStopAtLevel=4"


def test_commands_that_read_small_files_start_their_jvm_with_the_quick_compiler(tmp_path):
    """`run`, `refresh` and `stream --trigger available-now` read their sources and exit: the
    quick compiler when the sources are files (or directories of files) small enough in all;
    the full one for a table (its size is unknown) or more bytes; a served command keeps the
    server's JVM as it is."""
    from ddlog.app import cli
    from ddlog.app.database import Database, SparkOptions
    from ddlog.plan import load as load_program
    from ddlog.runtime.io import parse_spec

    small, changes = tmp_path / "edges.csv", tmp_path / "changes"
    small.write_text("src,dst\n1,2\n")
    changes.mkdir()
    (changes / "f1.csv").write_text("src,dst,weight\n1,2,1\n")
    (changes / "f2.csv").write_text("src,dst,weight\n1,2,-1\n")
    in_dir = len("src,dst,weight\n1,2,1\n") + len("src,dst,weight\n1,2,-1\n")
    assert parse_spec(f"csv:{small}").file_bytes() == 12
    assert parse_spec(f"csv:{changes}").file_bytes() == in_dir
    assert parse_spec(f"csv:{tmp_path / 'not-yet'}").file_bytes() == 0
    assert parse_spec("table:edges").file_bytes() is None

    def quick(*texts: str, served: bool = False, limit: int | None = None) -> bool:
        knobs = {"quick_source_bytes": str(limit)} if limit is not None else {}
        db = Database(load_program("input relation E(a: u32, b: u32)"),
                      options=SparkOptions(short_lived=served, knobs=knobs))
        db.keep_open = served
        cli.quick_jit_for(db, [parse_spec(t) for t in texts])
        return db.options.short_lived

    assert quick(f"csv:{small}", f"json:{changes}")
    assert quick()  # nothing to read
    assert not quick(f"csv:{small}", "table:edges")
    assert quick("table:edges", served=True)  # the server's options are not the command's
    assert not quick(f"csv:{small}", f"csv:{changes}", limit=12 + in_dir - 1)
    assert quick(f"csv:{changes}", limit=12 + in_dir - 1)
