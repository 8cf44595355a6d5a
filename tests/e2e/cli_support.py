"""Running `ddlog` as a subprocess in tests, the way a user does.

Every process gets Spark settings that keep it small (local[2], two shuffle partitions) and put
the warehouse and the Derby metastore under a temporary directory; the working directory is a
temporary directory too, so nothing lands in the repository.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "programs"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


class DDlogCLI:
    def __init__(self, spark_dir: Path, cwd: Path):
        self.spark_dir = spark_dir
        self.cwd = cwd

    def spark_args(self) -> list[str]:
        d = self.spark_dir
        return ["--master", "local[2]",
                "--conf", "spark.sql.shuffle.partitions=2",
                "--conf", "spark.default.parallelism=2",
                "--conf", "spark.driver.memory=1g",
                "--conf", f"spark.sql.warehouse.dir={d / 'warehouse'}",
                "--conf", f"spark.driver.extraJavaOptions=-Dderby.system.home={d / 'derby'}"]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        env.pop("SPARK_MASTER", None)
        env.update(extra or {})
        return env

    def command(self, args: tuple[str, ...]) -> list[str]:
        # `check` and `explain` never start Spark and take no Spark options
        spark = [] if args and args[0] in ("check", "explain") else self.spark_args()
        return [sys.executable, "-m", "ddlog", *map(str, args), *spark]

    def __call__(self, *args, input: str | None = None, env: dict[str, str] | None = None,
                 timeout: float = 400) -> Result:
        p = subprocess.run(self.command(args), input=input, capture_output=True, text=True,
                           cwd=self.cwd, env=self.env(env), timeout=timeout,
                           start_new_session=True)
        return Result(p.returncode, p.stdout, p.stderr)

    def popen(self, *args, env: dict[str, str] | None = None) -> subprocess.Popen:
        """A running `ddlog` in its own process group (so a kill takes its JVM too)."""
        return subprocess.Popen(self.command(args), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                cwd=self.cwd, env=self.env(env), start_new_session=True,
                                bufsize=1)


def kill_group(p: subprocess.Popen) -> None:
    """SIGKILL a process started by `popen` and everything it started."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait(timeout=60)


def state_snapshot(state: Path) -> tuple:
    """What must not change when a command fails: the manifest, the program, the batch files."""
    data = state / "data"
    return ((state / "manifest.json").read_bytes(), (state / "program.dl").read_bytes(),
            sorted(os.listdir(data)) if data.is_dir() else [])


def manifest_epoch(state: Path) -> int:
    import json

    return json.loads((state / "manifest.json").read_text())["epoch"]


def parse_dump(text: str, relation: str) -> set[str]:
    """The record lines of one relation in `dump;` / `dump R;` output."""
    return {line for line in text.splitlines() if line.startswith(relation + "{")}


def parse_changes(text: str) -> dict[str, set[tuple[str, int]]]:
    """`commit dump_changes;` / `ddlog feed` output -> relation -> {(record, weight)}."""
    out: dict[str, set[tuple[str, int]]] = {}
    current = None
    for line in text.splitlines():
        if line.endswith(":") and "{" not in line:
            current = out.setdefault(line[:-1], set())
        elif current is not None and line.rsplit(": ", 1)[-1] in ("+1", "-1"):
            record, w = line.rsplit(": ", 1)
            current.add((record, int(w)))
    return out


def oracle_records(program: Path, inputs: dict, relations: tuple[str, ...]
                   ) -> dict[str, set[str]]:
    """What `query R` must print for each relation (its record lines), by the oracle."""
    from ddlog.plan import load
    from ddlog.values import format_record
    from tests.oracle import evaluate

    checked = load(str(program)).program
    values = evaluate(checked, inputs)
    return {r: {format_record(r, checked.relations[r].columns, row) for row in values[r]}
            for r in relations}
