"""A block's statements as expressions: `{ var y = x; y.1 = 5; y.0.push(7); y }` becomes
`Let(y, x, Let(y, With(y, "1", 5), Let(y, With(y, "0", push(y.0, 7)), y)))`.

DDlog's statements mutate variables; the dialect's values are immutable, so each statement
rebinds the variable it changes:
- `var x = e;` / `var x: T = e;` binds x for the rest of the block;
- `p = e;`, where the path p is a variable followed by fields (`x`, `x.f`, `x.1.g`), rebinds
  the variable to a copy with that field replaced (`With`);
- `p.m(args);` for a mutating method m of DDlog's library (`push`, `retain`, `sort`, ...) is
  `p = p.m(args);`: the dialect defines each of them as a function returning the changed
  collection (ddlog/builtins/).
- `for (x in v) { body }` is a fold over v whose state is the variables the body changes;
- `if (c) { ... } [else { ... }]` rebinds the variables either branch changes to an `if`
  expression over their values after each branch;
- `var x = m.remove(k);` binds x to the value the key had and removes it from m (DDlog's
  Map `remove`); `v.swap_nth(i, x);` trades v's element i for x's value;
- `return e;` makes `e` the function's value: the statements after it are dropped, and an
  `if` statement with a branch that returns becomes an `if` expression whose other branch
  goes on with the rest of the block. `return e` is also an expression, in the branches of an
  `if` or `match` giving a value (`var p = match (x) { 0 -> return "none", n -> n };`): the
  rest of the block moves into the branches that do not return (`_tail`).
Any other statement would have no effect, and is an error.

A block that assigns a variable declared outside it (`{ n = n + 1 }`) means something only
where that variable lives, and one that returns only as a function's body, so either stays a
`PendingBlock` until the block around it takes it in as the branch of an `if` statement, or
the function takes it as its body; one left anywhere else is refused by the type checker.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Callable

from ddlog.errors import DDlogError, Span
from ddlog.syntax import ast

Fail = Callable[[str, Span], DDlogError]  # the parser's error, located in its text

# DDlog's methods that change their receiver (`mut` first parameter).
MUTATING = frozenset({
    "push", "push_imm", "retain", "sort", "sort_by", "dedup", "reverse", "append", "resize",
    "truncate", "update_nth", "insert", "remove", "clear", "extend", "map_in_place",
})


@dataclass
class VarStmt:
    name: str
    annotation: ast.TypeExpr | None
    value: ast.Expr
    span: Span


@dataclass
class AssignStmt:
    target: ast.Expr
    value: ast.Expr
    span: Span


@dataclass
class ExprStmt:
    expr: ast.Expr
    span: Span


@dataclass
class ForStmt:
    var: str
    iterable: ast.Expr
    body: list["Statement"]
    span: Span
    # the enclosing function's result type, which a `return` in the body gives (function_body)
    result: ast.TypeExpr | None = None


@dataclass
class IfStmt:
    """`if (c) { .. } else { .. }` used for its assignments; `other` is None without `else`,
    an IfStmt for `else if` without a final `else`."""

    cond: ast.Expr
    then: ast.Expr
    other: "ast.Expr | IfStmt | None"
    span: Span


@dataclass
class ReturnStmt:
    value: ast.Expr | None  # None: `return;`, the value ()
    span: Span


@dataclass
class LoopExit:
    """`continue` or `break` (`kind`) in a `for` loop's body."""

    kind: str
    span: Span


Statement = VarStmt | AssignStmt | ExprStmt | ForStmt | IfStmt | ReturnStmt | LoopExit
_STATEMENTS = (VarStmt, AssignStmt, ExprStmt, ForStmt, IfStmt, ReturnStmt, LoopExit)


@dataclass
class Try(ast.Node):
    """`e?` on an Option: its value when Some, else the function returns None
    (function_body makes it a `match` that returns)."""

    expr: ast.Expr
    span: Span
    ty: None = None


@dataclass
class Return(ast.Node):
    """`return e` used as a value; `block` moves it out to where the function's value is
    decided (`_tail`), and the type checker refuses one left elsewhere."""

    value: ast.Expr | None
    span: Span
    ty: None = None


@dataclass
class PendingBlock(ast.Node):
    """A block assigning variables declared outside it (`assigns`), or returning from the
    function; see the module's doc. `value` is its value when it ends without a statement."""

    statements: list[Statement]
    assigns: list[str]
    value: ast.Expr
    span: Span
    ty: None = None

    @property
    def returns(self) -> bool:
        return _returns(self.statements)


