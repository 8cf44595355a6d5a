"""Expressions compiled to Spark Columns (runtime/expr.py) where the way they are built
matters beyond their values: a match computes its scrutinee once when computing it costs."""
from __future__ import annotations

from ddlog.plan import exprs as ir
from ddlog.types import BOOL, STRING, TInt, TOption

U64 = TInt(False, 64)


def _parse_match(text: ir.Expr) -> ir.Match:
    """`match (parse_dec_u64(text)) { Some{n} -> n + n, None -> 0 }`"""
    parsed = ir.Call("parse_dec_u64", (text,), TOption(U64))
    n = ir.Ref("n", U64)
    return ir.Match(parsed, ((ir.PSome(ir.PBind("n", U64), TOption(U64)),
                              ir.Binary("+", n, n, U64)),
                             (ir.PNone(TOption(U64)), ir.Const(0, U64))), U64)


def _values(spark, column, texts):
    df = spark.createDataFrame([(t,) for t in texts], "v_t string")
    return [r[0] for r in df.select(column).collect()]


def test_a_computed_scrutinee_is_computed_once(spark):
    """The parse appears once in the Column, not once per reading of it; values are kept."""
    from ddlog.runtime.expr import compile_expr
    column = compile_expr(_parse_match(ir.Col("v_t", STRING)))
    assert str(column).count("rlike(v_t") == 1, str(column)
    assert _values(spark, column, ["21", "x", "007"]) == [42, 0, 14]


def test_a_scrutinee_read_from_columns_is_not_bound(spark):
    """Operators over columns cost less to compute again than a Spark lambda does."""
    from ddlog.runtime.expr import compile_expr
    x = ir.Col("v_x", U64)
    match = ir.Match(ir.Binary("+", x, ir.Const(1, U64), U64),
                     ((ir.PBind("y", U64), ir.Binary("*", ir.Ref("y", U64),
                                                     ir.Ref("y", U64), U64)),), U64)
    column = compile_expr(match)
    assert "transform" not in str(column)
    df = spark.createDataFrame([(2,), (5,)], "v_x long")
    assert [r[0] for r in df.select(column).collect()] == [9, 36]


def test_a_match_whose_arm_checks_a_pattern_stays_out_of_a_lambda(spark):
    """A regular expression's validity is told by an expression Spark cannot evaluate inside
    a lambda (ddlog/builtins/regexes.py): the arms stay outside one, and an invalid pattern
    still matches nothing rather than failing the query."""
    from ddlog.runtime.expr import compile_expr
    parsed = ir.Call("parse_dec_u64", (ir.Col("v_t", STRING),), TOption(U64))
    found = ir.Call("pattern_matches", (ir.Col("v_t", STRING), ir.Col("v_p", STRING)), BOOL)
    match = ir.Match(parsed, ((ir.PSome(ir.PAny(U64), TOption(U64)), found),
                              (ir.PNone(TOption(U64)), ir.Const(False, BOOL))), BOOL)
    column = compile_expr(match)
    assert "transform" not in str(column)
    df = spark.createDataFrame([("12", "[0-9]+"), ("12", "["), ("x", "x")],
                               "v_t string, v_p string")
    assert [r[0] for r in df.select(column).collect()] == [True, False, False]
