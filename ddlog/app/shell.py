"""`ddlog shell`: DDlog's command language, read from a terminal, a pipe or a file, run on one
Database (one SparkSession for the whole stream).

Every statement runs as soon as its terminator arrives. An error prints `file:line:col: error:
...` on stderr and rejects the open transaction (its updates are dropped; a durable state keeps
its last committed epoch). As DDlog does, a terminal session goes on after an error, while a
script (stdin not a terminal, or --commands FILE) stops with exit status 1.

Semantics, following DDlog's CLI: updates and `clear` only inside `start; ... commit;`;
`start;` inside a transaction, and `commit;`/`rollback;` outside one, are errors; `dump R;`
prints the committed value (what a transaction has buffered is not evaluated until it
commits); input that ends inside a transaction leaves it uncommitted, with a warning.
"""
from __future__ import annotations

import sys
from collections import deque
from typing import Callable, Iterator, TextIO

from ddlog.syntax import commands as C
from ddlog.values import render
from ddlog.app.database import Database, Transaction
from ddlog.errors import DDlogError
from ddlog.limits import MAX_LINE

PROMPT = ">> "
CONTINUE = ".. "


# DDlog's standard library's internal relation of one record (Shell._dump_all)
SINGLETON = "ddlog_std::Singleton"


class SourceWindow:
    """The last lines of a stream, for the caret line of error messages (a piped stream is not
    kept whole: it may be any size)."""

    def __init__(self, keep: int = 5000):
        self.first = 1  # line number of lines[0]
        self.lines: deque[str] = deque()
        self.keep = keep
        self.partial = ""

    def add(self, text: str) -> None:
        text = self.partial + text
        parts = text.split("\n")
        self.partial = parts.pop()
        for p in parts:
            self.lines.append(p)
            if len(self.lines) > self.keep:
                self.lines.popleft()
                self.first += 1

    def text(self) -> str:
        return "\n" * (self.first - 1) + "\n".join([*self.lines, self.partial])