def destructured(s: Statement, fresh: Callable[[], str]) -> list[Statement]:
    """`(var a, b, _) = e;`: the parts of a tuple declared (`var a`), assigned (`b`, `b.f`) or
    skipped (`_`) from e, as `var __t = e; var a = __t.0; b = __t.1;`; other statements as
    they are."""
    if isinstance(s, AssignStmt) and isinstance(s.target, ast.StructLit):
        return _destructured_struct(s, fresh)
    if not (isinstance(s, AssignStmt) and isinstance(s.target, ast.TupleLit)):
        return [s]
    tmp = fresh()
    out: list[Statement] = [VarStmt(tmp, None, s.value, s.span)]
    for i, part in enumerate(s.target.items):
        value = ast.FieldAccess(ast.Var(tmp, part.span), str(i), part.span)
        if isinstance(part, ast.VarDecl):
            out.append(VarStmt(part.name, None, value, part.span))
        elif not isinstance(part, ast.Wildcard):
            out += destructured(AssignStmt(part, value, part.span), fresh)
    return out


def _destructured_struct(s: AssignStmt, fresh: Callable[[], str]) -> list[Statement]:
    """`C{.f = var a, var b} = e;`: a's and b's values from the one arm of a match, `var __t =
    match (e) { C{.f = a, b} -> (a, b) }; var a = __t.0; ..` (the type checker requires C to
    be its type's only constructor). Parts that are not `var x`, `_` or such shapes are left
    for the assignment's own error."""
    def pattern(e: ast.Expr) -> ast.Pattern | None:
        if isinstance(e, ast.Wildcard):
            return ast.PWild(e.span)
        if isinstance(e, ast.VarDecl):
            return ast.PVar(e.name, e.span)
        parts = [x for _, x in e.fields] if isinstance(e, ast.StructLit) else \
            e.items if isinstance(e, ast.TupleLit) else None
        inner = [pattern(x) for x in parts] if parts is not None else None
        if inner is None or any(p is None for p in inner):
            return None
        if isinstance(e, ast.TupleLit):
            return ast.PTuple(inner, e.span)
        return ast.PCtor(e.ctor, [(n, p) for (n, _), p in zip(e.fields, inner)], e.span)
    shape = pattern(s.target)
    if shape is None:
        return [s]
    sp = s.span
    names = [v.name for v in shape.find(ast.PVar)]
    values: list[ast.Expr] = [ast.Var(n, sp) for n in names]
    one = values[0] if len(values) == 1 else ast.TupleLit(values, sp)
    match = ast.MatchExpr(s.value, [ast.MatchArm(shape, one, sp)], sp)
    if len(names) == 1:
        return [VarStmt(names[0], None, match, sp)]
    tmp = fresh()
    return [VarStmt(tmp, None, match, sp), *(
        VarStmt(n, None, ast.FieldAccess(ast.Var(tmp, sp), str(i), sp), sp)
        for i, n in enumerate(names))]


def parsed_block(statements: list[Statement], span: Span, fail: Fail) -> ast.Expr:
    """What the parser makes of `{ s1; ...; sn }` (sn without its `;`, or None): the block's
    expression, or a PendingBlock when it assigns variables declared outside it."""
    *statements, last = statements
    result: ast.Expr = ast.TupleLit([], span)
    if isinstance(last, ExprStmt) and not _is_mutation(last.expr):
        result = last.expr  # the block's value
    elif last is not None:
        statements.append(last)
    assigns = _free(statements)
    if assigns or _returns(statements) or _has_return(result) or _exits(statements):
        return PendingBlock(statements, assigns, result, span)
    return block(statements, result, fail)


def function_body(body: ast.Expr, fail: Fail, result: ast.TypeExpr | None = None) -> ast.Expr:
    """A function's (or closure's) body, of the declared `result` type: a block that returns
    is complete here, and each `e?` a `match (e) { Some{v} -> v, None -> return None }`."""
    body = _tries(body, result, fail)
    if result is not None:
        def mark(x):
            if isinstance(x, ForStmt):
                x.result = result
            return None
        _rewrite(body, mark)
    if isinstance(body, PendingBlock) and not body.assigns:
        body = block(body.statements, body.value, fail)
    return _tail(body, lambda value: value, fail, at_function=True)


