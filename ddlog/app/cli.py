"""The `ddlog` command line.

Each subcommand is one function decorated with `@command(name, help, *arguments)`: the decorator
registers it, `main` builds the argparse parser from the registry and dispatches. A command
returns its exit code. Errors are handled here once for all commands:

- a `DDlogError` (bad program, bad command, failed evaluation): its located message on stderr, 1;
- a file that cannot be read: a one-line message on stderr, 2 (argparse usage errors are 2 too).
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from ddlog import environment
from ddlog.errors import DDlogError
from ddlog.syntax.source import read_stream, read_text

if TYPE_CHECKING:
    from ddlog.app.database import Database
    from ddlog.runtime.io import Spec


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
    if args.command in SERVED and getattr(args, "state", None):
        from ddlog.app.client import forward  # a `ddlog serve` of the state may answer

        try:
            status = forward(args, sys.argv[1:] if argv is None else argv)
        except Exception as err:
            status, message = failure(err)
            print(message, file=sys.stderr)
        if status is not None:  # a `ddlog serve` of this state answered
            return status
    return run_command(args)


# the commands that a running `ddlog serve --state DIR` answers for DIR (ddlog/app/serve.py):
# these run there as given; a shell runs there as a session
SERVED_COMMANDS = ("feed", "refresh", "query", "sql")
SERVED = (*SERVED_COMMANDS, "shell")
# the commands whose JVM is started for a short life (runtime.spark.get_session's quick_jit):
# a transaction, a query or a script, then exit. `serve` and a `stream` on an interval stay,
# and get the JVM's full compiler.
SHORT_LIVED = ("feed", "query", "sql", "shell")


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command; every error becomes a message on stderr and an exit status."""
    try:
        return args.run(args)
    except Exception as err:
        status, message = failure(err, getattr(args, "state", None))
        print(message, file=sys.stderr)
        return status
    except KeyboardInterrupt:
        print("ddlog: interrupted", file=sys.stderr)
        return 130


def failure(err: Exception, state: str | None = None) -> tuple[int, str]:
    """The exit status and the one message for an error that ends a command; anything not
    known as the input's or Spark's fault is re-raised (a bug shows its traceback). A file
    that cannot be read is the state's damage when it is one of `state`'s, else the input's."""
    if isinstance(err, DDlogError):
        return 1, err.format()
    if isinstance(err, RecursionError):
        return 1, "ddlog: error: the input is nested too deeply to process"
    if isinstance(err, FileNotFoundError):
        return 2, f"ddlog: error: no such file: {err.filename}"
    if isinstance(err, OSError):
        return 2, f"ddlog: error: {err.filename or 'input/output'}: {err.strerror or err}"
    from ddlog.runtime.errors import describe, is_damage, unreadable_file

    what = describe(err)  # a Spark job that failed while reading or computing
    if what is None:
        raise err
    file = unreadable_file(err) if is_damage(err) else None
    if file is not None and state is not None and _inside(file, state):
        return 1, f"ddlog: error: state {os.path.realpath(state)} is damaged ({what})"
    return 1, f"ddlog: error: {what}"


def _inside(path: str, directory: str) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(directory) + os.sep)


# ---------------------------------------------------------------------------------------------
# check


def describe(compiled) -> str:
    """The text `ddlog check` prints: relations with their roles and typed columns, then the
    strata in evaluation order: the strata the engine runs (and `explain` shows), so the
    relations the compiler adds are listed too, saying where they come from."""
    from ddlog.plan.normalize import UNIT

    declared = compiled.program.relations
    lines = ["relations:"]
    for rel in compiled.relations.values():
        cols = ", ".join(f"{n}: {t}" for n, t in rel.columns)
        why = ""
        if rel.name == UNIT:
            why = "  (added: the one row that facts and bodies without atoms start from)"
        elif rel.delay_of is not None:
            why = f"  (added: {rel.delay_of} as it was one transaction before)"
        elif rel.name not in declared:
            why = f"  (added: the groups of the group_by at {rel.span.line}:{rel.span.col})"
        elif rel.name in compiled.counted:
            why = "  (counted: a group sees how many times each record is derived)"
        kind = "" if rel.kind == "relation" else f"{rel.kind} "
        lines.append(f"  {rel.role:<8} {kind}{rel.name}({cols}){why}")
    lines.append("strata:")
    width = len(str(max(len(compiled.strata) - 1, 0)))
    for s in compiled.strata:
        mark = "  (recursive)" if s.recursive else ""
        lines.append(f"  {s.index:<{width}}  {', '.join(s.relations)}{mark}")
    return "\n".join(lines)


