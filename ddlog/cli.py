"""The `ddlog` command line.

Each subcommand is one function decorated with `@command(name, help, *arguments)`: the decorator
registers it, `main` builds the argparse parser from the registry and dispatches. A command
returns its exit code. Errors are handled here once for all commands:

- a `DDlogError` (bad program, bad command, failed evaluation): its located message on stderr, 1;
- a file that cannot be read: a one-line message on stderr, 2 (argparse usage errors are 2 too).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Callable

from ddlog.errors import DDlogError


@dataclass(frozen=True)
class Arg:
    """One `add_argument` call, kept as data so a command declares its arguments inline."""

    flags: tuple[str, ...]
    options: dict


def arg(*flags: str, **options) -> Arg:
    return Arg(flags, options)


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    args: tuple[Arg, ...]
    run: Callable[[argparse.Namespace], int]


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, *args: Arg):
    """Register `run(args) -> int` as subcommand `name`."""
    def register(run: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = Command(name, help, args, run)
        return run
    return register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ddlog", description="DDlog-dialect Datalog with incremental evaluation on Spark.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in COMMANDS.values():
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        for a in cmd.args:
            p.add_argument(*a.flags, **a.options)
        p.set_defaults(run=cmd.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except DDlogError as err:
        print(err.format(), file=sys.stderr)
        return 1
    except FileNotFoundError as err:
        print(f"ddlog: error: no such file: {err.filename}", file=sys.stderr)
        return 2
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as err:
        print(f"ddlog: error: cannot read {getattr(err, 'filename', '') or ''}: {err}",
              file=sys.stderr)
        return 2


# ---------------------------------------------------------------------------------------------
# check


def describe(frontend) -> str:
    """The text `ddlog check` prints: relations with their roles and typed columns, then the
    strata in evaluation order."""
    program = frontend.program
    lines = ["relations:"]
    for rel in program.relations.values():
        cols = ", ".join(f"{n}: {t}" for n, t in rel.columns)
        lines.append(f"  {rel.role:<8} {rel.name}({cols})")
    lines.append("strata:")
    width = len(str(max(len(frontend.strata) - 1, 0)))
    for s in frontend.strata:
        mark = "  (recursive)" if s.recursive else ""
        lines.append(f"  {s.index:<{width}}  {', '.join(s.relations)}{mark}")
    return "\n".join(lines)


@command("check", "parse and type-check a program, and show its relations and strata",
         arg("program", metavar="PROGRAM.dl", help="the DDlog program"))
def cmd_check(args: argparse.Namespace) -> int:
    from ddlog.frontend import load_file

    print(describe(load_file(args.program)))
    return 0