def changing_closure(params: list[str], body: ast.Expr, span: Span, fail: Fail,
                     result: ast.TypeExpr | None = None) -> tuple[ast.Expr, str | None]:
    """A closure's body, and the parameter it changes when it assigns one (`|k, v| v.x = e`,
    or a block doing so): DDlog's `mut` parameter, whose new value becomes the body's value,
    `{ v.x = e; v }`."""
    if not isinstance(body, PendingBlock) or not body.assigns:
        return function_body(body, fail, result), None
    outside = [m for m in body.assigns if m not in params]
    if outside:
        raise fail(f"a closure cannot assign '{outside[0]}', a variable declared outside it",
                   assignment_span(body.statements, outside[0]))
    if len(body.assigns) > 1 or body.returns:
        raise fail("a closure can change one of its parameters, and then returns nothing", span)
    name = body.assigns[0]
    return block(body.statements, ast.Var(name, span), fail), name


def assigning(target: ast.Expr, value: ast.Expr, span: Span, fail: Fail) -> ast.Expr:
    """The body of `|k, v| v.x = e`: the block `{ v.x = e }`."""
    return parsed_block([AssignStmt(target, value, span), None], span, fail)


def statement(e: ast.Expr, span: Span) -> Statement:
    """An expression used as a statement: an `if` whose branches assign is an if statement."""
    if isinstance(e, ast.IfExpr) and (_is_pending(e.then) or _is_pending(e.other)):
        return IfStmt(e.cond, e.then, e.other, span)
    if isinstance(e, Return):
        return ReturnStmt(e.value, span)
    return ExprStmt(e, span)


def block(statements: list[Statement], result: ast.Expr, fail: Fail) -> ast.Expr:
    """The expression a block `{ statements; result }` stands for."""
    out = result
    for s in reversed(statements):
        if isinstance(s, (VarStmt, AssignStmt, ExprStmt)) and _has_return(s):
            out = _returning(s, out, fail)
        elif isinstance(s, VarStmt) and _takes_out(s.value):
            # `var x = m.remove(k);`: x is the value the key had, and m loses the key
            e = s.value
            out = _assign(copy.deepcopy(e.args[0]), e, out, s.span, fail)
            value = ast.Call("map_remove", copy.deepcopy(e.args), e.span, method=True)
            out = ast.Let(s.name, value, out, s.span, annotation=s.annotation)
        elif isinstance(s, VarStmt):
            out = ast.Let(s.name, s.value, out, s.span, annotation=s.annotation)
        elif isinstance(s, AssignStmt):
            out = _assign(s.target, s.value, out, s.span, fail)
        elif isinstance(s, ForStmt):
            out = _loop(s, out, fail)
        elif isinstance(s, IfStmt):
            out = _if(s, out, fail)
        elif isinstance(s, ReturnStmt):
            out = Return(s.value, s.span)  # drops the rest
        elif isinstance(s, LoopExit):
            raise fail(f"`{s.kind}` is allowed in a `for` loop's body only", s.span)
        else:
            e = s.expr
            if _is_swap(e):
                out = _swap(e, out, s.span, fail)
                continue
            if not _is_mutation(e):
                # checked, and its value dropped, as DDlog does (`a; b`)
                out = ast.Let(f"__drop{s.span.line}_{s.span.col}", e, out, s.span)
                continue
            out = _assign(copy.deepcopy(e.args[0]), e, out, s.span, fail)
    return out


def _returning(s: VarStmt | AssignStmt | ExprStmt, rest: ast.Expr, fail: Fail) -> ast.Expr:
    """A statement whose value may return from the function: `rest` (a copy of it) goes on
    in each branch of that value that does not return."""
    def go_on(value: ast.Expr) -> ast.Expr:
        if isinstance(s, VarStmt):
            return ast.Let(s.name, value, copy.deepcopy(rest), s.span, annotation=s.annotation)
        if isinstance(s, AssignStmt):
            return _assign(copy.deepcopy(s.target), value, copy.deepcopy(rest), s.span, fail)
        return copy.deepcopy(rest)  # the value of an expression statement is dropped
    value = s.expr if isinstance(s, ExprStmt) else s.value
    return _tail(value, go_on, fail)