# DDlog's -L: where an imported module `a::b` (the file a/b.dl) is looked for after the
# program's own directory
LIBRARY_ARG = arg("-L", "--library", dest="libraries", metavar="DIR", action="append",
                  default=[], help="look for imported modules under DIR too, after the "
                                   "program's directory (repeatable, in order; as DDlog's -L)")


@command("check", "parse and type-check a program, and show its relations and strata",
         arg("program", metavar="PROGRAM.dl", help="the DDlog program"), LIBRARY_ARG)
def cmd_check(args: argparse.Namespace) -> int:
    from ddlog.plan import load_file

    print(describe(load_file(args.program, tuple(args.libraries))))
    return 0


# ---------------------------------------------------------------------------------------------
# explain


@command("explain", "show the circuit each stratum compiles to (text, or Graphviz DOT)",
         arg("program", metavar="PROGRAM.dl", help="the DDlog program"),
         LIBRARY_ARG,
         arg("--dot", metavar="FILE", help="also write the circuits as Graphviz DOT to FILE "
                                           "('-' for standard output instead of the text)"),
         arg("--physical", action="store_true",
             help="also show what an epoch runs: the strata run side by side, each "
                  "stratum's waves (one Spark action per iteration each), what it inlines "
                  "and the arrangements"))
def cmd_explain(args: argparse.Namespace) -> int:
    from ddlog.plan import load_file
    from ddlog.plan.explain import explain_dot, explain_text
    from ddlog.plan.physical import explain_physical, physical_plan

    compiled = load_file(args.program, tuple(args.libraries))
    if args.dot == "-":
        sys.stdout.write(explain_dot(compiled, physical_plan(compiled) if args.physical
                                     else None))
        return 0
    sys.stdout.write(explain_text(compiled))
    if args.physical:
        sys.stdout.write("\nwhat an epoch runs:\n" + explain_physical(physical_plan(compiled)))
    if args.dot:
        with open(args.dot, "w", encoding="utf-8") as f:
            f.write(explain_dot(compiled, physical_plan(compiled) if args.physical else None))
    return 0


# ---------------------------------------------------------------------------------------------
# demo


@command("demo", "check the example programs shipped with ddlog and run one on Spark "
                 "(what `make demo` runs)")
def cmd_demo(args: argparse.Namespace) -> int:
    from ddlog.app.demo import main as demo

    return demo()


# ---------------------------------------------------------------------------------------------
# Shared by the commands that run the engine (ddlog/app/database.py, ddlog/app/shell.py do the work)

SPARK_ARGS = (
    arg("--master", metavar="URL", help="Spark master (default: $SPARK_MASTER or local[*])"),
    arg("--remote", metavar="URL",
        help="run on a Spark Connect server, sc://HOST:PORT (default: $SPARK_REMOTE, if set; "
             "needs the connect extra: pip install 'ddlog-spark[connect]')"),
    arg("--conf", metavar="KEY=VALUE", action="append", default=[],
        help="a Spark setting (repeatable); wins over ddlog's defaults. ddlog.NAME=VALUE "
             "sets the engine's knob NAME (e.g. ddlog.decisions=rows: the fallback decides "
             "by row counts, not seconds)"),
    arg("--verbose", action="store_true",
        help="show Spark's own warnings and errors (log level WARN; DDLOG_SPARK_LOG_LEVEL "
             "sets another level)"),
)
STATE_ARG = arg("--state", metavar="DIR", required=True, help="the state directory")
STATS_ARG = arg("--stats", action="store_true",
                help="print what the epoch did on stderr: seconds, Spark jobs, iterations and "
                     "rows per stratum")
OUTPUT_ARG = arg("--output", metavar="R=SINK", action="append", default=[],
                 help="write relation R to table:NAME, parquet:PATH, csv:PATH or json:PATH "
                      "after each commit (repeatable)")
FORMAT_ARG = arg("--format", choices=("text", "csv", "json"), default="text",
                 help="output format (default: DDlog's text format)")


