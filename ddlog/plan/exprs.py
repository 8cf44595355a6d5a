"""Expressions of the circuit IR: what a Select, FlatMap or GroupBy computes per row.

They are the checked program's expressions lowered to what an evaluator needs and nothing of
the syntax: every node carries its type; a variable of the rule is a column (`Col("v_x")`),
a lambda parameter or pattern variable a `Ref`; built-in calls name their entry in
ddlog/builtins/; constructor fields are in declaration order; `Some`/`None` are their own
nodes. runtime/expr.py compiles them to Spark Columns, ddlog/plan/explain.py prints them.

`lower(e)` turns a typed ddlog/syntax/ast.py expression into one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Union

from ddlog.builtins import lookup
from ddlog.syntax import ast
from ddlog.tree import Node
from ddlog.types import TOption, TStruct, Type


class IRNode(Node):
    """An IR expression or pattern (as opposed to a syntax node: both walk as ddlog.tree
    Nodes)."""


@dataclass(frozen=True)
class Col(IRNode):
    """A column of the row: `v_<var>` for a variable of the rule, `c<k>` for a relation's."""

    name: str
    ty: Type


@dataclass(frozen=True)
class Ref(IRNode):
    """A variable bound inside the expression: a lambda parameter or a pattern variable."""

    name: str
    ty: Type


@dataclass(frozen=True)
class Const(IRNode):
    """A constant, as a Python value (ddlog/values); None is Option's None."""

    value: Any
    ty: Type


@dataclass(frozen=True)
class Unary(IRNode):
    op: str  # '-', '~', 'not'
    arg: "Expr"
    ty: Type


@dataclass(frozen=True)
class Binary(IRNode):
    op: str  # + - * / % == != < <= > >= and or ++ & | ^ << >>
    left: "Expr"
    right: "Expr"
    ty: Type


@dataclass(frozen=True)
class Call(IRNode):
    """A built-in function or group method (ddlog/builtins), receiver first."""

    name: str
    args: tuple["Expr", ...]
    ty: Type
    group: bool = False


@dataclass(frozen=True)
class Lambda(IRNode):
    params: tuple[str, ...]
    body: "Expr"
    ty: Type  # TFunc


@dataclass(frozen=True)
class Cast(IRNode):
    arg: "Expr"
    ty: Type


@dataclass(frozen=True)
class Field(IRNode):
    """A struct's field, or a tuple's element (`name` is "0", "1", ...)."""

    arg: "Expr"
    name: str
    ty: Type


@dataclass(frozen=True)
class With(IRNode):
    """`arg` with its field (tuple element "0", "1", ...) `name` replaced by `value`."""

    arg: "Expr"
    name: str
    value: "Expr"
    ty: Type


@dataclass(frozen=True)
class Tuple(IRNode):
    items: tuple["Expr", ...]
    ty: Type


@dataclass(frozen=True)
class Vec(IRNode):
    """A Vec literal, or a Set one when `ty` is a Set (then sorted and without duplicates)."""

    items: tuple["Expr", ...]
    ty: Type


@dataclass(frozen=True)
class Struct(IRNode):
    """A value of a user type: constructor `ctor`, its fields in declaration order."""

    ctor: str
    fields: tuple["Expr", ...]
    ty: Type


@dataclass(frozen=True)
class Some(IRNode):
    arg: "Expr"
    ty: Type


@dataclass(frozen=True)
class If(IRNode):
    cond: "Expr"
    then: "Expr"
    other: "Expr"
    ty: Type


@dataclass(frozen=True)
class Match(IRNode):
    arg: "Expr"
    arms: tuple[tuple["Pattern", "Expr"], ...]
    ty: Type


@dataclass(frozen=True)
class Interp(IRNode):
    """A string with interpolations: text pieces and scalar expressions."""

    parts: tuple[Union[str, "Expr"], ...]
    ty: Type


Expr = Union[Col, Ref, Const, Unary, Binary, Call, Lambda, Cast, Field, With, Tuple, Vec, Struct,
             Some, If, Match, Interp]

# -- patterns ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PAny(IRNode):
    ty: Type


@dataclass(frozen=True)
class PBind(IRNode):
    name: str
    ty: Type


@dataclass(frozen=True)
class PConst(IRNode):
    value: Any
    ty: Type


@dataclass(frozen=True)
class PTuple(IRNode):
    items: tuple["Pattern", ...]
    ty: Type


@dataclass(frozen=True)
class PCtor(IRNode):
    """A user constructor, its fields' patterns in declaration order."""

    ctor: str
    fields: tuple["Pattern", ...]
    ty: Type


@dataclass(frozen=True)
class PSome(IRNode):
    arg: "Pattern"
    ty: Type