def _tail(e: ast.Expr, go_on: Callable[[ast.Expr], ast.Expr], fail: Fail,
          at_function: bool = False) -> ast.Expr:
    """`e`, whose `return`s sit in the branches of its `if`s and `match`es, with `go_on`
    applied to the values of the branches that do not return: `var x = if (c) a else return
    r; rest` is `if (c) { var x = a; rest } else return r`. The `return`s stay until the
    function's body (`at_function`) takes their values as its own."""
    if not _has_return(e):
        return go_on(e)
    if isinstance(e, Return):
        if not at_function:
            return e
        return e.value if e.value is not None else ast.TupleLit([], e.span)

    def tail(branch: ast.Expr) -> ast.Expr:
        return _tail(branch, go_on, fail, at_function)
    if isinstance(e, ast.IfExpr) and not _has_return(e.cond):
        return ast.IfExpr(e.cond, tail(e.then), tail(e.other), e.span)
    if isinstance(e, ast.MatchExpr) and not _has_return(e.scrutinee):
        arms = [ast.MatchArm(a.pattern, tail(a.body), a.span) for a in e.arms]
        return ast.MatchExpr(e.scrutinee, arms, e.span)
    if isinstance(e, ast.Let) and not _has_return(e.value):
        return ast.Let(e.var, e.value, tail(e.body), e.span,
                       annotation=e.annotation, rebind=e.rebind)
    if isinstance(e, PendingBlock) and not e.assigns:
        return tail(block(e.statements, e.value, fail))
    return tail(_lift(e, fail))


def _tries(body: ast.Expr, result: ast.TypeExpr | None, fail: Fail) -> ast.Expr:
    """`body` with its `e?` (outside closures in it) made into matches that return None."""
    counter = iter(range(1 << 30))

    def visit(node: object) -> object | None:
        if not isinstance(node, Try):
            return None
        kind = result.name.rsplit("::", 1)[-1] if isinstance(result, ast.TypeName) else \
            _kind_of_value(body) if result is None else None
        if kind not in ("Option", "Result"):
            raise fail("`?` returns None or an Err from the function: it is allowed in a "
                       "function or closure declared to return an Option<..> or a Result<..>",
                       node.span)
        sp = node.span
        v = f"__try{sp.line}_{sp.col}_{next(counter)}"
        if kind == "Option":
            some = ast.MatchArm(ast.PCtor("Some", [(None, ast.PVar(v, sp))], sp),
                                ast.Var(v, sp), sp)
            none = ast.MatchArm(ast.PCtor("None", [], sp),
                                Return(ast.StructLit("None", [], sp), sp), sp)
            return ast.MatchExpr(_rewrite(node.expr, visit), [some, none], sp)
        e = v + "_err"  # `Err{e}` goes on as the function's Err, of its own error type
        ok = ast.MatchArm(ast.PCtor("Ok", [(None, ast.PVar(v, sp))], sp), ast.Var(v, sp), sp)
        err = ast.MatchArm(ast.PCtor("Err", [(None, ast.PVar(e, sp))], sp),
                           Return(ast.StructLit("Err", [(None, ast.Var(e, sp))], sp), sp), sp)
        return ast.MatchExpr(_rewrite(node.expr, visit), [ok, err], sp)
    return _rewrite(body, visit)  # (a closure's own `?`s were made when it was parsed)


def _kind_of_value(e: ast.Expr) -> str | None:
    """"Result" or "Option" when the value of a closure without a result type is written as
    one (`|s| Ok{parse(s)?}`), the kind of what its `?` returns."""
    v = written_value(e)
    if not isinstance(v, ast.StructLit):
        return None
    name = v.ctor.rsplit("::", 1)[-1]
    return {"Ok": "Result", "Err": "Result", "Some": "Option", "None": "Option"}.get(name)


def written_value(e: ast.Expr) -> ast.Expr:
    """The expression that writes `e`'s value: through blocks, `var .. in` and an `if`'s
    first branch (`{ var y = x; Ok{y} }` is `Ok{y}`)."""
    while True:
        if isinstance(e, ast.Let):
            e = e.body
        elif isinstance(e, PendingBlock):
            e = e.value
        elif isinstance(e, ast.IfExpr):
            e = e.then
        else:
            return e


