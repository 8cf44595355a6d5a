"""Binary operators by precedence: the grammar reads `a + b * c == d` as one flat `chain` tree
(operand, operator, operand, ...); `nest` turns it, in place, into the `binop` trees that a
grammar with one rule per precedence level would have built, so the builder and the nesting
check see no difference.

The levels are DDlog's, loosest first: `=>`; `or`; `and`; `|`; `^`; `&`; the comparisons;
`++`; `<<` `>>`; `+` `-`; `*` `/` `%`. All associate to the left, but for the ordering
comparisons (`<`, `<=`, `>`, `>=`), which do not associate: `a < b < c` and `a == b < c` are
errors, `a == b == c` is `(a == b) == c`. Prefix operators (`not`, `-`, `~`, `&`) bind tighter
than all of them, in the grammar.
"""
from __future__ import annotations

from lark import Token, Tree
from lark.tree import Meta

from ddlog.errors import ParseError
from ddlog.syntax.scanner import Located

_LEVEL = {"IMPLIES": 1, "OR": 2, "AND": 3, "BAR": 4, "CARET": 5, "AMP": 6,
          "EQ": 7, "NE": 7, "LT": 7, "LE": 7, "GT": 7, "GE": 7,
          "CONCAT": 8, "SHL": 9, "SHR": 9, "PLUS": 10, "MINUS": 10,
          "STAR": 11, "SLASH": 11, "PERCENT": 11}
_COMPARISON = 7
_ORDERING = {"LT", "LE", "GT", "GE"}  # the comparisons that do not associate


def nest(chain: Tree, loc: Located) -> None:
    """Rebuild the `chain` tree `chain` as nested `binop` trees (itself becoming the outermost
    one, keeping its position). The recursion is bounded by the number of levels, however
    long the chain."""
    items = _shifts(chain.children, loc)
    operands, ops = items[0::2], items[1::2]
    at = 0  # the next operand; the operator after operand k is ops[k]

    def climb(floor: int):
        nonlocal at
        left = operands[at]
        at += 1
        while at - 1 < len(ops) and _LEVEL[ops[at - 1].type] >= floor:
            op = ops[at - 1]
            level = _LEVEL[op.type]
            left = _tree("binop", [left, op, climb(level + 1)])
            after = ops[at - 1] if at - 1 < len(ops) else None
            if level == _COMPARISON and after is not None and _LEVEL[after.type] == level \
                    and (op.type in _ORDERING or after.type in _ORDERING):
                raise _unexpected(after, loc, "comparisons do not associate (put one in "
                                              "parentheses)")
        return left

    top = climb(0)
    chain.data, chain.children = top.data, top.children


def _shifts(items: list, loc: Located) -> list:
    """`items` with each `>>` made one SHR token: the grammar reads it as two `>` (so that
    the `>>` closing nested type arguments, `Vec<Set<u8>>`, is two closers wherever a type
    may be followed by an operator, as in an ascription `e: T`); they must touch."""
    if not any(isinstance(x, Token) and x.type == "GT" and isinstance(y, Token) and
               y.type == "GT" for x, y in zip(items, items[1:])):
        return items
    out: list = []
    for x in items:
        last = out[-1] if out else None
        if (isinstance(x, Token) and x.type == "GT" and isinstance(last, Token)
                and last.type == "GT"):
            if last.end_pos != x.start_pos:
                raise _unexpected(x, loc, "expected an operand")
            out[-1] = Token.new_borrow_pos("SHR", ">>", last)
            out[-1].end_line, out[-1].end_column, out[-1].end_pos = \
                x.end_line, x.end_column, x.end_pos
        else:
            out.append(x)
    return out


def _tree(data: str, children: list) -> Tree:
    """A tree spanning its first child to its last."""
    first, last = _meta(children[0]), _meta(children[-1])
    meta = Meta()
    meta.empty = False
    meta.line, meta.column, meta.start_pos = first.line, first.column, first.start_pos
    meta.end_line, meta.end_column, meta.end_pos = last.end_line, last.end_column, last.end_pos
    return Tree(data, children, meta)


def _meta(x):
    return x if isinstance(x, Token) else x.meta


def _unexpected(tok: Token, loc: Located, why: str) -> ParseError:
    return loc.error(f"unexpected '{tok}': {why}",
                     loc.span(tok.line, tok.column, tok.end_line, tok.end_column))
