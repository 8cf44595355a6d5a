"""The distribution as a user installs it: the wheel is built from the checkout, its file list
checked (one top-level import package, `ddlog`, with its data and `py.typed`), and it is
installed (not editable) into a fresh venv, from which, in a directory outside the checkout,
`ddlog --help`, `ddlog check`, `ddlog run` on an example and `ddlog demo` work."""
from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.e2e.cli_support import ROOT


def run(cmd: list[str], cwd: Path, timeout: float = 900, env: dict | None = None
        ) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=env)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))}: exit {p.returncode}\n" \
                              f"--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # a copy of the checkout's tracked files, so that the build writes nothing into it
    src = tmp_path_factory.mktemp("src")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            target.write_bytes((ROOT / name).read_bytes())
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out),
         str(src)], cwd=out)
    (found,) = out.glob("ddlog_spark-*.whl")
    return found


def test_the_wheel_holds_one_import_package_with_its_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ddlog"}, sorted(tops)
    for needed in ("ddlog/py.typed", "ddlog/grammar/ddlog.lark", "ddlog/grammar/commands.lark",
                   "ddlog/runtime/log4j2.properties", "ddlog/programs/reach.dl",
                   "ddlog/programs/reach.dat", "ddlog/runtime/engine.py",
                   "ddlog/strata/stratify.py", "ddlog/app/cli.py"):
        assert needed in names, needed
    assert not [n for n in names if "tests/" in n or n.startswith("bench/")]


@pytest.mark.slow
def test_installed_in_a_fresh_venv_it_runs_from_anywhere(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], cwd=tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_MASTER")}
    ddlog = str(env_dir / "bin" / "ddlog")

    assert "usage: ddlog" in run([ddlog, "--help"], work, env=env).stdout
    # nothing but ddlog is importable from the install (no top-level runtime, strata, ...)
    probe = run([str(py), "-c", "import importlib.util as u; print([m for m in ('runtime', "
                 "'strata', 'grammar', 'programs') if u.find_spec(m)]); "
                 "import ddlog.api, ddlog.runtime.engine; print(ddlog.api.Program.load.__doc__)"],
                work, env=env).stdout
    assert probe.startswith("[]") and "program" in probe
    example = run([str(py), "-c", "from ddlog.app.demo import examples; print(examples())"],
                  work, env=env).stdout.strip()
    assert str(ROOT) not in example
    assert "Reach" in run([ddlog, "check", f"{example}/reach.dl"], work, env=env).stdout

    (work / "edges.csv").write_text("src,dst\n1,2\n2,3\n3,1\n5,6\n")
    (work / "roots.json").write_text('{"node": 1}\n')
    spark = ["--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2"]
    out = run([ddlog, "run", f"{example}/reach.dl", "--state", "st", "--input",
               "Edge=csv:edges.csv", "--input", "Root=json:roots.json", *spark],
              work, env=env).stdout
    assert "Reach: 3 rows" in out and "Unreachable: 2 rows" in out, out
    out = run([ddlog, "query", "--state", "st", "Unreachable", *spark], work, env=env).stdout
    assert out.splitlines() == ["Unreachable{.node = 5}", "Unreachable{.node = 6}"]

    demo = run([ddlog, "demo"], work, env=env).stdout
    assert "== programs/reach.dl on Spark" in demo and "Reach{.node = 7}: +1" in demo