def _rewrite(node, visit: Callable[[object], object | None]):
    """`node` with what `visit` replaces in it, from the top: `visit(x)` is x's replacement,
    or None to look inside x (lists, tuples, syntax nodes, statements; not closures)."""
    out = visit(node)
    if out is not None:
        return out
    if isinstance(node, (list, tuple)):  # a struct literal's fields are (name, value)
        return type(node)(_rewrite(x, visit) for x in node)
    if isinstance(node, (ast.Node, *_STATEMENTS)) and not isinstance(node, ast.Lambda):
        for f in dataclasses.fields(node):
            setattr(node, f.name, _rewrite(getattr(node, f.name), visit))
    return node


def _lift(e: ast.Expr, fail: Fail) -> ast.Expr:
    """`e`, where a `return` sits in a branch of an `if` or `match` that is evaluated in any
    case (an operand, an argument, a field: `x? * 100`), with that `if` or `match` taken
    out around it: `match (a) { Some{v} -> v * 100, None -> return None }`."""
    inner = _branching(e)
    if inner is None:
        raise fail("`return` is allowed as a statement and as the value of a branch of an "
                   "`if` or `match`, not inside an expression", _return_span(e))

    def plug(x: ast.Expr) -> ast.Expr:
        if isinstance(x, Return):
            return x  # the rest of `e` is not evaluated
        return copy.deepcopy(e, {id(inner): x})  # e with `inner` replaced by x
    if isinstance(inner, ast.IfExpr):
        return ast.IfExpr(inner.cond, plug(inner.then), plug(inner.other), inner.span)
    return ast.MatchExpr(inner.scrutinee, [ast.MatchArm(a.pattern, plug(a.body), a.span)
                                           for a in inner.arms], inner.span)


def _branching(e: ast.Expr) -> ast.Expr | None:
    """The first `if` or `match` with a `return` in a branch, among the parts of `e` that are
    evaluated in any case (not in a branch, a closure or after a variable's binding)."""
    if isinstance(e, (ast.IfExpr, ast.MatchExpr)):
        head = e.cond if isinstance(e, ast.IfExpr) else e.scrutinee
        return _branching(head) if _has_return(head) else e
    if isinstance(e, (ast.Lambda, ast.Let, PendingBlock)) or not _has_return(e):
        return None
    parts: list = []
    for f in dataclasses.fields(e):
        x = getattr(e, f.name)
        parts += x if isinstance(x, list) else [x]
    for x in parts:
        if isinstance(x, tuple):  # a struct literal's (name, value) fields
            x = x[1]
        if isinstance(x, ast.Node) and _has_return(x):
            return _branching(x)
    return None


def _has_return(node: object) -> bool:
    return _return_span(node) is not None


def _return_span(node: object) -> Span | None:
    """Where `node` (an expression or statement) has a `return` of the function it is in."""
    if isinstance(node, (Return, ReturnStmt, Try)):
        return node.span
    if isinstance(node, ast.Lambda):
        return None  # a closure's own `return`s (its body has none left: function_body)
    if isinstance(node, (list, tuple)):  # a struct literal's fields are (name, value)
        items: list = list(node)
    elif dataclasses.is_dataclass(node):
        items = [getattr(node, f.name) for f in dataclasses.fields(node)]
    else:
        return None
    return next((sp for sp in map(_return_span, items) if sp is not None), None)


def loop_pattern(pattern: ast.Pattern, body: list[Statement],
                 fail: Fail) -> tuple[str, list[Statement]]:
    """`for ((a, _) in c) { body }`: the loop's variable, and its body starting with
    `var a = x.0;` for the pattern's variables."""
    if isinstance(pattern, ast.PVar):
        return pattern.name, body
    sp = pattern.span
    var = f"__for{sp.line}_{sp.col}"
    binds: list[Statement] = []

    def take(p: ast.Pattern, value: ast.Expr) -> None:
        if isinstance(p, ast.PVar):
            binds.append(VarStmt(p.name, None, value, p.span))
        elif isinstance(p, ast.PTuple):
            for i, item in enumerate(p.items):
                take(item, ast.FieldAccess(copy.deepcopy(value), str(i), item.span))
        elif not isinstance(p, ast.PWild):
            raise fail("a `for` loop's pattern is a variable, `_`, or a tuple of them", p.span)
    take(pattern, ast.Var(var, sp))
    return var, binds + body


