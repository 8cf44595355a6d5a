"""Closures as values (`relation R(f: |s64|: s64)`, `R(|x| x + inc) :- I(inc)`): the operations
the type checker writes for them (ddlog/check/closures.py), never the program itself, which is
why their names cannot be written in DDlog.

A closure value is the number of its closure expression in the program, the expression's text,
and the JSON object of the values it captured (ddlog.values.Closure); calling one is a choice
among the program's closures of its type, each reading its captures back from the JSON.
"""
from __future__ import annotations

from typing import NoReturn

from ddlog.builtins.base import Builtin
from ddlog.types import TFunc, TString, Type
from ddlog.values import Closure, closure_args, closure_captures, closure_env, show_closure


def _internal(a, hint) -> NoReturn:
    raise AssertionError("written by the type checker, with its type")


def _make_spark(sx, a, ts, t):
    F = sx.F
    captures = a[2:]
    env = F.to_json(F.struct(*[c.alias(f"_{k}") for k, c in enumerate(captures)])) \
        if captures else F.lit("{}")
    shown = [_shown(sx, c, ct) for c, ct in zip(captures, ts[2:])]
    if len(shown) == 1:
        args = shown[0]
    else:
        args = F.concat(F.lit("("), F.concat_ws(", ", *shown), F.lit(")")) if shown \
            else F.lit("()")
    return F.struct(a[0].cast("long").alias("id"), a[1].alias("text"), env.alias("env"),
                    args.alias("args"))


def _shown(sx, c, t: Type):
    """A captured value as DDlog prints it (ddlog.values.format_value), on Spark."""
    F = sx.F
    if isinstance(t, TFunc):
        return _show_spark(sx, c)
    if isinstance(t, TString):
        out = c
        for plain, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\t", "\\t")):
            out = F.replace(out, F.lit(plain), F.lit(escaped))
        return F.concat(F.lit('"'), out, F.lit('"'))
    return sx.to_string(c, t)  # an integer or a bool


def _show_spark(sx, f):
    F = sx.F
    return F.concat(F.lit("<closure: "), f.getField("text"), F.lit(", captured_args: "),
                    f.getField("args"), F.lit(">"))


CLOSURE_OPS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("closure#make", tuple(range(2, 64)), "closure#make(id, text, captures..)",
            "a closure value", _internal, _make_spark,
            lambda a, ts, t: Closure(a[0], a[1], closure_env(tuple(a[2:])),
                                     closure_args(tuple(a[2:]), tuple(ts[2:])))),
    Builtin("closure#id", 1, "closure#id(f)", "which closure expression made f", _internal,
            lambda sx, a, ts, t: a[0].getField("id"), lambda a, ts, t: a[0].id),
    Builtin("closure#env", 1, "closure#env(f)", "the values f captured, as a tuple",
            _internal, lambda sx, a, ts, t: sx.F.from_json(a[0].getField("env"),
                                                          sx.spark_type(t)),
            lambda a, ts, t: closure_captures(a[0])),
    Builtin("closure#show", 1, "closure#show(f)", "f as text", _internal,
            lambda sx, a, ts, t: _show_spark(sx, a[0]), lambda a, ts, t: show_closure(a[0])),
]}
