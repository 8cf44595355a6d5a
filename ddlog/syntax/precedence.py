"""Binary operators by precedence: the grammar reads `a + b * c == d` as one flat `chain` tree
(operand, operator, operand, ...); `nest` turns it, in place, into the `binop` and `unop` trees
that a grammar with one rule per precedence level would have built, so the builder and the
nesting check see no difference.

Levels, loosest first: `or`; `and`; `not` (a prefix: `not a == b` is `not (a == b)`); the
comparisons, which do not associate (`a < b < c` is an error); `|`; `^`; `&`; `<<` `>>`;
`+` `-` `++`; `*` `/` `%`. The others associate to the left. (The grammar lets a `not` start
only the chain or an operand of `and` and `or`.)
"""
from __future__ import annotations

from lark import Token, Tree
from lark.tree import Meta

from ddlog.errors import ParseError
from ddlog.syntax.scanner import Located

_LEVEL = {"OR": 1, "AND": 2,
          "EQ": 4, "NE": 4, "LT": 4, "LE": 4, "GT": 4, "GE": 4,
          "BAR": 5, "CARET": 6, "AMP": 7, "SHL": 8, "SHR": 8,
          "PLUS": 9, "MINUS": 9, "CONCAT": 9, "STAR": 10, "SLASH": 10, "PERCENT": 10}
_COMPARISON = 4  # the level that does not associate; a `not` takes what binds tighter


def nest(chain: Tree, loc: Located) -> None:
    """Rebuild the `chain` tree `chain` as nested `binop`/`unop` trees (itself becoming the
    outermost one, keeping its position). The recursion is bounded by the number of levels,
    however long the chain."""
    items = chain.children
    operands, ops = items[0::2], items[1::2]
    at = 0  # the next operand; the operator after operand k is ops[k]

    def operand():
        nonlocal at
        x, nots = operands[at], []
        while isinstance(x, Tree) and x.data == "unop" and _is(x.children[0], "NOT"):
            nots.append(x.children[0])
            x = x.children[1]
        if not nots:
            at += 1
            return x
        # (the grammar lets a `not` start only the chain or an operand of `and` and `or`)
        operands[at] = x
        x = climb(_COMPARISON)
        for tok in reversed(nots):
            x = _tree("unop", [tok, x])
        return x

    def climb(floor: int):
        left = operand()
        while at - 1 < len(ops) and _LEVEL[ops[at - 1].type] >= floor:
            op = ops[at - 1]
            level = _LEVEL[op.type]
            left = _tree("binop", [left, op, climb(level + 1)])
            if level == _COMPARISON and at - 1 < len(ops) and \
                    _LEVEL[ops[at - 1].type] == _COMPARISON:
                raise _unexpected(ops[at - 1], loc, "comparisons do not associate (put one "
                                                    "in parentheses)")
        return left

    top = climb(0)
    chain.data, chain.children = top.data, top.children


def _is(x, kind: str) -> bool:
    return isinstance(x, Token) and x.type == kind


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