def _is_mutation(e: ast.Expr) -> bool:
    """`v.push(x)`, or `push(v, x)` / ddlog_std's `vec_push(v, x)` (a `mut` parameter), or
    qualified by a library module (`s.TS::insert(x)`, tinyset's)."""
    return isinstance(e, ast.Call) and bool(e.args) and \
        e.func.rsplit("::", 1)[-1].removeprefix("vec_") in MUTATING


def _takes_out(e: ast.Expr) -> bool:
    """`m.remove(k)` on a variable (or its field), whose value is wanted: DDlog's Map
    `remove` changes m and returns the value the key had."""
    return isinstance(e, ast.Call) and e.method and e.func == "remove" and len(e.args) == 2 \
        and _root(e.args[0]) is not None


def _is_swap(e: ast.Expr) -> bool:
    return isinstance(e, ast.Call) and e.method and e.func == "swap_nth" and len(e.args) == 3


def _swap(e: ast.Call, rest: ast.Expr, sp: Span, fail: Fail) -> ast.Expr:
    """`v.swap_nth(i, x);` (x a variable): v's element i and x trade places, when v has one
    at i: `var old = v.nth(i); v = v.update_nth(i, x); x = old.unwrap_or(x)`."""
    v, i, x = e.args
    if _root(x) is None:
        raise fail("swap_nth's value must be a variable (it receives the element)", x.span)
    old = f"__swap{sp.line}_{sp.col}"
    c = copy.deepcopy
    rest = _assign(c(x), ast.Call("unwrap_or", [ast.Var(old, sp), c(x)], sp, method=True),
                   rest, sp, fail)
    rest = _assign(c(v), ast.Call("update_nth", [c(v), c(i), c(x)], sp, method=True), rest,
                   sp, fail)
    return ast.Let(old, ast.Call("nth", [c(v), c(i)], sp, method=True), rest, sp)


def _is_pending(e: ast.Expr | None) -> bool:
    if isinstance(e, ast.IfExpr):  # `else if`
        return _is_pending(e.then) or _is_pending(e.other)
    return isinstance(e, PendingBlock)


def _branch(e: "ast.Expr | IfStmt | None") -> list[Statement]:
    """The statements an `if` statement's branch runs for their effect."""
    if isinstance(e, PendingBlock):
        return e.statements
    if isinstance(e, IfStmt):  # `else if` without a final `else`
        return [e]
    if isinstance(e, ast.IfExpr) and _is_pending(e):
        return [IfStmt(e.cond, e.then, e.other, e.span)]
    if isinstance(e, Return):  # `if (c) return x`
        return [ReturnStmt(e.value, e.span)]
    return []  # no assignment: its value is not used


def _state(changed: list[str], sp: Span) -> ast.Expr:
    """The value carrying the changed variables out of a loop's step or an `if`'s branch."""
    if len(changed) == 1:
        return ast.Var(changed[0], sp)
    return ast.TupleLit([ast.Var(m, sp) for m in changed], sp)


def _unpack(changed: list[str], value: ast.Expr, rest: ast.Expr, sp: Span,
            tag: str) -> ast.Expr:
    """Rebind the changed variables to `value` (their `_state`) for the rest of the block."""
    if len(changed) == 1:
        return ast.Let(changed[0], value, rest, sp, rebind=True)
    out = f"__{tag}{sp.line}_{sp.col}_out"
    for i, m in reversed(list(enumerate(changed))):
        rest = ast.Let(m, ast.FieldAccess(ast.Var(out, sp), str(i), sp), rest, sp, rebind=True)
    return ast.Let(out, value, rest, sp)


def _if(s: IfStmt, rest: ast.Expr, fail: Fail) -> ast.Expr:
    """`if (c) { then } else { other }` as statements: `m = if (c) { then; m } else { other;
    m }` for the variables either branch changes (a tuple of them when several)."""
    then, other = _branch(s.then), _branch(s.other)
    sp = s.span
    stray = _replace_exits(then + other, None)  # (a loop's own are made returns before)
    if stray:
        raise fail(f"`{stray[0].kind}` is allowed in a `for` loop's body only", stray[0].span)
    if _returns(then) or _returns(other):
        # each branch goes on with the rest of the block, unless it returns first
        return ast.IfExpr(s.cond, block(then, copy.deepcopy(rest), fail),
                          block(other, copy.deepcopy(rest), fail), sp)
    changed = _free(then) + [m for m in _free(other) if m not in _free(then)]
    if not changed:
        raise fail("this `if` statement has no effect: neither branch changes a variable "
                   "declared before it", sp)
    value = ast.IfExpr(s.cond, block(then, _state(changed, sp), fail),
                       block(other, _state(changed, sp), fail), sp)
    return _unpack(changed, value, rest, sp, "if")