def spark_options(args: argparse.Namespace):
    from ddlog.app.database import SparkOptions

    from ddlog.runtime.config import with_knobs

    conf, knobs = {}, {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise DDlogError(f"--conf expects KEY=VALUE, got '{item}'")
        key = key.strip()
        if key.startswith("ddlog."):  # the engine's own knobs (runtime/config.Config)
            knobs[key[len("ddlog."):]] = value
        else:
            conf[key] = value
    try:
        with_knobs(knobs)
    except ValueError as err:
        raise DDlogError(f"--conf ddlog.{err}") from None
    level = None
    if args.verbose:
        level = environment.get(environment.SPARK_LOG_LEVEL) or "warn"
    if args.master and args.remote:
        raise DDlogError("--master and --remote: give one (--remote runs on a Spark Connect "
                         "server, whose master is its own)")
    return SparkOptions(args.master, conf, level, show_start=sys.stderr.isatty(),
                        short_lived=args.command in SHORT_LIVED, knobs=knobs,
                        remote=args.remote)


def quick_jit_for(db: "Database", sources: "Iterable[Spec]") -> None:
    """Start `db`'s JVM for a short life (SparkOptions.short_lived) when the command's work is
    reading `sources` and they are files of at most config.quick_source_bytes in all. The
    optimising compiler takes a core of two for a while after the JVM starts, which a short
    command waits for and a long one makes up; a table's size is not known before Spark
    starts, so it counts as large. (`run`, `refresh` and `stream --trigger available-now`
    read their sources and exit. A cold `ddlog run` over edges in CSV is faster with the
    quick compiler while its sources are small, breaks even at a few megabytes, and beyond
    is much slower with it, as its longer run gets hot and needs the full compiler's code; a
    program that does more per input row breaks even at fewer bytes, so the line is drawn
    below that point.) Called before the command's first use of Spark; a served command
    keeps the server's JVM."""
    if db.keep_open:
        return
    sizes = [spec.file_bytes() for spec in sources]
    db.options.short_lived = (None not in sizes
                              and sum(sizes) <= db.config.quick_source_bytes)


def open_state(args: argparse.Namespace, writer: bool = True):
    """The state's Database: the one `ddlog serve` keeps warm when the command runs inside
    it, else opened here (and closed by the caller)."""
    from ddlog.app.database import Database

    served = getattr(args, "served", None)
    if served is not None:
        return served
    return Database.open(args.state, spark_options(args), writer=writer)


def input_text(args: argparse.Namespace, path: str) -> str:
    """A file the command reads (FILE.dat, --commands): from the client when `ddlog serve`
    runs the command, which never opens a path a client names (the client sends the file's
    text; the server may not see the client's files, and must not read its own for it)."""
    given = getattr(args, "texts", None) or {}
    if path in given:
        return given[path]
    if getattr(args, "served", None) is not None:
        raise DDlogError(f"{path}: a served command reads the files its client sends")
    return read_text(path)


def progress_reporter():
    """Progress on stderr (stratum, iteration, delta size), only when a person watches it."""
    from ddlog.runtime.stratum import stderr_progress

    return stderr_progress if sys.stderr.isatty() else None


def print_changes(db, changes: dict, fmt: str, stats: bool = False) -> None:
    """The changes a commit made, in DDlog's text format or as JSON lines; with JSON, a last
    line `{"stats": ...}` says what the epoch did; `stats` prints that summary on stderr. The
    summary's output rows are the net change printed."""
    import json

    from ddlog.values import render

    rows = db.change_rows(changes)
    lines = (render.change_json_lines(db.relations, rows) if fmt == "json"
             else render.change_lines(db.relations, rows))
    done = db.last_commit
    if done is not None:
        done = done.with_net_out(sum(len(v) for v in rows.values()))
    if fmt == "json" and done is not None:
        lines.append(json.dumps({"stats": done.to_dict()}))
    sys.stdout.write("".join(line + "\n" for line in lines))
    if stats and done is not None:
        sys.stderr.write("".join(line + "\n" for line in done.lines()))


# ---------------------------------------------------------------------------------------------
# shell


@command("shell", "read DDlog's command language (start; insert ..; commit; dump; ...) from "
                  "stdin or a file",
         arg("program", metavar="PROGRAM.dl", help="the DDlog program"),
         LIBRARY_ARG,
         arg("--state", metavar="DIR", help="keep the data in this state directory (created on "
                                            "the first commit; it must belong to PROGRAM)"),
         arg("--commands", metavar="FILE", help="read the commands from FILE instead of stdin"),
         arg("--no-init-snapshot", action="store_true",
             help="do not print what the program's facts put in the output relations when "
                  "they are committed at start (as DDlog's CLI flag)"),
         arg("--output-internal-relations", action="store_true",
             help="show the internal relations too, in dumps and changes, each made "
                  "distinct (as DDlog's compiler flag, which makes them output relations)"),
         *SPARK_ARGS)
def cmd_shell(args: argparse.Namespace) -> int:
    from ddlog.app.database import Database
    from ddlog.app.shell import Shell

    db = Database.for_program(args.program, args.state, spark_options(args),
                              tuple(args.libraries), args.output_internal_relations)
    status = 1
    try:
        interactive = args.commands is None and sys.stdin.isatty()
        shell = Shell(db, interactive=interactive, progress=progress_reporter(),
                      internal=args.output_internal_relations)
        shell.initial_snapshot(show=not args.no_init_snapshot)
        if args.commands is not None:
            status = shell.run_text(read_text(args.commands), args.commands)
        elif interactive:
            status = shell.run_terminal()
        else:
            status = shell.run_stream(sys.stdin)
        return status
    finally:
        db.close(failed=status != 0)


# ---------------------------------------------------------------------------------------------
# run


@command("run", "create a state directory: bind inputs to sources and outputs to sinks, and "
                "commit the sources as the first epoch",
         arg("program", metavar="PROGRAM.dl", help="the DDlog program"),
         LIBRARY_ARG,
         STATE_ARG,
         arg("--input", metavar="R=SOURCE", action="append", default=[],
             help="bind input relation R to table:NAME, parquet:PATH, csv:PATH, json:PATH or a "
                  "FILE.dat (a bare FILE.dat binds every input it is not told otherwise)"),
         OUTPUT_ARG,
         *SPARK_ARGS)
def cmd_run(args: argparse.Namespace) -> int:
    from ddlog.app.database import Database, Transaction
    from ddlog.app.bindings import bind, bound_sources, source_frames

    db = Database.create(args.program, args.state, spark_options(args), tuple(args.libraries))
    failed = True
    try:
        bind(db, args.input, args.output)  # validated before Spark starts
        sources = bound_sources(db)
        quick_jit_for(db, sources.values())
        txn = Transaction()
        for rel, df in source_frames(db, sources).items():
            txn.add_frame(rel, 1, df)
        changes = db.commit(txn, progress_reporter())
        sinks = db.write_sinks()
        print(f"epoch {db.epoch} committed to {db.state.path}")
        for name in db.output_names:
            n = changes[name].count() if name in changes else 0
            print(f"  {name}: {n} row{'s' if n != 1 else ''}")
        for s in sinks:
            print(f"  wrote {s}")
        failed = False
        return 0
    finally:
        db.close(failed)


# ---------------------------------------------------------------------------------------------
# stream


@command("stream", "apply change files as they arrive, one epoch per Spark Structured "
                   "Streaming micro-batch (exactly once; the state is created if new)",
         arg("program", metavar="PROGRAM.dl", help="the DDlog program"),
         LIBRARY_ARG,
         STATE_ARG,
         arg("--source", metavar="R=FORMAT:DIR", action="append", default=[],
             help="watch DIR for change files of input relation R (csv, json or parquet: the "
                  "relation's columns and an optional integer column weight, 1 inserts and "
                  "-1 deletes); repeatable"),
         arg("--trigger", metavar="WHEN", default="5s",
             help="available-now (apply every file present, then exit) or an interval such as "
                  "5s (the default; runs until SIGINT/SIGTERM, finishing the current batch)"),
         OUTPUT_ARG,
         arg("--changes", metavar="R=FORMAT:DIR", action="append", default=[],
             help="append each epoch's changes of output relation R to DIR/epoch=E (columns, "
                  "weight +1/-1; the epoch is the partition column)"),
         *SPARK_ARGS)
def cmd_stream(args: argparse.Namespace) -> int:
    from ddlog.app.bindings import bind, written_paths
    from ddlog.app.database import Database
    from ddlog.app.stream import Stream, Trigger, parse_change_feeds, parse_sources, \
        stderr_report
    from ddlog.runtime.io import check_apart

    trigger = Trigger.parse(args.trigger)
    db = Database.for_program(args.program, args.state, spark_options(args),
                              tuple(args.libraries))
    failed = True
    try:
        sources = parse_sources(db, args.source)
        if trigger.available_now:  # the files there now are all it reads
            quick_jit_for(db, sources.values())
        feeds = parse_change_feeds(db, args.changes)
        if args.output:
            inputs = dict(db.inputs)
            bind(db, [], args.output)  # checked, then kept beside the state's other sinks
            db.inputs = inputs
        check_apart([*written_paths(db), *((f"--changes {rel}", spec)
                                           for rel, spec in sorted(feeds.items()))],
                    db.state.path, read=[(f"--source {rel}", spec)
                                         for rel, spec in sorted(sources.items())])
        stream = Stream(db, sources, feeds, stderr_report)
        stderr_report(f"watching {', '.join(f'{r}={s}' for r, s in sorted(sources.items()))} "
                      f"(trigger {args.trigger}); {db.state.path} is at epoch {db.epoch}")
        stream.run(trigger)
        print(f"{stream.batches} batch{'es' if stream.batches != 1 else ''} committed; "
              f"{db.state.path} is at epoch {db.epoch}")
        failed = False
        return 0
    finally:
        db.close(failed)


# ---------------------------------------------------------------------------------------------
# feed


class _UpdateAction(argparse.Action):
    """--insert / --delete keep their relative order in one list."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = getattr(namespace, self.dest, None) or []
        items.append((self.const, values))
        setattr(namespace, self.dest, items)


@command("feed", "commit one transaction (a .dat file, stdin, or --insert/--delete) to a state "
                 "and print the output changes",
         arg("file", metavar="FILE.dat", nargs="?",
             help="DDlog commands (insert, delete, clear; start/commit are optional)"),
         STATE_ARG,
         arg("--insert", metavar="'R(..)'", dest="updates", action=_UpdateAction,
             const="insert", help="insert a record (repeatable)"),
         arg("--delete", metavar="'R(..)'", dest="updates", action=_UpdateAction,
             const="delete", help="delete a record (repeatable)"),
         arg("--epoch", metavar="N", type=int,
             help="the epoch this transaction must become: skipped if it is already committed "
                  "(replays are idempotent)"),
         arg("--format", choices=("text", "json"), default="text",
             help="how to print the changes (default: DDlog's text format; JSON lines end "
                  "with the epoch's stats)"),
         STATS_ARG,
         *SPARK_ARGS)
def cmd_feed(args: argparse.Namespace) -> int:
    from ddlog.app.database import Transaction
    from ddlog.app.shell import feed_commands, record_argument

    db = open_state(args)
    try:
        if args.epoch is not None:
            if args.epoch < 1:
                raise DDlogError(f"--epoch {args.epoch}: epochs are numbered from 1")
            if args.epoch <= db.epoch:
                print(f"epoch {args.epoch} is already committed (the state is at epoch "
                      f"{db.epoch}): skipped", file=sys.stderr)
                return 0
            if args.epoch != db.epoch + 1:
                raise DDlogError(f"--epoch {args.epoch} would skip epochs: the state is at "
                                 f"epoch {db.epoch}, the next one is {db.epoch + 1}")
        txn = Transaction()
        n = 0
        if args.file is not None:
            n += feed_commands(db, txn, input_text(args, args.file), args.file)
        elif not args.updates and not sys.stdin.isatty():
            n += feed_commands(db, txn, read_stream(sys.stdin), "<stdin>")
        for kind, text in args.updates or []:
            db.apply(txn, record_argument(kind, text), f"--{kind}", f"{kind} {text}")
            n += 1
        if n == 0:
            raise DDlogError("nothing to feed: give a FILE.dat with updates, --insert or "
                             "--delete (or pipe commands to stdin)")
        changes = db.commit(txn, progress_reporter())
        print_changes(db, changes, args.format, args.stats)
        db.write_sinks()
        return 0
    finally:
        db.close()


# ---------------------------------------------------------------------------------------------
# refresh


@command("refresh", "re-read the bound sources and commit their differences from the stored "
                    "inputs as one epoch",
         STATE_ARG,
         arg("--format", choices=("text", "json"), default="text",
             help="how to print the changes (default: DDlog's text format; JSON lines end "
                  "with the epoch's stats)"),
         STATS_ARG,
         *SPARK_ARGS)
def cmd_refresh(args: argparse.Namespace) -> int:
    from ddlog.app.database import Transaction
    from ddlog.app.bindings import bound_sources, source_frames

    db = open_state(args)
    try:
        if not db.inputs:
            raise DDlogError(f"state {db.state.path} has no bound sources to refresh (bind them "
                             f"with `ddlog run --input R=SOURCE`)")
        sources = bound_sources(db)
        quick_jit_for(db, sources.values())
        txn = Transaction()
        for rel, src in source_frames(db, sources).items():
            src = src.distinct()
            stored = db.value_frame(rel)
            txn.add_frame(rel, -1, stored.subtract(src))
            txn.add_frame(rel, 1, src.subtract(stored))
        changes = db.commit(txn, progress_reporter())
        print_changes(db, changes, args.format, args.stats)
        db.write_sinks()
        return 0
    finally:
        db.close()


# ---------------------------------------------------------------------------------------------
# serve


@command("serve", "keep a state open, with Spark and the engine warm, and answer feed, refresh, "
                  "query, sql and shell for it until SIGTERM",
         STATE_ARG,
         *SPARK_ARGS)
def cmd_serve(args: argparse.Namespace) -> int:
    from ddlog.app.database import Database
    from ddlog.app.serve import CommandLine, serve_state

    db = Database.open(args.state, spark_options(args))
    try:
        serve_state(db, CommandLine(SERVED_COMMANDS, build_parser, run_command, failure))
        return 0
    finally:
        db.keep_open = False
        db.close()


# ---------------------------------------------------------------------------------------------
# query, sql


@command("query", "print relations of a state",
         STATE_ARG,
         arg("relations", metavar="RELATION", nargs="+",
             help="the relations to print, one after another (their records name them; "
                  "--format csv and json print one relation)"),
         FORMAT_ARG,
         arg("--limit", metavar="N", type=int, help="print at most N records of each"),
         *SPARK_ARGS)
def cmd_query(args: argparse.Namespace) -> int:
    from ddlog.values import render

    if len(args.relations) > 1 and args.format != "text":
        # a csv header or a JSON line does not say which relation its rows belong to
        raise DDlogError(f"query: --format {args.format} prints one relation, not "
                         f"{len(args.relations)}")
    db = open_state(args, writer=False)
    try:
        infos = [db.relation(name) for name in args.relations]
        for info in infos:
            rows = db.rows(info.name, limit=args.limit)
            sys.stdout.write(render.relation_text(info, rows, args.format))
        return 0
    finally:
        db.close()


@command("sql", "run a read-only Spark SQL query over a state (every relation is a view; "
                "SELECT, WITH, VALUES, TABLE, SHOW, DESCRIBE, EXPLAIN)",
         STATE_ARG,
         arg("query", metavar="SQL", help="the query, e.g. \"SELECT * FROM Path WHERE src = 1\""),
         FORMAT_ARG,
         arg("--limit", metavar="N", type=int, help="print at most N rows"),
         *SPARK_ARGS)
def cmd_sql(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    from ddlog.runtime.errors import describe
    from ddlog.runtime.spark import adopt, engine_session
    from ddlog.runtime.sql import check_read_only
    from ddlog.values import render

    db = open_state(args, writer=False)
    try:
        # a session of its own (with the engine's settings): its views and the query leave
        # the state's session (a served state's, which later clients use) as it was
        session = engine_session(db.spark)
        check_read_only(session, args.query)
        for name in db.relations:
            adopt(session, db.named(name, db.value_frame(name))).createOrReplaceTempView(name)
        try:
            df = session.sql(args.query)
            if args.limit is not None:
                df = df.limit(args.limit)
            rows = df.collect()
        except PySparkException as err:
            raise DDlogError(f"sql: {describe(err)}") from None
        sys.stdout.write(render.table_text(df.columns, rows, args.format))
        return 0
    finally:
        db.close()