class Shell:
    def __init__(self, db: Database, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 interactive: bool = False, progress: Callable[[str], None] | None = None,
                 internal: bool = False):
        self.db = db
        self.out, self.err = out, err
        self.interactive = interactive
        # `--output-internal-relations`: dumps and changes show the internal relations too
        self.internal = internal
        self.progress = progress
        self.txn: Transaction | None = None
        self.file = "<stdin>"
        self.source: Callable[[], str | None] = lambda: None
        # the relations `dump;` shows: as DDlog's, those that had a change since the program
        # started (or were dumped by name); None: every one (a stored state continued, whose
        # earlier sessions are not known)
        self.seen: set[str] | None = None

    # -- reading -----------------------------------------------------------------------------

    def run_text(self, text: str, file: str) -> int:
        """A whole command file (--commands FILE)."""
        self.file = file
        self.source = lambda: text
        return self._run(iter([text]), C.StatementSplitter(file, source=text))

    def run_stream(self, stream: TextIO, file: str = "<stdin>") -> int:
        """A pipe: each line is run as soon as it is read."""
        self.file = file
        window = SourceWindow()
        self.source = window.text

        def lines() -> Iterator[str]:
            while True:
                line = stream.readline(MAX_LINE)  # a line without end is read in pieces
                if not line:
                    return
                window.add(line)
                yield line
        return self._run(lines(), C.StatementSplitter(file))

    def run_terminal(self) -> int:
        """A terminal: prompts, line editing where readline is available."""
        window = SourceWindow()
        self.source = window.text
        splitter = C.StatementSplitter("<stdin>")

        def lines() -> Iterator[str]:
            for line in terminal_lines(lambda: CONTINUE if splitter.pending else PROMPT,
                                       self.out):
                window.add(line)
                yield line
        return self._run(lines(), splitter)

    def _run(self, chunks: Iterator[str], splitter: C.StatementSplitter) -> int:
        for chunk in chunks:
            status = self.push(splitter, chunk)
            if status is not None:
                return status
        return self.finish(splitter)

    # A session driven from outside, one chunk at a time (`ddlog serve` runs a client's shell
    # this way): push every chunk, then finish, unless a push already ended the session.

    def push(self, splitter: C.StatementSplitter, chunk: str) -> int | None:
        """Run the complete statements `chunk` adds; an exit status when the session ended."""
        splitter.push(chunk)
        return self._drain(splitter)

    def finish(self, splitter: C.StatementSplitter) -> int:
        """The input ended: its last statement must be complete."""
        try:
            splitter.finish()
        except DDlogError as err:
            self._report(err)
            return 1
        return self._end()

    def _drain(self, splitter: C.StatementSplitter) -> int | None:
        """Run every complete statement; an exit status when the session is over."""
        while True:
            try:
                for cmd in splitter:
                    if not self.execute(cmd):
                        return self._end()
                return None
            except DDlogError as err:
                # the bad statement is consumed: iterating again goes on after it
                self._report(err)
                if not self.interactive:
                    return 1

    def _end(self) -> int:
        if self.txn is not None:
            self.err.write("warning: the input ended inside a transaction; its updates were "
                           "not committed\n")
        return 0

    def _report(self, err: DDlogError) -> None:
        self.out.flush()
        self.err.write(err.format() + "\n")
        if self.txn is not None:
            self.txn = None
            self.err.write("the transaction was rolled back\n")
        self.err.flush()

    def initial_snapshot(self, show: bool = True) -> None:
        """As DDlog's CLI starts: a new program's facts (rules without relation atoms, and
        the facts of input relations) are committed as the first transaction, and what they
        put in the output relations is printed as `commit dump_changes;` prints it (unless
        not `show`). A continued state has had its first transaction already."""
        from ddlog.plan.normalize import UNIT

        if self.db.epoch != 0:
            return
        facts = UNIT in self.db.compiled.relations or self.db.compiled.program.input_facts
        changes = self.db.commit(Transaction(), self.progress,
                                 internal=self.internal) if facts else {}
        self.seen = set(changes)
        rows = self.db.change_rows(changes) if changes else {}
        if show:
            self._print(self._change_lines(rows, first=True))

    def _change_lines(self, rows: dict, first: bool = False) -> list[str]:
        """A commit's changes as DDlog prints them. With internal relations shown, the first
        transaction also puts DDlog's `ddlog_std::Singleton` record (see _dump_all)."""
        blocks = {name: render.change_lines(self.db.relations, {name: rows[name]})
                  for name in rows}
        if first and self.internal:
            blocks[SINGLETON] = [f"{SINGLETON}:", f"{SINGLETON}{{}}: +1"]
        return [line for name in sorted(blocks) for line in blocks[name]]

    def _dump_all(self) -> None:
        """`dump;`: every shown relation `seen` so far, sorted by name. DDlog's standard
        library holds an internal relation of one record, `ddlog_std::Singleton`, which DDlog
        shows among the internal relations; it is shown here too, so that dumps read as
        DDlog's."""
        db = self.db
        names = db.output_names + (db.internal_names + [SINGLETON] if self.internal else [])
        for name in sorted(names):
            if self.seen is not None and name not in self.seen and name != SINGLETON:
                continue
            if name == SINGLETON:
                self._print([f"{SINGLETON}:", f"{SINGLETON}{{}}", ""])
            else:
                self._print([f"{name}:", *render.dump_lines(db.relations[name], db.rows(name)),
                             ""])

    # -- commands ----------------------------------------------------------------------------

    def execute(self, cmd: C.Command) -> bool:
        """Run one command; False after `exit;`. Errors are DDlogErrors located at the command
        (or at the part of it that is wrong)."""
        try:
            return self._execute(cmd)
        except DDlogError as err:
            if err.span is None:
                err.span, err.source = cmd.span, self.source()
            raise
        finally:
            self.out.flush()

    def _execute(self, cmd: C.Command) -> bool:
        db = self.db
        if isinstance(cmd, C.Start):
            if self.txn is not None:
                raise self._error("start: a transaction is already in progress", cmd)
            self.txn = Transaction()
        elif isinstance(cmd, C.Commit):
            if self.txn is None:
                raise self._error("commit: no transaction in progress", cmd)
            txn = self.txn
            changes = db.commit(txn, self.progress, internal=self.internal)
            self.txn = None
            if self.seen is not None:
                self.seen |= set(changes)
            if cmd.dump_changes:
                self._print(self._change_lines(db.change_rows(changes)))
            if db.outputs:
                db.write_sinks()
        elif isinstance(cmd, C.Rollback):
            if self.txn is None:
                raise self._error("rollback: no transaction in progress", cmd)
            self.txn = None
        elif isinstance(cmd, (C.Update, C.Modify, C.DeleteKey, C.Clear)):
            verb = cmd.kind if isinstance(cmd, C.Update) else \
                {C.Modify: "modify", C.DeleteKey: "delete_key", C.Clear: "clear"}[type(cmd)]
            if self.txn is None:
                raise self._error(f"{verb} outside a transaction: start one with `start;`", cmd)
            db.apply(self.txn, cmd, self.file, self.source())
        elif isinstance(cmd, C.Dump):
            if cmd.relation is None:
                self._dump_all()
            else:
                info = db.relation(cmd.relation, cmd.span, self.source())
                self._print(render.dump_lines(info, db.rows(info.name)))
                if self.seen is not None:
                    self.seen.add(info.name)
        elif isinstance(cmd, C.Echo):
            self._print([cmd.text])
        elif isinstance(cmd, C.Exit):
            return False
        return True

    def _error(self, message: str, cmd: C.Command) -> DDlogError:
        return DDlogError(message, cmd.span, self.source())

    def _print(self, lines: list[str]) -> None:
        self.out.write("".join(line + "\n" for line in lines))