def _loop(s: ForStmt, rest: ast.Expr, fail: Fail) -> ast.Expr:
    """`for (x in v) { body }`: a fold over v whose state is the variables the body changes
    (and declared before the loop): `m = v.fold(|m, x| { body; m }, m)`, or with several,
    a tuple of them taken apart after the loop."""
    returns = _returns(s.body)
    if returns and s.result is None:
        raise fail("`return` inside a `for` loop of a closure is not supported; compute the "
                   "result in a variable instead", s.span)
    changed = _free(s.body)
    if not changed and not returns:
        raise fail("this loop has no effect: its body changes no variable declared before it",
                   s.span)
    sp = s.span
    # `break` stops the fold's steps with a flag carried in its state, `continue` ends a step:
    # both give the state as it is, as a `return` from the step's body. A `return` from the
    # function is a `break` that also sets `ret` (None until then) to Some of its value,
    # which is returned after the loop.
    flag = f"__break{sp.line}_{sp.col}" if _exits(s.body, "break") or returns else None
    ret = f"__ret{sp.line}_{sp.col}" if returns else None
    names = changed + ([flag] if flag else []) + ([ret] if ret else [])
    statements = s.body

    def state(at: Span, stop: bool, value: ast.Expr | None) -> ast.Expr:
        values: list[ast.Expr] = [ast.Var(m, at) for m in changed]
        if flag:
            values.append(ast.Lit(stop, "bool", at))
        if ret:
            values.append(ast.Var(ret, at) if value is None else value)
        return values[0] if len(values) == 1 else ast.TupleLit(values, at)
    if _exits(s.body):
        def exit_state(e: LoopExit) -> ReturnStmt:
            return ReturnStmt(state(e.span, e.kind == "break", None), e.span)
        statements = _replace_exits(copy.deepcopy(s.body), exit_state)
    if returns:
        statements = _returns_as_exits(statements, state, fail)
    if len(names) == 1:
        acc = names[0]
        body = _tail(block(statements, ast.Var(acc, sp), fail), lambda v: v, fail,
                     at_function=True)
    else:
        acc = f"__loop{sp.line}_{sp.col}"
        unpack = [VarStmt(m, None, ast.FieldAccess(ast.Var(acc, sp), str(i), sp), sp)
                  for i, m in enumerate(names)]
        inner = _tail(block(statements, _state(names, sp), fail), lambda v: v, fail,
                      at_function=True)
        if flag:  # after a break, the steps keep the state
            inner = ast.IfExpr(ast.Var(flag, sp), _state(names, sp), inner, sp)
        body = block(unpack, inner, fail)
    step = ast.Lambda([acc, s.var], body, sp, annotations=[None, None])
    # what DDlog visits: the elements; a Map's (key, value) entries; a Group's (value, weight)
    items = ast.Call("loop_items", [s.iterable], s.iterable.span, method=True)
    folded = ast.Call("fold", [items, step, _state(names, sp)], sp, method=True)
    if flag is None:
        return _unpack(changed, folded, rest, sp, "loop")
    if ret:
        value = f"__retv{sp.line}_{sp.col}"
        rest = ast.MatchExpr(ast.Var(ret, sp), [
            ast.MatchArm(ast.PCtor("Some", [(None, ast.PVar(value, sp))], sp),
                         Return(ast.Var(value, sp), sp), sp),
            ast.MatchArm(ast.PWild(sp), rest, sp)], sp)
    out = _unpack(names, folded, rest, sp, "loop")
    if ret:  # None until a `return`: an Option of the function's result type
        none = ast.Ascribe(ast.StructLit("None", [], sp), ast.TypeName("Option", [s.result], sp),
                           sp)
        out = ast.Let(ret, none, out, sp)
    return ast.Let(flag, ast.Lit(False, "bool", sp), out, sp)


