"""Scanning program and command text before (and beside) the LALR lexer: strings with their
`${...}` interpolations, comments (`//`, nested `/* */`, or `#` in the command language), and
positions (`Located` maps a piece of text to absolute lines and columns, for the pieces that
are parsed on their own: interpolations and statements of a command stream).

The scanner is iterative, so nesting costs no Python stack; interpolations nested deeper than
MAX_NESTING are a NestingError that callers report at its position.
"""
from __future__ import annotations

import re

from ddlog.errors import ParseError, Span
from ddlog.limits import MAX_NESTING

class NestingError(Exception):
    """String interpolations nested deeper than MAX_NESTING, at offset `pos` of the text."""

    def __init__(self, pos: int):
        super().__init__(pos)
        self.pos = pos


def scan_string(text: str, i: int) -> tuple[int, list[tuple[int, int]]]:
    """`text[i]` is `"`. Returns the index just past the closing quote and the (start, end) of
    the body of every `${...}` in the string, or (-1, []) when the string does not end.
    Raises NestingError when interpolations nest too deeply."""
    interps: list[tuple[int, int]] = []
    end = _scan(text, i + 1, ["str"], interps)
    return (end, interps) if end >= 0 else (-1, [])


def scan_interpolation(text: str, i: int) -> int:
    """`i` is just after `${`: the index of the matching `}` (nested braces, strings and
    `/* */` comments are skipped), or -1."""
    end = _scan(text, i, [1], [])
    return end - 1 if end >= 0 else -1


def _scan(text: str, j: int, stack: list, interps: list[tuple[int, int]]) -> int:
    """The scanner behind scan_string and scan_interpolation, iterative so that nesting costs
    no Python stack. `stack` holds "str" for an open string and, for an open `${`, the depth of
    braces inside it; returns the index just past the construct that empties the stack, or -1.
    Top-level interpolation bodies of an outer string are added to `interps`."""
    n = len(text)
    starts: list[int] = []  # body start of each open interpolation
    while j < n:
        top = stack[-1]
        c = text[j]
        if top == "estr":  # a string inside an interpolation, written `\"...\"`
            if c == "\\":
                # k backslashes and a quote are, once the outer string's escapes are read,
                # (k-1)/2 backslashes and a quote: the end when that quote is not escaped
                k = _run(text, j)
                if j + k < n and text[j + k] == '"':
                    if k % 2 == 1 and (k - 1) // 2 % 2 == 0:
                        stack.pop()
                    j += k + 1
                else:
                    j += k + k % 2
                continue
            j += 1
            continue
        if top == "str":
            if c == "\\":
                j = gap_end(text, j) if j + 1 < n and text[j + 1] in _BLANKS else j + 2
                continue
            if c == '"':
                stack.pop()
                j += 1
                if not stack:
                    return j
                continue
            if c == "$" and text.startswith("${", j):
                if len(starts) >= MAX_NESTING:
                    raise NestingError(j)
                stack.append(1)
                starts.append(j + 2)
                j += 2
                continue
            j += 1
            continue
        # inside an interpolation (or scan_interpolation's body)
        if c == "/" and text.startswith("/*", j):
            j = _comment_end(text, j)
            if j < 0:
                return -1
            continue
        if c == "[" and text.startswith("[|", j):  # a raw string: skipped whole
            close = text.find("|]", j + 2)
            if close < 0:
                return -1
            j = close + 2
            continue
        if c == '"':
            stack.append("str")
        elif c == "\\" and j + 1 < n and text[j + 1] == '"':
            stack.append("estr")
            j += 1
        elif c == "{":
            stack[-1] = top + 1
        elif c == "}":
            if top == 1:
                stack.pop()
                if starts:
                    start = starts.pop()
                    if len(stack) == 1 and stack[0] == "str":
                        interps.append((start, j))
                if not stack:
                    return j + 1
            else:
                stack[-1] = top - 1
        j += 1
    return -1


_BLANKS = " \t\r\n"


