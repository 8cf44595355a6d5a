"""The methods of `Group<K, V>`, the value `var g = e.group_by(k)` binds: a group's elements
are the values of `e`, one per distinct valuation of the body before `group_by`, sorted (so
`first` is the smallest); a group is never empty. The methods a group shares with Vec and Set
(`map`, `filter`, `fold`, `arg_min`, `to_vec`, `first`, ...) are in library.py.

On Spark a group is a struct (key, items: array, sorted); a lambda argument (`|v| e`) is lowered
to a Column function applied by Spark's higher-order array functions. In Python a group is a
ddlog.values.Group and a lambda a Python function.
"""
from __future__ import annotations

from ddlog.builtins.base import Args, Builtin
from ddlog.types import USIZE, TFloat, TSet, Type, is_numeric
from ddlog.values import canonical_set
from ddlog.values.ops import fix_number


def _elem(a: Args) -> Type:
    """The group's element type (argument 0 is the group; the checker typed it)."""
    return a.infer(0).elem


def _count_type(a: Args, hint) -> Type:
    return USIZE  # as DDlog: a program keeping a count in a bigint converts it (`as bigint`)


def _sum_of_type(a: Args, hint) -> Type:
    r = a.lambda_body(1, _elem(a))
    if not is_numeric(r):
        a.fail(f"function 'sum_of' expects a lambda returning a number, found {r}", 1)
    return r


def _sum_of_spark(sx, args, types, ty):
    F = sx.F
    items = args[0].getField("items")
    return sx.wrap(F.aggregate(F.transform(items, args[1]), sx.lit(0, ty),
                               lambda acc, x: sx.arith("+", acc, x, ty)), ty)


def _sum_of_python(args, types, ty):
    g, fn = args
    total = 0.0 if isinstance(ty, TFloat) else 0
    for v in g.items:  # in element order, fixing the width after each addition
        total = fix_number(total + fn(v), ty)
    return total


def _items(sx, g):
    return g.getField("items")


def _union_type(a: Args, hint) -> Type:
    t = _elem(a)
    a.want(0, isinstance(t, TSet), "a Group of Sets")
    return t


def _union_spark(sx, args, types, ty):
    return sx.canonical_set(sx.F.flatten(_items(sx, args[0])), ty)


GROUP_METHODS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("union", 1, "union(Group<K, Set<A>>) -> Set<A>", "the elements of any of the Sets",
            _union_type, _union_spark,
            lambda a, ts, t: canonical_set([x for s in a[0].items for x in s]), group=True),
    Builtin("count", 1, "count(Group<K, V>) -> usize",
            "number of elements (duplicates of `e` count)", _count_type,
            lambda sx, a, ts, t: sx.F.size(_items(sx, a[0])).cast("long"),
            lambda a, ts, t: len(a[0].items), group=True),
    # DDlog's count_distinct is the group's size: its elements are one per distinct
    # valuation of the body, so equal values of `e` from different valuations all count
    Builtin("count_distinct", 1, "count_distinct(Group<K, V>) -> usize",
            "number of elements: of distinct valuations (as DDlog; `to_set().size()` counts "
            "distinct values)", _count_type,
            lambda sx, a, ts, t: sx.F.size(_items(sx, a[0])).cast("long"),
            lambda a, ts, t: len(a[0].items), group=True),
    Builtin("sum_of", 2, "sum_of(Group<K, V>, |V| N) -> N, N numeric",
            "sum of the lambda over the elements", _sum_of_type, _sum_of_spark, _sum_of_python,
            group=True),
    Builtin("min", 1, "min(Group<K, V>) -> V", "the smallest element",
            lambda a, hint: _elem(a),
            lambda sx, a, ts, t: sx.F.element_at(_items(sx, a[0]), 1),
            lambda a, ts, t: a[0].items[0], group=True),
    Builtin("max", 1, "max(Group<K, V>) -> V", "the largest element",
            lambda a, hint: _elem(a),
            lambda sx, a, ts, t: sx.F.element_at(_items(sx, a[0]), -1),
            lambda a, ts, t: a[0].items[-1], group=True),
    Builtin("key", 1, "key(Group<K, V>) -> K",
            "the key: the key variable, or a tuple of them when there are several",
            lambda a, hint: a.infer(0).key, lambda sx, a, ts, t: a[0].getField("key"),
            lambda a, ts, t: a[0].key, group=True),
]}
