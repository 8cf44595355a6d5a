"""DDlog's FLWOR-style rules ("FTL"): nested `for`, `var .. in`, `if` and `match` around heads,
as one rule per way of reaching a head.

    for (lb in Load_Balancer if lb.up) {
        var a = lb.addr in
        match (lb.protocol) {
            Some{p} -> Flow(lb.ls, "${a}/${p}"),
            None -> {}
        }
    }

is the rule `Flow(lb.ls, "${a}/${p}") :- lb in Load_Balancer(), lb.up, var a = lb.addr,
Some{p} = lb.protocol.` Each piece adds to the body of the rules under it:
- `for (x in R if c)`: `x in R()` (R may be an atom with arguments), then the condition c;
- `var v = e in s`: `var v = e`;
- `if (c) { s1 } else s2`: c for s1's rules, `not c` for s2's;
- `match (e) { p1 -> s1, p2 -> s2 }`: the arm's pattern bound as `p = e` binds it
  (ddlog/syntax/bindings.py), and, after the first arm, the condition that no earlier
  pattern matches (DDlog's arms are tried in order);
- `{ s1; s2 }`: the rules of each; `{}` none.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

from ddlog.errors import Span
from ddlog.syntax import ast
from ddlog.syntax.bindings import binding_items


@dataclass
class For:
    var: str | None  # None: `for (R(..))`, the atom binds its own variables
    source: ast.Atom
    cond: ast.Expr | None
    body: "Stmt"
    span: Span


@dataclass
class Let:
    var: str
    value: ast.Expr
    body: "Stmt"
    span: Span
    annotation: ast.TypeExpr | None = None  # `var v: T = e in ...`


@dataclass
class If:
    cond: ast.Expr
    then: "Stmt"
    other: "Stmt | None"
    span: Span


@dataclass
class Match:
    scrutinee: ast.Expr
    arms: list[tuple[ast.Pattern, "Stmt"]]
    span: Span


@dataclass
class Block:
    items: list["Stmt"] = field(default_factory=list)


Stmt = For | Let | If | Match | Block | ast.Atom


def rules(stmt: Stmt, fresh: Callable[[], str]) -> list[ast.Rule]:
    """The rules `stmt` stands for; `fresh()` names a new variable."""
    out: list[ast.Rule] = []
    _walk(stmt, [], fresh, out)
    return out


def _walk(s: Stmt, body: list[ast.BodyItem], fresh: Callable[[], str],
          out: list[ast.Rule]) -> None:
    # the checker types nodes in place: every rule gets its own copy of what it shares
    def more(*items: ast.BodyItem) -> list[ast.BodyItem]:
        return copy.deepcopy(body + list(items))

    if isinstance(s, ast.Atom):
        out.append(ast.Rule(s, copy.deepcopy(body), s.span))
    elif isinstance(s, For):
        items: list[ast.BodyItem] = [ast.BodyAtom(s.source, False, s.span, record=s.var)]
        if s.cond is not None:
            items.append(ast.BodyCond(s.cond, s.cond.span))
        _walk(s.body, more(*items), fresh, out)
    elif isinstance(s, Let):
        _walk(s.body, more(ast.BodyAssign(s.var, s.value, s.span, s.annotation)), fresh, out)
    elif isinstance(s, If):
        _walk(s.then, more(ast.BodyCond(s.cond, s.cond.span)), fresh, out)
        if s.other is not None:
            negated = ast.UnOp("not", copy.deepcopy(s.cond), s.cond.span)
            _walk(s.other, more(ast.BodyCond(negated, s.cond.span)), fresh, out)
    elif isinstance(s, Match):
        for i, (pattern, arm) in enumerate(s.arms):
            earlier = [_no_match(s.scrutinee, [p for p, _ in s.arms[:i]], pattern.span)] \
                if i else []
            bind = binding_items(copy.deepcopy(pattern), copy.deepcopy(s.scrutinee),
                                 pattern.span, fresh)
            _walk(arm, more(*earlier, *bind), fresh, out)
    else:
        for item in s.items:
            _walk(item, body, fresh, out)


def _no_match(e: ast.Expr, patterns: list[ast.Pattern], span: Span) -> ast.BodyCond:
    """`match (e) { p1 -> false, .., _ -> true }`."""
    arms = [ast.MatchArm(copy.deepcopy(p), ast.Lit(False, "bool", span), span)
            for p in patterns]
    arms.append(ast.MatchArm(ast.PWild(span), ast.Lit(True, "bool", span), span))
    return ast.BodyCond(ast.MatchExpr(copy.deepcopy(e), arms, span), span)