def unescaped_quotes(body: str) -> str:
    """The body of a `${...}` with its strings written the DDlog way, between escaped quotes
    (`"${\"a\" ++ x}"`: the quotes belong to the outer string's text), as plain strings: the
    outer string's escapes of quotes and backslashes read once, as DDlog reads the whole
    string before its interpolations. A quote of the body's own level keeps its place (an
    opening `\"` becomes ` "`, a closing one `" `); deeper ones, inside those strings, shorten
    the text. Strings written with plain quotes are kept whole, escapes and all."""
    if '\\"' not in body:
        return body
    out: list[str] = []
    j, n, inside = 0, len(body), False
    while j < n:
        c = body[j]
        if c == "\\":
            k = _run(body, j)
            quote = j + k < n and body[j + k] == '"'
            if quote and k == 1:  # a string of the body's level opens or closes
                out.append('" ' if inside else ' "')
                inside = not inside
            elif quote:  # an odd k inside such a string: `\\\"` is `\"` there
                out.append("\\" * (k // 2) + '"')
            else:  # `\\` is `\`; a last lone backslash escapes the next character
                out.append("\\" * (k // 2) + ("\\" + body[j + k:j + k + 1] if k % 2 else ""))
            j += k + (1 if quote or k % 2 else 0)
        elif c == "[" and not inside and body.startswith("[|", j):
            # a raw string: the outer string's escapes are read in it too
            end = body.find("|]", j + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r'\\([\\"])', r"\1", body[j:end]))
            j = end
        elif c == '"' and not inside:  # a plain string: copied whole, escapes and all
            end = _scan(body, j + 1, ["str"], [])
            end = n if end < 0 else end
            out.append(body[j:end])
            j = end
        else:
            out.append(c)
            j += 1
    return "".join(out)


def _run(text: str, j: int) -> int:
    """The number of backslashes from text[j] on."""
    k = j
    while k < len(text) and text[k] == "\\":
        k += 1
    return k - j


def gap_end(text: str, j: int) -> int:
    """`text[j]` is a backslash followed by a blank: a string gap, as DDlog's (Haskell's)
    string literals have them, `\\<blanks>\\`, which stands for nothing; the closing
    backslash may be left out (as Rust continues a string after a line's end). The index
    after the gap."""
    j += 1
    while j < len(text) and text[j] in _BLANKS:
        j += 1
    return j + 1 if j < len(text) and text[j] == "\\" else j


_NOT_NEWLINE = re.compile(r"[^\n]")


def _blank(s: str) -> str:
    return _NOT_NEWLINE.sub(" ", s)


def line_col(text: str, i: int) -> tuple[int, int]:
    """1-based line and column of offset `i`."""
    line = text.count("\n", 0, i) + 1
    return line, i - (text.rfind("\n", 0, i) + 1) + 1


class Located:
    """Maps positions in a piece of text to absolute ones: the piece starts at line
    `line_off + 1`, and its first line at column `col_off + 1` (for interpolations and for
    statements of the command language, which are parsed on their own)."""

    def __init__(self, file: str, source: str, line_off: int = 0, col_off: int = 0,
                 depth: int = 0):
        self.file = file
        self.source = source
        self.line_off = line_off
        self.col_off = col_off
        self.depth = depth  # nesting levels around this piece (an interpolation's string)

    def pos(self, line: int, col: int) -> tuple[int, int]:
        return line + self.line_off, col + (self.col_off if line == 1 else 0)

    def span(self, line: int, col: int, end_line: int, end_col: int) -> Span:
        l1, c1 = self.pos(line, col)
        l2, c2 = self.pos(end_line, end_col)
        return Span(self.file, l1, c1, l2, c2)

    def span_at(self, text: str, i: int, j: int | None = None) -> Span:
        """The span of `text[i:j]` (one character when `j` is None)."""
        l1, c1 = line_col(text, i)
        l2, c2 = line_col(text, i + 1 if j is None else j)
        return self.span(l1, c1, l2, c2)

    def error(self, message: str, span: Span) -> ParseError:
        return ParseError(message, span, self.source)


def mask(text: str, loc: Located, hash_comments: bool = False) -> str:
    """`text` with comments, interpolation bodies and the text of raw strings (`[|...|]`)
    replaced by spaces (newlines kept)."""
    out: list[str] = []
    special = _SPECIAL[hash_comments]
    last = 0  # text[last:i] is copied unchanged
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            try:
                end, interps = scan_string(text, i)
            except NestingError as err:
                raise loc.error(f"string interpolations nested too deeply (more than "
                                f"{MAX_NESTING} levels)", loc.span_at(text, err.pos)) from None
            if end < 0:
                raise loc.error("unterminated string literal", loc.span_at(text, i))
            for a, b in interps:
                out.append(text[last:a])
                out.append(_blank(text[a:b]))
                last = b
            i = end
        elif c == "[" and text.startswith("[|", i):  # a raw string: its text is no code
            j = text.find("|]", i + 2)
            if j < 0:
                raise loc.error("unterminated raw string `[|...|]`", loc.span_at(text, i, i + 2))
            out.append(text[last:i + 2])
            out.append(_blank(text[i + 2:j]))
            i = last = j
        elif hash_comments and c == "#" or not hash_comments and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[last:i])
            out.append(" " * (j - i))
            i = last = j
        elif not hash_comments and text.startswith("/*", i):
            j = _comment_end(text, i)
            if j < 0:
                raise loc.error("unterminated comment", loc.span_at(text, i, i + 2))
            out.append(text[last:i])
            out.append(_blank(text[i:j]))
            i = last = j
        else:  # skip to the next character that may start a string or a comment
            found = special.search(text, i + 1)
            i = found.start() if found else n
    out.append(text[last:])
    return "".join(out)


_SPECIAL = {False: re.compile(r'["/\[]'), True: re.compile(r'["#\[]')}


def _comment_end(text: str, i: int) -> int:
    """`text[i:]` starts with `/*`: the index past the matching `*/` (comments nest), or -1."""
    depth = 0
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return -1


