"""Where the e2e tier's time goes: every `ddlog` process its tests start, timed, by command.

    python bench/e2e_commands.py                      # tests/e2e on two workers
    python bench/e2e_commands.py -n 0 tests/e2e/test_stream.py --slowest 5

runs pytest over the given tests (default: tests/e2e with `-n auto --dist loadfile`, as `make
test` runs them) with this module as a plugin, which wraps the tests' `DDlogCLI.__call__` and
appends one JSON line per command (its subcommand, seconds, exit code and test) to a log; then
prints the commands' seconds by subcommand and the slowest commands. A command sent to a
`ddlog serve` is timed as its client waited, queueing behind the server's other requests
included. Processes started with `popen` (servers, streams killed on purpose) or by a test's
own `subprocess` call (test_shell's terminal, test_cluster's script) are not counted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = "DDLOG_BENCH_COMMAND_LOG"


def pytest_configure(config) -> None:
    """The plugin's side: time every command the e2e tests run, when the runner set the log."""
    path = os.environ.get(LOG)
    if not path:
        return
    from tests.e2e import cli_support

    run = cli_support.DDlogCLI.__call__

    def timed(self, *args, **kw):
        started = time.perf_counter()
        result = run(self, *args, **kw)
        line = {"command": str(args[0]) if args else "", "seconds": time.perf_counter() - started,
                "code": result.code, "test": os.environ.get("PYTEST_CURRENT_TEST", "")}
        with open(path, "a") as f:  # one short append per line: the workers do not interleave
            f.write(json.dumps(line) + "\n")
        return result

    cli_support.DDlogCLI.__call__ = timed


def report(lines: list[dict], slowest: int) -> None:
    by_command: dict[str, list[float]] = defaultdict(list)
    for line in lines:
        by_command[line["command"]].append(line["seconds"])
    total = sum(line["seconds"] for line in lines)
    print(f"{len(lines)} commands, {total:.0f} s in all")
    print(f"{'command':10} {'n':>4} {'seconds':>8} {'median':>7} {'max':>6}")
    for command, secs in sorted(by_command.items(), key=lambda kv: -sum(kv[1])):
        print(f"{command:10} {len(secs):4} {sum(secs):8.0f} {statistics.median(secs):7.1f} "
              f"{max(secs):6.1f}")
    print(f"\nthe {slowest} slowest:")
    for line in sorted(lines, key=lambda line: -line["seconds"])[:slowest]:
        print(f"{line['seconds']:6.1f} {line['command']:8} exit {line['code']:<3} "
              f"{line['test']}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="every other argument is pytest's (default: tests/e2e -n auto --dist loadfile)")
    parser.add_argument("--slowest", type=int, default=20, help="how many commands to list")
    args, given = parser.parse_known_args()  # pytest's options and paths, in their order
    given = given or ["tests/e2e", "-n", "auto", "--dist", "loadfile"]
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "commands.jsonl")
        env = {**os.environ, LOG: log,
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        started = time.perf_counter()
        code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                "-p", "bench.e2e_commands", *given], cwd=ROOT, env=env)
        print(f"\npytest exit {code}, {time.perf_counter() - started:.0f} s of wall")
        lines = [json.loads(line) for line in open(log)] if os.path.exists(log) else []
    report(lines, args.slowest)
    sys.exit(code)


if __name__ == "__main__":
    main()
