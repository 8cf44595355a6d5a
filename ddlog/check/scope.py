"""Small helpers shared by the type checker's modules: errors, scopes, literals.

Kept apart so that the checker's modules (resolve.py, patterns.py, exprs.py, rules.py) can all
use them without importing each other in a cycle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import AbstractSet, Callable

from ddlog.syntax import ast
from ddlog.errors import Span, TypeCheckError
from ddlog.types import (BIGINT, BOOL, DOUBLE, STRING, TFloat, TInt, TMap, TOption, TSet, TTuple,
                         TVec, Type)

# Operator classes of ast.BinOp.
ARITH_OPS = frozenset({"+", "-", "*", "/", "%"})
CMP_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})
BOOL_OPS = frozenset({"and", "or"})
BIT_OPS = frozenset({"&", "|", "^"})
SHIFT_OPS = frozenset({"<<", ">>"})

# Spark stores bigint as a 64-bit long (runtime/schema.py), so a bigint literal must fit in one.
_BIGINT_BITS = 64


def error(message: str, span: Span | None) -> TypeCheckError:
    """The error to raise; check_program attaches the program text before it escapes."""
    return TypeCheckError(message, span)


def mismatch(expected: Type, found: Type, span: Span, what: str | None = None) -> TypeCheckError:
    suffix = f" ({what})" if what else ""
    err = error(f"type mismatch: expected {expected}, found {found}{suffix}", span)
    err.types = (expected, found)
    return err


@dataclass
class Scope:
    """The variables visible to an expression, and how to word an unknown one.

    `unbound` renders the message for a variable that is not in `vars`: the rule checker words it
    differently in a head, after a group_by, in a negated atom, or in a function body.

    `flex` are the variables whose type was only defaulted: bound to an untyped literal
    (`var x = 1`, `var x = FlatMap([0, 1])`). DDlog types a literal by every use of it; here
    the first use that expects another type raises Retype, and the rule (or function) is
    checked again with that type for the variable."""

    vars: dict[str, Type]
    unbound: Callable[[str], str]
    flex: AbstractSet[str] = field(default_factory=frozenset)

    def extend(self, more: dict[str, Type]) -> "Scope":
        return Scope({**self.vars, **more}, self.unbound, self.flex - set(more))


class Retype(Exception):
    """A variable of defaulted type (Scope.flex) is used where `ty` is expected: check its
    binding again with `ty` as the hint."""

    def __init__(self, var: str, ty: Type):
        super().__init__(var, ty)
        self.var, self.ty = var, ty


def can_take(default: Type, wanted: Type) -> bool:
    """Whether a value typed by default from literals (`default`: bigint, double, and Vec, Set,
    Option, tuples of them) can be typed `wanted` instead."""
    if isinstance(default, (TInt, TFloat)):
        return isinstance(wanted, (TInt, TFloat))
    if isinstance(default, (TVec, TSet, TOption)):
        same_kind = type(wanted) is type(default) or \
            isinstance(default, TVec) and isinstance(wanted, TSet)  # `[1, 2]` is also a Set
        return same_kind and (default.elem == wanted.elem or can_take(default.elem, wanted.elem))
    if isinstance(default, TMap):  # `[1 -> 2]`
        return isinstance(wanted, TMap) and can_take(default.elem, wanted.elem)
    if isinstance(default, TTuple):
        return isinstance(wanted, TTuple) and len(wanted.items) == len(default.items) and \
            all(a == b or can_take(a, b) for a, b in zip(default.items, wanted.items))
    return False


def check_int_range(value: int, t: TInt, span: Span) -> None:
    width = t.width if t.width is not None else _BIGINT_BITS
    signed = t.signed if t.width is not None else True
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    if not lo <= value <= hi:
        where = f"{t} (64-bit)" if t.width is None else str(t)
        raise error(f"literal {value} out of range for {where}", span)


def type_literal(lit: ast.Lit, hint: Type | None, span: Span | None = None) -> Type:
    """Type a literal in place. Untyped integer literals take an integer or float `hint`
    (an integer literal where a float is expected becomes a float literal), else bigint;
    float literals take a float `hint`, else double; width literals `32'd1`, `32'f1.5` are
    fixed."""
    span = span or lit.span
    if lit.kind == "bool":
        t: Type = BOOL
    elif lit.kind == "string":
        t = STRING
    elif lit.kind == "float":
        t = TFloat(lit.width) if lit.width else hint if isinstance(hint, TFloat) else DOUBLE
    elif lit.width is not None:
        t = TInt(lit.signed, lit.width)
        check_int_range(lit.value, t, span)
    elif isinstance(hint, TFloat):
        # Rewritten so that value, kind and type agree for the later stages.
        t = hint
        lit.value, lit.kind = float(lit.value), "float"
    else:
        t = hint if isinstance(hint, TInt) else BIGINT
        check_int_range(lit.value, t, span)
    lit.ty = t
    return t


def flexible(e: ast.Expr, flex_vars: AbstractSet[str] = frozenset()) -> bool:
    """Whether the type of `e` depends on the type its context expects (an untyped numeric
    literal, `None`, `[]`, a variable of `flex_vars`, ...). Operands that must share a type are
    typed non-flexible first, so the literal in `1 + x` takes the type of `x`."""
    def sub(x: ast.Expr) -> bool:
        return flexible(x, flex_vars)
    if isinstance(e, ast.Var):
        return e.name in flex_vars
    if isinstance(e, ast.Lit):
        return e.kind in ("int", "float") and e.width is None
    if isinstance(e, ast.UnOp):
        return e.op in ("-", "~") and sub(e.operand)
    if isinstance(e, ast.BinOp):
        return e.op in ARITH_OPS | BIT_OPS and sub(e.left) and sub(e.right)
    if isinstance(e, ast.StructLit):
        if e.ctor == "None":
            return True
        return e.ctor == "Some" and len(e.fields) == 1 and sub(e.fields[0][1])
    if isinstance(e, ast.VecLit):
        return all(sub(i) for i in e.items)
    if isinstance(e, ast.TupleLit):
        return any(sub(i) for i in e.items)
    if isinstance(e, ast.IfExpr):
        return sub(e.then) and sub(e.other)
    if isinstance(e, ast.MatchExpr):
        return all(sub(a.body) for a in e.arms)
    if isinstance(e, ast.Let):
        inner = flex_vars | {e.var} if sub(e.value) else flex_vars - {e.var}
        return flexible(e.body, inner)
    return False


def replace_int(t: Type, old: Type, new: Type) -> Type:
    """`t` with the integer type `old` replaced by `new` inside it."""
    if t == old:
        return new
    if isinstance(t, (TVec, TSet, TOption)):
        return type(t)(replace_int(t.elem, old, new))
    if isinstance(t, TMap):
        return TMap(replace_int(t.key, old, new), replace_int(t.value, old, new))
    if isinstance(t, TTuple):
        return TTuple(tuple(replace_int(x, old, new) for x in t.items))
    return t