def _returns_as_exits(body: list[Statement], state, fail: Fail) -> list[Statement]:
    """A loop body whose `return e`s (statements, and values of branches) end the fold's
    step with the state that stops the loop and holds Some{e}. A `return` inside a loop in
    the body is refused: the inner loop's fold would have to stop the outer one."""
    def visit(x):
        if isinstance(x, ForStmt):
            if _returns(x.body):
                raise fail("`return` inside a `for` loop inside another `for` loop is not "
                           "supported; compute the result in a variable instead", x.span)
            return x
        if isinstance(x, (ReturnStmt, Return)):
            value = x.value if x.value is not None else ast.TupleLit([], x.span)
            some = ast.StructLit("Some", [(None, value)], x.span)
            return type(x)(state(x.span, True, some), x.span)
        return None
    return _rewrite(copy.deepcopy(body), visit)


def _exits(body: list[Statement], kind: str | None = None) -> bool:
    """Whether `body` has a `continue` or `break` (of `kind`) of its own loop (not of a loop
    inside it)."""
    return bool(_replace_exits(body, None, kind))


def _replace_exits(node, exit_state: Callable[[LoopExit], ReturnStmt] | None,
                   kind: str | None = None):
    """With `exit_state`: `node` with each of its loop exits replaced by what it gives; else
    the list of them (of `kind`)."""
    found: list[LoopExit] = []

    def visit(x):
        if isinstance(x, LoopExit):
            if kind is not None and x.kind != kind:
                return x
            found.append(x)
            return exit_state(x) if exit_state else x
        return x if isinstance(x, ForStmt) else None  # a loop inside has its own exits
    out = _rewrite(node, visit)
    return out if exit_state else found


def _root(e: ast.Expr) -> str | None:
    while isinstance(e, ast.FieldAccess):
        e = e.expr
    return e.name if isinstance(e, ast.Var) else None


def _assigned(body: list[Statement]) -> list[str]:
    """The variables a loop body changes, in order of first change."""
    out: list[str] = []
    for s in body:
        if isinstance(s, AssignStmt):
            names = [_root(s.target)]
        elif isinstance(s, ExprStmt) and _is_swap(s.expr):
            names = [_root(s.expr.args[0]), _root(s.expr.args[2])]
        elif isinstance(s, ExprStmt) and isinstance(s.expr, ast.Call) and s.expr.args:
            names = [_root(s.expr.args[0])]
        elif isinstance(s, VarStmt) and _takes_out(s.value):
            names = [_root(s.value.args[0])]
        elif isinstance(s, ForStmt):
            names = _free(s.body)
        elif isinstance(s, IfStmt):
            names = _free(_branch(s.then)) + _free(_branch(s.other))
        else:
            names = []
        out.extend(n for n in names if n is not None and n not in out)
    return out


def assignment_span(body: list[Statement], name: str) -> Span:
    """Where `body` first changes the variable `name` (one of `_free(body)`), inside the
    loop or `if` that does."""
    s = next(s for s in body if name in _assigned([s]))
    if isinstance(s, ForStmt):
        return assignment_span(s.body, name)
    if isinstance(s, IfStmt):
        then = _branch(s.then)
        return assignment_span(then if name in _free(then) else _branch(s.other), name)
    return s.span


def _returns(body: list[Statement]) -> bool:
    """Whether `body` returns from the function (directly, or in an `if` or loop in it)."""
    return _has_return(body)


def _free(body: list[Statement]) -> list[str]:
    """The variables `body` changes that it does not declare."""
    return [m for m in _assigned(body) if m not in _declared(body)]


def _declared(body: list[Statement]) -> set[str]:
    return {s.name for s in body if isinstance(s, VarStmt)}


def _assign(target: ast.Expr, value: ast.Expr, rest: ast.Expr, span: Span,
            fail: Fail) -> ast.Let:
    fields: list[str] = []
    root = target
    while isinstance(root, ast.FieldAccess):
        fields.append(root.name)
        root = root.expr
    if not isinstance(root, ast.Var):
        raise fail("only a variable or its fields (`x`, `x.f`, `x.0.g`) can be assigned",
                   target.span)
    return ast.Let(root.name, _replace(root, fields[::-1], value), rest, span, rebind=True)


def _replace(base: ast.Expr, fields: list[str], value: ast.Expr) -> ast.Expr:
    """`base` with the field at path `fields` replaced by `value`."""
    if not fields:
        return value
    # the checker types nodes in place: each use of `base` gets its own copy
    inner = ast.FieldAccess(copy.deepcopy(base), fields[0], base.span)
    return ast.With(base, fields[0], _replace(inner, fields[1:], value), base.span)