def terminal_lines(prompt: Callable[[], str], out: TextIO) -> Iterator[str]:
    """Lines typed at a terminal, with history and editing where readline is available:
    Ctrl-C drops the line being typed, Ctrl-D ends the input."""
    try:
        import readline  # noqa: F401  (input() gains history and editing)
    except ImportError:  # pragma: no cover
        pass
    while True:
        try:
            yield input(prompt()) + "\n"
        except EOFError:
            out.write("\n")
            return
        except KeyboardInterrupt:
            out.write("\n")


def feed_commands(db: Database, txn: Transaction, text: str, file: str) -> int:
    """`ddlog feed`: the updates of a command text, all into one transaction; returns how many
    there were. `start;` and `commit;` are accepted and ignored (so a DDlog .dat file can be fed
    as it is; a `start;` inside an open transaction is an error, as in the shell), `echo` goes
    to stderr, `exit;` stops reading; `rollback;` and `dump` have no meaning here."""
    n = 0
    started = False
    for cmd in C.parse_commands(text, file):
        if isinstance(cmd, C.Start):
            if started:
                raise DDlogError("start: a transaction is already in progress", cmd.span, text)
            started = True
        elif isinstance(cmd, C.Commit):
            started = False
        elif isinstance(cmd, (C.Update, C.Modify, C.DeleteKey, C.Clear)):
            db.apply(txn, cmd, file, text)
            n += 1
        elif isinstance(cmd, C.Echo):
            sys.stderr.write(cmd.text + "\n")
        elif isinstance(cmd, C.Exit):
            break
        elif isinstance(cmd, C.Rollback):
            raise DDlogError("rollback: `ddlog feed` commits exactly one transaction", cmd.span,
                             text)
        elif isinstance(cmd, C.Dump):
            raise DDlogError("dump: `ddlog feed` only takes updates; use `ddlog query`",
                             cmd.span, text)
    return n


def record_argument(kind: str, text: str) -> C.Update:
    """`ddlog feed --insert 'R(..)'` / `--delete`: exactly one record, nothing else (a `;`
    in the argument must not smuggle in more commands)."""
    file = f"--{kind}"
    source = f"{kind} {text}"
    body = text.strip()
    if body.endswith(";"):
        body = body[:-1].rstrip()
    splitter = C.StatementSplitter(file, source=source + ";")
    commands = splitter.feed(f"{kind} {body};")
    if len(commands) != 1 or splitter.pending:
        raise DDlogError(f"{file} takes exactly one record such as 'R(1, \"a\")', found "
                         f"more than one command in {text!r}")
    cmd = commands[0]
    if not isinstance(cmd, C.Update) or cmd.terminator != ";":
        raise DDlogError(f"{file} takes exactly one record such as 'R(1, \"a\")'", cmd.span,
                         source)
    return cmd
