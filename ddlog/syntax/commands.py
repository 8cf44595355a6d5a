"""DDlog's command language: the CLI shell and `.dat` files.

    start;  insert R(1, "a"),  delete R(.x = 1, .y = "a");  commit;  commit dump_changes;
    rollback;  clear R;  dump;  dump R;  echo some text;  exit;      # a comment

An update ends with `,` (more follow in the same batch) or `;` (end of the batch); `Update`
records which. Values are constant expressions of the program grammar (ddlog/values/literals.py turns
them into values once the relation's column types are known).

`StatementSplitter` cuts an incoming stream into statements as soon as each terminator arrives,
so a shell can run every statement right away; `parse_commands` parses a whole text with it.
Each statement is parsed on its own by Lark (grammar/commands.lark), with positions shifted to
where it sits in the stream.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Union


from ddlog.syntax import ast
from ddlog.errors import DDlogError, Span
from ddlog.limits import MAX_DIGITS, MAX_INT_BITS, MAX_STATEMENT
from ddlog.syntax.parser import Builder, parse_text
from ddlog.syntax.scanner import Located, NestingError, scan_string
from ddlog.grammar import commands_parser

# ---------------------------------------------------------------------------------------------
# Commands


@dataclass
class Start:
    span: Span


@dataclass
class Commit:
    dump_changes: bool
    span: Span


@dataclass
class Rollback:
    span: Span


@dataclass
class Update:
    """`insert R(..)` / `delete R(..)`, ended by `,` (buffered) or `;` (ends the batch)."""

    kind: str  # 'insert' | 'delete'
    atom: ast.Atom
    terminator: str  # ',' | ';'
    span: Span


@dataclass
class Modify:
    """`modify R k <- v;`: the record of input relation R whose primary key is k, changed by v
    (a record that gives new values to some of its fields, ddlog/values/literals.py `mutate`)."""

    relation: str
    key: ast.Expr
    value: ast.Expr
    span: Span


@dataclass
class DeleteKey:
    """`delete_key R k;`: the record of R whose primary key is k goes."""

    relation: str
    key: ast.Expr
    span: Span


@dataclass
class Clear:
    relation: str
    span: Span


@dataclass
class Dump:
    relation: str | None  # None: every output relation
    span: Span


@dataclass
class Echo:
    text: str  # the raw text between `echo` and `;`, leading white space skipped (as DDlog)
    span: Span


@dataclass
class Exit:
    span: Span


Command = Union[Start, Commit, Rollback, Update, Modify, DeleteKey, Clear, Dump, Echo, Exit]

# ---------------------------------------------------------------------------------------------
# Tree -> commands


class _CommandBuilder(Builder):
    def c_start(self, meta, ch):
        return Start(self.sp(meta))

    def c_commit(self, meta, ch):
        return Commit(ch[0] is not None, self.sp(meta))

    def c_rollback(self, meta, ch):
        return Rollback(self.sp(meta))

    def c_update(self, meta, ch):
        return Update(ch[0], ch[1], ch[2], self.sp(meta))

    def update_kind(self, meta, ch):
        return str(ch[0])

    update_end = update_kind

    def c_modify(self, meta, ch):
        return Modify(str(ch[0]), ch[1], ch[2], self.sp(meta))

    def c_delete_key(self, meta, ch):
        return DeleteKey(str(ch[0]), ch[1], self.sp(meta))

    def json_lit(self, meta, ch):
        text = self.decode_string(ch[1])  # ch[0] is `@json`
        if not isinstance(text, ast.Lit):
            raise self.fail("a @json value is a plain string (no ${...})", text.span)
        return ast.Lit(text.value, "json", self.sp(meta))

    def c_clear(self, meta, ch):
        return Clear(str(ch[0]), self.sp(meta))

    def c_dump(self, meta, ch):
        return Dump(None if ch[0] is None else str(ch[0]), self.sp(meta))

    def c_echo(self, meta, ch):  # not reached: parse_statement reads `echo` itself
        return Echo("", self.sp(meta))

    def c_exit(self, meta, ch):
        return Exit(self.sp(meta))


# ---------------------------------------------------------------------------------------------
# Fast path: `insert R(1, "a", -2.5, true),` with only plain literals is by far the most common
# statement of a data file, and Lark spends ~15 unit reductions on each literal. This regex
# reader builds the very same AST (tests compare the two); anything else goes to Lark.

_NUM = r"-?[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|-?[0-9]+[eE][+-]?[0-9]+|-?[0-9]+"
_LIT = rf'(?:{_NUM}|"[^"\\$]*"|true\b|false\b)'
_NAME = r"(?:[a-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+)"
_FAST_UPDATE = re.compile(
    r"(insert|delete)\s+((?:[a-z_][A-Za-z0-9_]*::)*[A-Z][A-Za-z0-9_]*)\((.*?)\)\s*([,;])", re.S)
_FAST_ARG = re.compile(rf"\s*(?:\.({_NAME})\s*=\s*)?({_LIT})\s*(?:,|\Z)")


def _fast_update(text: str, loc: Located) -> Update | None:
    m = _FAST_UPDATE.fullmatch(text)
    if m is None:
        return None
    args: list[ast.Expr] = []
    names: list[str] = []
    i, end = m.start(3), m.end(3)
    inside = text[:end]  # so that `\Z` in _FAST_ARG is the closing parenthesis
    if inside[i:].strip():
        while i < end:
            a = _FAST_ARG.match(inside, i)
            if a is None:
                return None
            if a[1] is not None:
                names.append(a[1])
            args.append(_fast_literal(a[2], loc.span_at(text, a.start(2), a.end(2))))
            i = a.end()
    if names and (len(names) != len(args) or len(set(names)) != len(names)):
        return None  # mixed or repeated names: Lark reports the error
    atom = ast.Atom(m[2], args, loc.span_at(text, m.start(2), end + 1), names=names or None)
    return Update(m[1], atom, m[4], loc.span_at(text, 0, len(text)))


def _fast_literal(tok: str, span: Span) -> ast.Lit:
    if tok[0] == '"':
        return ast.Lit(tok[1:-1], "string", span)
    if tok == "true" or tok == "false":
        return ast.Lit(tok == "true", "bool", span)
    if "." in tok or "e" in tok or "E" in tok:
        return ast.Lit(float(tok), "float", span)
    if len(tok.lstrip("-+").lstrip("0")) > MAX_DIGITS:
        shown = tok if len(tok) <= 24 else tok[:21] + "..."
        raise DDlogError(f"integer literal {shown} is too large (no integer type has more than "
                         f"{MAX_INT_BITS} bits)", span)
    return ast.Lit(int(tok), "int", span)


# ---------------------------------------------------------------------------------------------
# Splitting a stream into statements


def _skip_blank(text: str, i: int) -> int:
    """Skip whitespace and complete `#` comments. A comment still open at the end of the text
    is left in place (more of it may arrive)."""
    n = len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            nl = text.find("\n", i)
            if nl < 0:
                return i
            i = nl + 1
        else:
            break
    return i


def _is_echo(text: str, i: int) -> bool:
    end = i + 4
    return text.startswith("echo", i) and (end >= len(text) or not
                                           (text[end].isalnum() or text[end] == "_"))


def _statement_end(text: str, i: int) -> int:
    """`text[i]` starts a statement: the index just past its terminator, or -1 if it has not
    arrived yet. `;` always ends a statement (so a shell user always gets an answer); `,` only
    outside brackets; neither counts inside strings or `#` comments; `echo` runs to the `;`."""
    if _is_echo(text, i):
        j = text.find(";", i)
        return -1 if j < 0 else j + 1
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i, _ = scan_string(text, i)
            if i < 0:
                return -1
            continue
        if c == "#":
            nl = text.find("\n", i)
            if nl < 0:
                return -1
            i = nl + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c == ";" or c == "," and depth == 0:
            return i + 1
        i += 1
    return -1


class StatementSplitter:
    """Turns a stream of text, fed in pieces of any size, into commands.

        splitter = StatementSplitter("<stdin>")
        for line in sys.stdin:
            splitter.push(line)
            for command in splitter:     # every statement complete so far
                execute(command)
        splitter.finish()                # ParseError if a statement was left unterminated

    `feed(text)` is `push` followed by `list(self)`. A statement that does not parse raises
    ParseError when it is reached; it is consumed, so iterating again continues after it.
    """

    def __init__(self, file: str = "<stdin>", source: str | None = None):
        self.file = file
        self._source = source  # the whole text, when known (for error messages)
        self._buf = ""
        self._i = 0  # _buf[_i:] is not consumed yet
        self._line = 1  # position of _buf[_i] in the stream
        self._col = 1

    @property
    def pending(self) -> bool:
        """Whether an unfinished statement is buffered (a shell shows a continuation prompt)."""
        return _skip_blank(self._buf, self._i) < len(self._buf)

    def push(self, text: str) -> None:
        self._buf = self._buf[self._i:] + text
        self._i = 0
        if len(self._buf) > MAX_STATEMENT:
            self._buf = ""
            raise DDlogError(f"a statement longer than {MAX_STATEMENT >> 20} MiB of text; is "
                             f"a ';' missing?", Span(self.file, self._line, self._col,
                                                     self._line, self._col + 1))

    def feed(self, text: str) -> list[Command]:
        self.push(text)
        return list(self)

    def __iter__(self) -> Iterator[Command]:
        while True:
            buf = self._buf  # re-read: `push` between two commands compacts the buffer
            start = _skip_blank(buf, self._i)
            try:
                end = _statement_end(buf, start) if start < len(buf) else -1
            except NestingError as err:
                # cut the statement at the next `;`: parsing it reports the nesting, located
                semi = buf.find(";", err.pos)
                end = semi + 1 if semi >= 0 else -1
            self._advance(start)
            if end < 0:
                return
            line, col = self._line, self._col
            self._advance(end)
            yield self._parse(buf[start:end], line, col)

    def finish(self) -> None:
        """End of input: an unterminated statement is an error."""
        start = _skip_blank(self._buf, self._i)
        rest = self._buf[start:]
        self._advance(start)
        line, col = self._line, self._col
        self._buf, self._i, self._line, self._col = "", 0, 1, 1
        # `exit` may end the input without its `;` (as DDlog's own test scripts end): the
        # input ends there anyway
        if rest and not rest.startswith("#") and rest.rstrip() != "exit":
            self._parse(rest, line, col)  # raises: the terminator is missing

    def _advance(self, to: int) -> None:
        """Move the start of the unconsumed text to `to`, keeping track of its position."""
        buf, i = self._buf, self._i
        nl = buf.count("\n", i, to)
        if nl:
            self._line += nl
            self._col = to - buf.rfind("\n", i, to)
        else:
            self._col += to - i
        self._i = to

    def _parse(self, text: str, line: int, col: int) -> Command:
        source = self._source
        if source is None:
            # Enough of the stream for the error's caret line.
            source = "\n" * (line - 1) + " " * (col - 1) + text
        return parse_statement(text, Located(self.file, source, line - 1, col - 1))


def parse_statement(text: str, loc: Located, fast: bool = True) -> Command:
    """Parse one complete statement located by `loc`. `fast=False` skips the regex reader
    (tests compare the two)."""
    if fast:
        update = _fast_update(text, loc)
        if update is not None:
            return update
    if _is_echo(text, 0):
        return _echo(text, loc)
    return parse_text(text, "command", loc, _CommandBuilder, commands_parser(),
                      hash_comments=True)


def _echo(text: str, loc: Located) -> Echo:
    """`echo` takes the raw text up to the `;`, which no token of the grammar describes, so it
    is read here."""
    if not text.endswith(";"):
        end = len(text.rstrip())
        raise loc.error("unexpected end of input, expected one of: ';'", loc.span_at(text, end))
    # DDlog prints the text as written, newlines and trailing spaces included: only the white
    # space after the keyword is skipped (`echo;` prints an empty line).
    return Echo(text[4:-1].lstrip(), loc.span_at(text, 0, len(text)))


def parse_commands(text: str, file: str = "<input>") -> list[Command]:
    """Parse a whole command text (a `.dat` file). Raises ParseError at the first bad
    statement, or at an unterminated last one."""
    splitter = StatementSplitter(file, source=text)
    commands = splitter.feed(text)
    splitter.finish()
    return commands


__all__ = ["Start", "Commit", "Rollback", "Update", "Clear", "Dump", "Echo", "Exit", "Command",
           "StatementSplitter", "parse_commands", "parse_statement"]
