"""`ddlog demo` (also `make demo`, `python -m ddlog.app.demo`): checks every example program,
then runs one end to end on Spark.

The examples ship inside the package (`ddlog.programs`), so an installed `ddlog` finds them
from any directory. Loads reach.dl with its data (reach.dat), commits it as the first epoch,
then applies a batch of changes that breaks a cycle and adds an edge, printing each epoch's
output changes and the final output in DDlog's format.
"""
from __future__ import annotations

import sys
import time
from importlib import resources
from pathlib import Path

from ddlog.app.api import Program
from ddlog.app.shell import feed_commands
from ddlog.plan import load_file
from ddlog.values import render

BATCH = """start;
delete Edge(3, 1),      # breaks the cycle 1 -> 2 -> 3 -> 1
insert Edge(4, 5),      # 4 now leads into the 5 <-> 6 cycle
insert Root(7);
commit;"""


def examples() -> Path:
    """The folder of the example programs (package data, a real folder when installed)."""
    return Path(str(resources.files("ddlog.programs")))


def show_changes(p: Program, changes: dict) -> None:
    rows = p.db.change_rows(changes)
    print("".join(line + "\n" for line in render.change_lines(p.relations, rows)), end="")


def main(argv: list[str] | None = None) -> int:
    home = examples()
    print("== ddlog check programs/*.dl")
    for path in sorted(home.glob("*.dl")):
        fe = load_file(str(path))
        rec = sum(1 for s in fe.strata if s.recursive)
        print(f"  {path.name:<14} {len(fe.program.relations)} relations, "
              f"{len(fe.strata)} strata ({rec} recursive)")

    print("\n== programs/reach.dl on Spark")
    p = Program.load(str(home / "reach.dl"))
    feed_commands(p.db, p.pending, (home / "reach.dat").read_text(encoding="utf-8"), "reach.dat")
    started = time.perf_counter()
    show_changes(p, p.commit())
    print(f"(epoch 1 committed in {time.perf_counter() - started:.1f}s)")

    print("\n== a batch of changes:\n" + BATCH)
    feed_commands(p.db, p.pending, BATCH, "<demo>")
    started = time.perf_counter()
    show_changes(p, p.commit())
    print(f"(epoch 2 committed incrementally in {time.perf_counter() - started:.1f}s)")

    print("\n== final output")
    for name in p.db.output_names:
        print(f"{name}:")
        for line in render.dump_lines(p.relations[name], p.db.rows(name)):
            print(line)
        print()
    p.spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
