"""Where a command's CPU goes, process by process and thread by thread (Linux /proc).

    python bench/cpu_split.py -- .venv/bin/python -m pytest -q -n 2 --dist loadfile tests

runs the command and, once a second, reads the CPU time of every thread of every process it
started (its descendants: pytest's workers, their JVMs, the `ddlog` processes a test starts
and their JVMs), keeping each thread's last reading, so that processes that end between two
readings lose at most a second each. At the end it prints, in core-seconds: the machine's
busy time over the run, the descendants' share of it, and their time by kind of process and
by thread (JIT compiler threads, the py4j thread that builds and plans Spark's plans, the
executors' tasks, garbage collection...; digits in thread names are folded). The rest of the
machine's busy time is outside the command: the kernel's threads and the sandbox's.

A CPU-bound run (the test suite on two cores) is only made faster by taking CPU from one of
these lines; this says which lines are worth the effort.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections import Counter

TICK = os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """Core-seconds the machine has been busy (user, nice and system) since boot."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return (int(fields[1]) + int(fields[2]) + int(fields[3])) / TICK


def command_line(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def kind_of(pid: int, parent: int | None) -> str | None:
    """A process's kind, from its command line (a driver JVM's from its parent's too); None
    when it has none to read (it is ending)."""
    argv = command_line(pid)
    if not argv:
        return None
    line = " ".join(argv)
    program = os.path.basename(argv[0])
    if program == "java":
        for marker, kind in (("CoarseGrainedExecutorBackend", "JVM: a cluster's executor"),
                             ("deploy.master", "JVM: a standalone master or worker"),
                             ("deploy.worker", "JVM: a standalone master or worker")):
            if marker in line:
                return kind
        if "SparkSubmit" in line:
            by_ddlog = parent is not None and " -m ddlog" in " ".join(command_line(parent))
            return "JVM: a ddlog command's driver" if by_ddlog else "JVM: a Spark driver"
        return "JVM: other"
    if program.startswith("python"):
        if " -m ddlog" in line:
            return "Python: a ddlog command"
        if "execnet" in line or "sys.stdin" in line or "pytest" in line:
            return "Python: the test runner and its workers"
        return "Python: other"
    return program or "other"


def children() -> dict[int, int]:
    """Every process's parent."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                pass
    return parents


def descendants(root: int, parents: dict[int, int], known: set[int]) -> set[int]:
    """`root` and the processes under it; `known` ones stay (their parent may have ended)."""
    found = {root} | known
    grew = True
    while grew:
        new = {pid for pid, parent in parents.items() if parent in found and pid not in found}
        found |= new
        grew = bool(new)
    return {pid for pid in found if pid in parents}


def read_threads(pid: int) -> dict[int, tuple[str, float]]:
    """A process's threads: thread id -> (name with digits folded, CPU seconds)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = re.sub(r"\d+", "N", f.read().strip())
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / TICK)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between readings")
    parser.add_argument("--top", type=int, default=30, help="threads to list")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    busy0, started = machine_busy(), time.perf_counter()
    child = subprocess.Popen(command)
    # read again every time: a launcher script execs its JVM in the same process
    kinds: dict[int, str] = {}
    last: dict[tuple[int, int], tuple[str, str, float]] = {}  # (pid, tid) -> kind, name, s
    tracked: set[int] = set()
    while True:
        done = child.poll() is not None
        parents = children()
        tracked = descendants(child.pid, parents, tracked)
        for pid in tracked:
            kind = kind_of(pid, parents.get(pid)) or kinds.get(pid, "other")
            kinds[pid] = kind
            for tid, (name, seconds) in read_threads(pid).items():
                last[(pid, tid)] = (kind, name, seconds)
        if done:
            break
        time.sleep(args.interval)
    wall, busy = time.perf_counter() - started, machine_busy() - busy0
    by_kind, by_thread, processes = Counter(), Counter(), Counter()
    for (pid, _), (kind, name, seconds) in last.items():
        by_kind[kind] += seconds
        by_thread[(kind, name)] += seconds
    for pid, kind in kinds.items():
        processes[kind] += 1
    ours = sum(by_kind.values())
    print(f"exit {child.returncode}, wall {wall:.0f} s; machine busy {busy:.0f} core-s, of "
          f"which the command's processes {ours:.0f} and the rest of the machine "
          f"{busy - ours:.0f}")
    print("\nby kind of process (core-seconds):")
    for kind, seconds in by_kind.most_common():
        print(f"{seconds:9.1f}  {kind} ({processes[kind]} processes)")
    print(f"\nthe {args.top} busiest thread names:")
    for (kind, name), seconds in by_thread.most_common(args.top):
        print(f"{seconds:9.1f}  {kind} / {name}")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
