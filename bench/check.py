"""`ddlog check` on large generated programs: seconds by phase of the front end, at the full
size and at a tenth of it (their ratio over 10 shows whether a phase is linear), and the whole
command as a user runs it. No Spark is involved.

Two shapes of program, each a chain of relations with one rule apiece:
  flat  `R5(x) :- R4(x).`                                         (about 50 bytes a rule)
  rich  `R5(x, y) :- R4(x, y), E(x, z), x + z > 5, y != "s5".`    (about 105 bytes a rule)

    python bench/check.py --rules 110000 --shape flat
    python bench/check.py --rules 55000 --shape rich
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def program(shape: str, rules: int) -> str:
    if shape == "flat":
        return "input relation R0(x: bigint)\n" + "".join(
            f"relation R{i}(x: bigint)\nR{i}(x) :- R{i - 1}(x).\n" for i in range(1, rules + 1))
    return ("input relation R0(x: bigint, y: string)\ninput relation E(a: bigint, b: bigint)\n"
            + "".join(f"relation R{i}(x: bigint, y: string)\n"
                      f"R{i}(x, y) :- R{i - 1}(x, y), E(x, z), x + z > {i}, y != \"s{i}\".\n"
                      for i in range(1, rules + 1)))


def phases(text: str) -> dict[str, float]:
    """Seconds of each phase of `ddlog check`'s front end on `text`, run as it runs them."""
    from ddlog.check.rules import check_program
    from ddlog.limits import collector_paused, recursion_room
    from ddlog.plan.compile import compile_program
    from ddlog.syntax import parser
    from ddlog.syntax.modules import resolve_imports
    from ddlog.syntax.scanner import Located
    from ddlog.syntax.source import read_text
    from ddlog.grammar import program_parser

    out: dict[str, float] = {}

    def timed(name, fn, *args):
        start = time.perf_counter()
        result = fn(*args)
        out[name] = time.perf_counter() - start
        return result

    program_parser()  # its tables load once per process
    with collector_paused(), recursion_room():
        loc = Located("big.dl", text)
        masked = timed("mask", parser.mask, text, loc)
        tree = timed("lark", parser.run_lark, program_parser(), masked, text, "program", loc)
        builder = parser.Builder(loc, text)
        builder.string_depth, chained = timed("nest", parser.check_nesting, tree, loc)
        prog = timed("build", parser.transform, tree, builder)
        del tree
        prog = timed("imports", resolve_imports, prog, parser.parse_program, read_text)
        checked = timed("check", check_program, prog)
        timed("compile", compile_program, checked)
    out["total"] = sum(out.values())
    return out


def command_seconds(text: str) -> float:
    """Wall seconds of `ddlog check FILE` in a fresh process, its output discarded."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "big.dl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ddlog", "check", path], check=True,
                       stdout=subprocess.DEVNULL, cwd=ROOT)
        return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", type=int, default=110_000)
    ap.add_argument("--shape", choices=["flat", "rich"], default="flat")
    args = ap.parse_args()
    full, tenth = program(args.shape, args.rules), program(args.shape, args.rules // 10)
    small, large = phases(tenth), phases(full)
    print(f"{args.shape}: {args.rules} rules, {len(full) / 1e6:.1f} MB")
    print(f"{'phase':<8} {'seconds':>8} {'a tenth':>8} {'ratio/10':>8}")
    for name in large:
        print(f"{name:<8} {large[name]:8.2f} {small[name]:8.2f} "
              f"{large[name] / max(small[name], 1e-9) / 10:8.2f}")
    print(f"ddlog check, the whole command: {command_seconds(full):.1f} s")


if __name__ == "__main__":
    main()
