"""The methods of `Group<K, V>`, the value `var g = e.group_by(k)` binds: a group's elements
are the values of `e`, one per distinct valuation of the body before `group_by`, sorted (so
`first` is the smallest); a group is never empty.

On Spark a group is a struct (key, items: array, sorted); a lambda argument (`|v| e`) is lowered
to a Column function applied by Spark's higher-order array functions. In Python a group is a
ddlog.values.Group and a lambda a Python function.
"""
from __future__ import annotations

from ddlog.builtins.base import Args, Builtin
from ddlog.types import USIZE, TFloat, TFunc, TSet, TVec, Type, is_numeric
from ddlog.values import canonical_set
from ddlog.values.ops import compare, fix_number


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


def _arg_type(a: Args, hint) -> Type:
    r = a.lambda_body(1, _elem(a))
    if isinstance(r, TFunc):
        a.fail("expects a lambda returning a comparable value", 1)
    return _elem(a)


def _sum_of_spark(sx, args, types, ty):
    F = sx.F
    items = args[0].getField("items")
    return sx.wrap(F.aggregate(F.transform(items, args[1]), sx.lit(0, ty),
                               lambda acc, x: acc + x), ty)


def _sum_of_python(args, types, ty):
    g, fn = args
    total = 0.0 if isinstance(ty, TFloat) else 0
    for v in g.items:  # in element order, fixing the width after each addition
        total = fix_number(total + fn(v), ty)
    return total


def _arg_spark(best_of):
    def lower(sx, args, types, ty):
        F = sx.F
        items, fn = args[0].getField("items"), args[1]
        best = getattr(F, best_of)(F.transform(items, fn))
        # items are sorted, so the first match is the smallest element among ties
        return F.element_at(F.filter(items, lambda x: fn(x).eqNullSafe(best)), 1)
    return lower


def _arg_python(op):
    def meaning(args, types, ty):
        g, fn = args
        best = g.items[0]
        for v in g.items[1:]:  # items ascend: keeping the first best breaks ties to smallest
            if compare(op, fn(v), fn(best)):
                best = v
        return best
    return meaning


def _items(sx, g):
    return g.getField("items")


GROUP_METHODS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("count", 1, "count(Group<K, V>) -> usize",
            "number of elements (duplicates of `e` count)", _count_type,
            lambda sx, a, ts, t: sx.F.size(_items(sx, a[0])).cast("long"),
            lambda a, ts, t: len(a[0].items), group=True),
    Builtin("count_distinct", 1, "count_distinct(Group<K, V>) -> usize",
            "number of distinct elements", _count_type,
            lambda sx, a, ts, t: sx.F.size(sx.F.array_distinct(_items(sx, a[0]))).cast("long"),
            lambda a, ts, t: len(set(a[0].items)), group=True),
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
    Builtin("arg_min", 2, "arg_min(Group<K, V>, |V| T) -> V",
            "the element with the smallest lambda value (ties: the smallest element)",
            _arg_type, _arg_spark("array_min"), _arg_python("<"), group=True),
    Builtin("arg_max", 2, "arg_max(Group<K, V>, |V| T) -> V",
            "the element with the largest lambda value (ties: the smallest element)",
            _arg_type, _arg_spark("array_max"), _arg_python(">"), group=True),
    Builtin("to_set", 1, "to_set(Group<K, V>) -> Set<V>", "the distinct elements, sorted",
            lambda a, hint: TSet(_elem(a)),
            lambda sx, a, ts, t: sx.F.array_distinct(_items(sx, a[0])),
            lambda a, ts, t: canonical_set(a[0].items), group=True),
    Builtin("to_vec", 1, "to_vec(Group<K, V>) -> Vec<V>",
            "all elements, sorted (duplicates kept)", lambda a, hint: TVec(_elem(a)),
            lambda sx, a, ts, t: _items(sx, a[0]), lambda a, ts, t: tuple(a[0].items),
            group=True),
    Builtin("key", 1, "key(Group<K, V>) -> K",
            "the key: the key variable, or a tuple of them when there are several",
            lambda a, hint: a.infer(0).key, lambda sx, a, ts, t: a[0].getField("key"),
            lambda a, ts, t: a[0].key, group=True),
    Builtin("first", 1, "first(Group<K, V>) -> V", "the smallest element",
            lambda a, hint: _elem(a),
            lambda sx, a, ts, t: sx.F.element_at(_items(sx, a[0]), 1),
            lambda a, ts, t: a[0].items[0], group=True),
]}