@dataclass(frozen=True)
class PNone(IRNode):
    ty: Type


Pattern = Union[PAny, PBind, PConst, PTuple, PCtor, PSome, PNone]


# ---------------------------------------------------------------------------------------------
# Lowering from the checked AST


def var_col(name: str) -> str:
    """The column holding variable `name` in a valuation."""
    return f"v_{name}"


def lower(e, scope: frozenset[str] = frozenset()) -> Expr:
    """A typed AST expression as IR; `scope` holds the lambda parameters and pattern variables
    around it (every other variable is a column)."""
    if isinstance(e, IRNode):  # already IR (the compiler builds some expressions itself)
        return e
    return _LOWER[type(e)](e, scope)


def _lit(e: ast.Lit, scope) -> Expr:
    value = float(e.value) if e.kind == "float" else e.value
    return Const(value, e.ty)


def _struct(e: ast.StructLit, scope) -> Expr:
    if isinstance(e.ty, TOption):
        if e.ctor == "None":
            return Const(None, e.ty)
        return Some(lower(e.fields[0][1], scope), e.ty)
    assert isinstance(e.ty, TStruct)
    given = dict(e.fields) if all(n is not None for n, _ in e.fields) else None
    ctor = e.ty.ctor(e.ctor)
    if given is None:  # positional (the checker names them; accept it anyway)
        values = [x for _, x in e.fields]
    else:
        values = [given[n] for n, _ in ctor.fields]
    return Struct(e.ctor, tuple(lower(x, scope) for x in values), e.ty)


def _call(e: ast.Call, scope) -> Expr:
    builtin = lookup(e.func, len(e.args))
    assert builtin is not None, f"unchecked call of {e.func}"
    return Call(builtin.name, tuple(lower(a, scope) for a in e.args), e.ty, builtin.group)


def _match(e: ast.MatchExpr, scope) -> Expr:
    arms = []
    for arm in e.arms:
        bound = frozenset(v.name for v in arm.pattern.find(ast.PVar))
        arms.append((lower_pattern(arm.pattern), lower(arm.body, scope | bound)))
    return Match(lower(e.scrutinee, scope), tuple(arms), e.ty)


_LOWER: dict[type, Callable[[Any, frozenset[str]], Expr]] = {
    ast.Var: lambda e, s: Ref(e.name, e.ty) if e.name in s else Col(var_col(e.name), e.ty),
    ast.Lit: _lit,
    ast.Interp: lambda e, s: Interp(tuple(p if isinstance(p, str) else lower(p, s)
                                          for p in e.parts), e.ty),
    ast.BinOp: lambda e, s: Binary(e.op, lower(e.left, s), lower(e.right, s), e.ty),
    ast.UnOp: lambda e, s: Unary(e.op, lower(e.operand, s), e.ty),
    ast.Call: _call,
    ast.FieldAccess: lambda e, s: Field(lower(e.expr, s), e.name, e.ty),
    ast.With: lambda e, s: With(lower(e.expr, s), e.name, lower(e.value, s), e.ty),
    ast.TupleLit: lambda e, s: Tuple(tuple(lower(x, s) for x in e.items), e.ty),
    ast.VecLit: lambda e, s: Vec(tuple(lower(x, s) for x in e.items), e.ty),
    ast.StructLit: _struct,
    ast.IfExpr: lambda e, s: If(lower(e.cond, s), lower(e.then, s), lower(e.other, s), e.ty),
    ast.MatchExpr: _match,
    ast.Cast: lambda e, s: Cast(lower(e.expr, s), e.ty),
    ast.Lambda: lambda e, s: Lambda(tuple(e.params), lower(e.body, s | set(e.params)), e.ty),
}


def lower_pattern(p: ast.Pattern) -> Pattern:
    t = p.ty
    if isinstance(p, ast.PWild):
        return PAny(t)
    if isinstance(p, ast.PVar):
        return PBind(p.name, t)
    if isinstance(p, ast.PLit):
        value = float(p.lit.value) if p.lit.kind == "float" else p.lit.value
        return PConst(value, t)
    if isinstance(p, ast.PTuple):
        return PTuple(tuple(lower_pattern(q) for q in p.items), t)
    assert isinstance(p, ast.PCtor)
    if isinstance(t, TOption):
        if p.ctor == "None":
            return PNone(t)
        return PSome(lower_pattern(p.fields[0][1]) if p.fields else PAny(t.elem), t)
    names = [n for n, _ in t.ctor(p.ctor).fields]
    given = dict(p.fields) if all(n is not None for n, _ in p.fields) else None
    subs = [x for _, x in p.fields] if given is None else [given[n] for n in names]
    return PCtor(p.ctor, tuple(lower_pattern(q) for q in subs), t)
