"""DDlog's standard library over collections (`Vec`, `Set`, `Group`), `Option` and strings, with
DDlog's names, types and semantics (its `ddlog_std`, `vec`, `set` and `group` modules): each
function is one `Builtin` that accepts every receiver DDlog defines it for.

On Spark a Vec or Set is an array (a Set sorted, without duplicates), a Group a struct whose
`items` array is sorted, an Option the value or null; closures are Column functions applied by
Spark's higher-order functions (`transform`, `filter`, `aggregate`, `exists`, `forall`,
`array_sort`), never Python UDFs. In Python (the oracle) a Vec or Set is a tuple, a Group a
ddlog.values.Group and a closure a Python function.

DDlog's mutating methods (`v.push(x)`, `v.retain(f)`, `v.sort()`, ...) are functions returning
the changed collection here: a block's statement `v.m(..);` is `v = v.m(..)`
(ddlog/syntax/blocks.py).
"""
from __future__ import annotations

import functools
from typing import Any

from ddlog.builtins.base import Args, Builtin
from ddlog.types import (BOOL, STRING, USIZE, TFloat, TGroup, TInt, TMap, TOption, TSet, TString,
                         TStruct, TTuple, TVec, Type, is_numeric)
from ddlog.values import Record, canonical_set, sort_key
from ddlog.values.ops import compare, fix_number

COLLECTIONS = (TVec, TSet, TGroup)


# -- receivers -------------------------------------------------------------------------------


def want_index(a: Args, i: int, what: str) -> None:
    """Argument `i` is an index or size: any integer type, a literal a usize."""
    a.want(i, isinstance(a.infer(i, USIZE), TInt), f"an integer {what}")


def _items_spark(c, t: Type):
    """The array of elements of a Vec, Set or Group column."""
    return c.getField("items") if isinstance(t, TGroup) else c


def _items(v, t: Type) -> tuple:
    return tuple(v.items) if isinstance(t, TGroup) else tuple(v)


def _receiver(a: Args, kinds: tuple = COLLECTIONS, desc: str = "a Vec, Set or Group") -> Type:
    t = a.infer(0)
    a.want(0, isinstance(t, kinds), desc)
    return t


def _like(t: Type, elem: Type) -> Type:
    """What a transformation of `t` gives: a Set stays a Set, a Vec or Group gives a Vec."""
    return TSet(elem) if isinstance(t, TSet) else TVec(elem)


def _rebuild_spark(sx, arr, t: Type):
    return sx.canonical_set(arr, t) if isinstance(t, TSet) else arr


def _rebuild(items, t: Type) -> tuple:
    return canonical_set(items) if isinstance(t, TSet) else tuple(items)


# -- closures --------------------------------------------------------------------------------


def _map_type(a: Args, hint) -> Type:
    t = _receiver(a, (TVec, TSet, TGroup))
    return _like(t, a.lambda_body(1, t.elem))


def _predicate(a: Args, kinds: tuple = COLLECTIONS,
               desc: str = "a Vec, Set or Group") -> Type:
    t = _receiver(a, kinds, desc)
    r = a.lambda_body(1, t.elem, hint=BOOL)
    if r != BOOL:
        a.fail(f"expects a closure returning bool, found {r}", 1)
    return t


def _filter_type(a: Args, hint) -> Type:
    t = _predicate(a)
    return _like(t, t.elem)


def _retain_type(a: Args, hint) -> Type:
    return _predicate(a, (TVec,), "a Vec")


def _flatmap_type(a: Args, hint) -> Type:
    t = _receiver(a, (TVec, TGroup), "a Vec or Group")
    r = a.lambda_body(1, t.elem)
    if not isinstance(r, TVec):
        a.fail(f"expects a closure returning a Vec, found {r}", 1)
    return TVec(r.elem)


def _filter_map_type(a: Args, hint) -> Type:
    t = _receiver(a)
    r = a.lambda_body(1, t.elem)
    if not isinstance(r, TOption):
        a.fail(f"expects a closure returning an Option, found {r}", 1)
    return _like(t, r.elem)


def _find_type(a: Args, hint) -> Type:
    return TOption(_predicate(a).elem)


def _test_type(a: Args, hint) -> Type:
    _predicate(a)
    return BOOL


def _count_type(a: Args, hint) -> Type:
    _predicate(a)
    return USIZE


def _fold_type(a: Args, hint) -> Type:
    t = _receiver(a)
    # the accumulator's type is the initial value's: the context's when that is a literal
    # (`fold(|a, x| a + x, 0)` summing s64), the elements' when nothing else says
    if hint is None and a.flexible(2) and is_numeric(t.elem):
        hint = t.elem
    acc = a.infer(2, hint)
    r = a.lambda_body(1, acc, t.elem, hint=acc)
    if r != acc:
        a.fail(f"expects a closure returning the accumulator's type {acc}, found {r}", 1)
    return acc


def _arg_type(a: Args, hint) -> Type:
    t = _receiver(a)
    a.lambda_body(1, t.elem)
    # a group is never empty: its arg_min is an element; a Vec's or Set's may not exist
    return t.elem if isinstance(t, TGroup) else TOption(t.elem)


def _sort_by_type(a: Args, hint) -> Type:
    t = _receiver(a, (TVec,), "a Vec")
    a.lambda_body(1, t.elem)
    return t


def _map_spark(sx, args, types, ty):
    return _rebuild_spark(sx, sx.F.transform(_items_spark(args[0], types[0]), args[1]), ty)


def _map_python(args, types, ty):
    return _rebuild([args[1](x) for x in _items(args[0], types[0])], ty)


def _filter_spark(sx, args, types, ty):
    return sx.F.filter(_items_spark(args[0], types[0]), args[1])


def _filter_python(args, types, ty):
    return tuple(x for x in _items(args[0], types[0]) if args[1](x))


def _filter_map_spark(sx, args, types, ty):
    F = sx.F
    mapped = F.transform(_items_spark(args[0], types[0]), args[1])
    return _rebuild_spark(sx, F.filter(mapped, lambda x: x.isNotNull()), ty)


def _filter_map_python(args, types, ty):
    mapped = (args[1](x) for x in _items(args[0], types[0]))
    return _rebuild([y for y in mapped if y is not None], ty)


def _fold_spark(sx, args, types, ty):
    return sx.F.aggregate(_items_spark(args[0], types[0]), args[2], args[1])


def _fold_python(args, types, ty):
    return functools.reduce(args[1], _items(args[0], types[0]), args[2])


def _arg_spark(best_of: str, last: bool):
    def lower(sx, args, types, ty):
        F = sx.F
        items, result = _items_spark(args[0], types[0]), types[1].result

        def fn(x):  # the closure's value, in an order Spark's array_min/max follow
            return sx.order_key(args[1](x), result)
        best = getattr(F, best_of)(F.transform(items, fn))
        ties = F.filter(items, lambda x: fn(x).eqNullSafe(best))
        return F.get(ties, F.size(ties) - 1) if last else F.get(ties, F.lit(0))
    return lower


def _arg_python(op: str, last_of_vec: bool):
    """A group's (and DDlog's group library's) arg_min/arg_max keep the first best element;
    a Vec's or Set's arg_max keeps the last (Rust's `max_by_key`)."""
    def meaning(args, types, ty):
        items, fn = _items(args[0], types[0]), args[1]
        if not items:
            return None
        last = last_of_vec and not isinstance(types[0], TGroup)
        best = items[0]
        for v in items[1:]:
            better = compare(op, fn(v), fn(best))
            if better or (last and fn(v) == fn(best)):
                best = v
        return best
    return meaning


def _comparator(sx, key, key_t: Type):
    F = sx.F

    def cmp(left, right):
        a, b = key(left), key(right)
        return F.when(sx.compare(a, b, "<", key_t), F.lit(-1)) \
            .when(sx.compare(a, b, ">", key_t), F.lit(1)).otherwise(F.lit(0))
    return cmp


def _sort_by_spark(sx, args, types, ty):
    return sx.F.array_sort(args[0], _comparator(sx, args[1], types[1].result))


def _sort_by_python(args, types, ty):
    return tuple(sorted(args[0], key=lambda x: sort_key(args[1](x))))


# -- no closure ------------------------------------------------------------------------------


def _len_type(a: Args, hint) -> Type:
    t = a.infer(0)
    a.want(0, t == STRING or isinstance(t, COLLECTIONS), "a string, Vec, Set or Group")
    return USIZE


def _len_spark(sx, args, types, ty):
    F = sx.F
    if types[0] == STRING:
        return F.length(args[0]).cast("long")
    return F.size(_items_spark(args[0], types[0])).cast("long")


def _len_python(args, types, ty):
    return len(args[0]) if types[0] == STRING else len(_items(args[0], types[0]))


def _nth_type(a: Args, hint) -> Type:
    t = _receiver(a)
    want_index(a, 1, "index")
    return TOption(t.elem)


def _nth_spark(sx, args, types, ty):
    F = sx.F
    items = _items_spark(args[0], types[0])
    i = args[1]
    return F.when((i >= 0) & (i < F.size(items)), F.get(items, i.cast("int")))


def _nth_python(args, types, ty):
    items, i = _items(args[0], types[0]), args[1]
    return items[i] if 0 <= i < len(items) else None


def _first_type(a: Args, hint) -> Type:
    t = _receiver(a)
    return t.elem if isinstance(t, TGroup) else TOption(t.elem)


def _end_spark(last: bool):
    def lower(sx, args, types, ty):
        F = sx.F
        items = _items_spark(args[0], types[0])
        return F.get(items, F.size(items) - 1) if last else F.get(items, F.lit(0))
    return lower


def _end_python(last: bool):
    def meaning(args, types, ty):
        items = _items(args[0], types[0])
        return (items[-1] if last else items[0]) if items else None
    return meaning


def _same_vec(a: Args, hint) -> Type:
    t = a.infer(0, hint if isinstance(hint, TVec) else None)
    a.want(0, isinstance(t, TVec), "a Vec")
    return t


def _push_imm_type(a: Args, hint) -> Type:
    if a.flexible(0) and not a.flexible(1):
        return a.check(0, TVec(a.infer(1)))  # `[].push_imm(x)`
    t = _same_vec(a, hint)
    a.check(1, t.elem)
    return t


def _append_type(a: Args, hint) -> Type:
    t = _same_vec(a, hint)
    a.check(1, t)
    return t


def _to_set_type(a: Args, hint) -> Type:
    t = a.infer(0, TVec(hint.elem) if isinstance(hint, TSet) else None)
    a.want(0, isinstance(t, (TVec, TSet, TGroup, TOption)), "a Vec, Set, Group or Option")
    return TSet(t.elem)


def _to_vec_type(a: Args, hint) -> Type:
    t = a.infer(0)
    a.want(0, isinstance(t, (TVec, TSet, TGroup, TOption)), "a Vec, Set, Group or Option")
    return TVec(t.elem)


DDWEIGHT = TInt(True, 64)  # DDlog's DDWeight, a record's multiplicity


def _singleton(name: str, kind: type) -> Builtin:
    """`vec_singleton(x)` / `set_singleton(x)`."""
    what = kind.__name__[1:]  # TVec -> Vec
    return Builtin(name, 1, f"{name}(A) -> {what}<A>", f"a {what} of one element",
                   _singleton_type(kind), lambda sx, a, ts, t: sx.F.array(a[0]),
                   lambda a, ts, t: (a[0],))


def _empty(name: str, kind: type) -> Builtin:
    """`vec_empty()` / `set_empty()`."""
    what = kind.__name__[1:]
    return Builtin(name, 0, f"{name}() -> {what}<A>", f"an empty {what} (A from the context)",
                   _empty_type(kind, name), empty_spark, lambda a, ts, t: ())


def _split_type(a: Args, hint) -> Type:
    a.check(0, STRING)
    a.check(1, STRING)
    return TVec(STRING)


def _split(s: str, sep: str) -> tuple:
    """Rust's `str::split` by a string: an empty separator splits around every character."""
    if sep == "":
        return ("", *s, "")
    return tuple(s.split(sep))


def _split_spark(sx, a, ts, t):
    F = sx.F
    s, sep = a
    # split takes a regex: the separator quoted (`\Q..\E`) is matched as it is
    pieces = F.split(s, F.concat(F.lit("\\Q"), F.replace(sep, F.lit("\\E"),
                                                          F.lit("\\E\\\\E\\Q")),
                                 F.lit("\\E")), -1)
    chars = F.when(s == "", F.array().cast("array<string>")).otherwise(F.split(s, "", -1))
    around = F.concat(F.array(F.lit("")), chars, F.array(F.lit("")))
    return F.when(sep == "", around).otherwise(pieces)


def _loop_items_type(a: Args, hint) -> Type:
    t = a.infer(0)
    a.want(0, isinstance(t, (TVec, TSet, TGroup, TMap)), "a Vec, Set, Map or Group")
    if isinstance(t, TMap):
        return TVec(TTuple((t.key, t.value)))
    return TVec(TTuple((t.elem, DDWEIGHT)) if isinstance(t, TGroup) else t.elem)


def _loop_items_spark(sx, a, ts, t):
    """What `for (x in c)` visits: a Map's entries, a Group's (value, weight) pairs (as
    DDlog's group iterator: each element, one per distinct valuation, with its multiplicity),
    the elements of anything else."""
    F, c, ct = sx.F, a[0], ts[0]
    if not isinstance(ct, TGroup):
        return c  # a Map is its array of entries
    items = _items_spark(c, ct)
    weights = F.coalesce(c.getField("weights"),
                         F.array_repeat(F.lit(1).cast("long"), F.size(items)))
    return F.zip_with(items, weights, lambda x, w: F.struct(x.alias("_0"), w.alias("_1")))


def _loop_items_python(a, ts, t):
    c, ct = a[0], ts[0]
    if not isinstance(ct, TGroup):
        return tuple(c)  # a Map is its tuple of entries
    items = _items(c, ct)
    return tuple(zip(items, c.weights or (1,) * len(items)))


def _option_items_spark(sx, c, t: Type):
    """The array of a Vec, Set, Group, or of an Option (empty or one element)."""
    F = sx.F
    if isinstance(t, TOption):
        return F.when(c.isNull(), F.array().cast(f"array<{_spark_name(sx, t.elem)}>")) \
            .otherwise(F.array(c))
    return _items_spark(c, t)


def _spark_name(sx, t: Type) -> str:
    return sx.spark_type(t).simpleString()


def _option_items(v, t: Type) -> tuple:
    if isinstance(t, TOption):
        return () if v is None else (v,)
    return _items(v, t)


def _join_type(a: Args, hint) -> Type:
    a.check(0, TVec(STRING))
    a.check(1, STRING)
    return STRING


def _set_elem_type(a: Args, hint) -> Type:
    t = a.infer(0, hint if isinstance(hint, TSet) else None)
    a.want(0, isinstance(t, TSet), "a Set")
    a.check(1, t.elem)
    return t


def _two_sets_type(a: Args, hint) -> Type:
    t = a.same(hint if isinstance(hint, TSet) else None, lambda t: isinstance(t, TSet),
               "two Sets of one element type")
    return t


def _unions_type(a: Args, hint) -> Type:
    t = a.infer(0, TVec(hint) if isinstance(hint, TSet) else None)
    a.want(0, isinstance(t, (TVec, TGroup)) and isinstance(t.elem, TSet),
           "a Vec or Group of Sets")
    return t.elem


def _unions_spark(sx, a, ts, t):
    return sx.canonical_set(sx.F.flatten(_items_spark(a[0], ts[0])), t)


def _unions_python(a, ts, t):
    return canonical_set([x for s in _items(a[0], ts[0]) for x in s])


def _unions(name: str) -> Builtin:
    return Builtin(name, 1, f"{name}(Vec<Set<A>> | Group<K, Set<A>>) -> Set<A>",
                   "the elements of any of the Sets", _unions_type, _unions_spark,
                   _unions_python)


def _singleton_type(kind):
    def rule(a: Args, hint) -> Type:
        inner = hint.elem if isinstance(hint, (TVec, TSet)) else None
        return kind(a.infer(0, inner))
    return rule


def _empty_type(kind, name: str):
    def rule(a: Args, hint) -> Type:
        if not isinstance(hint, (TVec, TSet)):
            a.fail(f"function '{name}' needs its type from the context (a column, a declared "
                   f"variable `var v: {kind.__name__[1:]}<T> = {name}()`, or an argument)")
        return kind(hint.elem)
    return rule


def empty_spark(sx, args, types, ty):
    """An empty collection of the call's type."""
    return sx.F.array().cast(sx.spark_type(ty))


def _range_type(a: Args, hint) -> Type:
    elem = hint.elem if isinstance(hint, TVec) else None
    t = a.same(elem, lambda t: isinstance(t, TInt), "three integers of one type")
    return TVec(t)


def _range_spark(sx, args, types, ty):
    F = sx.F
    lo, hi, step = args
    # Spark's sequence includes its end and fails on an empty range: clip to what DDlog gives
    last = hi - F.when(step > 0, F.lit(1)).otherwise(F.lit(-1))
    empty = (step == 0) | ((step > 0) & (lo >= hi)) | ((step < 0) & (lo <= hi))
    return F.when(empty, F.array().cast(f"array<{_spark_name(sx, ty.elem)}>")) \
        .otherwise(F.sequence(lo, last, step))


def _range_python(args, types, ty):
    lo, hi, step = args
    return tuple(range(lo, hi, step)) if step != 0 else ()


def _vec_index_elem(what: str):
    """The rule of `f(Vec<A>, usize, A) -> Vec<A>` (resize, update_nth)."""
    def rule(a: Args, hint) -> Type:
        t = _same_vec(a, hint)
        want_index(a, 1, what)
        a.check(2, t.elem)
        return t
    return rule


def _resize_spark(sx, args, types, ty):
    F = sx.F
    v, n, x = args
    n = F.greatest(n, F.lit(0)).cast("int")
    pad = F.array_repeat(x, (n - F.size(v)).cast("int"))
    return F.when(F.size(v) >= n, F.slice(v, 1, n)).otherwise(F.concat(v, pad))


def _resize_python(args, types, ty):
    v, n, x = args
    n = max(n, 0)
    return tuple(v[:n]) + (x,) * max(0, n - len(v))


def _truncate_type(a: Args, hint) -> Type:
    t = _same_vec(a, hint)
    want_index(a, 1, "size")
    return t


def _update_nth_spark(sx, args, types, ty):
    F = sx.F
    v, i, x = args
    return F.transform(v, lambda e, k: F.when(k == i, x).otherwise(e))


def _update_nth_python(args, types, ty):
    v, i, x = args
    return tuple(x if k == i else e for k, e in enumerate(v))


def _unwrap_default_type(a: Args, hint) -> Type:
    t = a.infer(0, TOption(hint) if hint is not None else None)
    a.want(0, isinstance(t, TOption), "an Option")
    return t.elem


def default_value(t: Type) -> Any:
    """DDlog's `Default` of a type: 0, 0.0, false, "", empty collections, None, and tuples and
    structs of defaults (a struct's first constructor)."""
    if isinstance(t, TInt):
        return 0
    if isinstance(t, TFloat):
        return 0.0
    if t == BOOL:
        return False
    if isinstance(t, TString):
        return t.default
    if isinstance(t, (TVec, TSet, TMap)):
        return ()
    if isinstance(t, TOption):
        return None
    if isinstance(t, TTuple):
        return tuple(default_value(x) for x in t.items)
    if isinstance(t, TStruct):
        c = t.ctors[0]
        return Record(c.name, tuple(default_value(ft) for _, ft in c.fields))
    raise TypeError(f"no default value for {t}")


def _default_type(a: Args, hint) -> Type:
    if hint is None:
        a.fail("function 'default' needs its type from the context (a column, an argument, or "
               "`default(): T`)")
    try:
        default_value(hint)
    except TypeError:
        a.fail(f"function 'default' has no value of type {hint}")
    return hint


def _pow_type(a: Args, hint) -> Type:
    t = a.infer(0, hint if isinstance(hint, TInt) else None)
    a.want(0, isinstance(t, TInt), "an integer")
    a.check(1, TInt(False, 32))
    return t


def _pow_spark(sx, args, types, ty):
    F = sx.F
    base, n = args
    # exact (a double's pow would round): n multiplications, each wrapped to the type
    return F.aggregate(F.array_repeat(base, n.cast("int")), sx.lit(1, ty),
                       lambda acc, x: sx.arith("*", acc, x, ty))


def _pow_python(args, types, ty):
    base, n = args
    if ty.width is None:
        return base ** n
    return fix_number(pow(base, n, 1 << ty.width), ty)


def _unwrap_default_spark(sx, args, types, ty):
    return sx.F.coalesce(args[0], sx.value(default_value(ty), ty))


def _is_empty_type(a: Args, hint) -> Type:
    _len_type(a, hint)
    return BOOL


def _dedup_python(args, types, ty):
    out: list = []
    for x in args[0]:
        if not out or out[-1] != x:
            out.append(x)
    return tuple(out)


def _dedup_spark(sx, args, types, ty):
    F = sx.F
    v = args[0]
    # keep an element unless it equals the one before it (DDlog's Vec::dedup)
    kept = F.filter(F.transform(v, lambda x, i: F.struct(x.alias("x"), i.alias("i"))),
                    lambda p: (p["i"] == 0) | ~p["x"].eqNullSafe(F.get(v, p["i"] - 1)))
    return F.transform(kept, lambda p: p["x"])


def _zip_type(a: Args, hint) -> Type:
    pair = hint.elem.items if isinstance(hint, TVec) and isinstance(hint.elem, TTuple) \
        and len(hint.elem.items) == 2 else (None, None)
    left = a.infer(0, TVec(pair[0]) if pair[0] is not None else None)
    right = a.infer(1, TVec(pair[1]) if pair[1] is not None else None)
    a.want(0, isinstance(left, TVec), "a Vec")
    a.want(1, isinstance(right, TVec), "a Vec")
    return TVec(TTuple((left.elem, right.elem)))


def _zip_spark(sx, args, types, ty):
    F = sx.F
    v, w = args
    n = F.least(F.size(v), F.size(w))
    return F.transform(F.slice(v, 1, n),
                       lambda x, i: F.struct(x.alias("_0"), F.get(w, i).alias("_1")))


def _unzip_type(a: Args, hint) -> Type:
    t = a.infer(0)
    pairs = isinstance(t, TVec) and isinstance(t.elem, TTuple) and len(t.elem.items) == 2
    a.want(0, pairs, "a Vec of pairs")
    return TTuple((TVec(t.elem.items[0]), TVec(t.elem.items[1])))


def _unzip_spark(sx, args, types, ty):
    F = sx.F
    v = args[0]
    return F.struct(F.transform(v, lambda e: e["_0"]).alias("_0"),
                    F.transform(v, lambda e: e["_1"]).alias("_1"))


def _push(a, ts, t):
    return a[0] + (a[1],)


LIBRARY: dict[str, Builtin] = {b.name: b for b in [
    # closures
    Builtin("map", 2, "map(Vec<A> | Set<A> | Group<K, A>, |A| B) -> Vec<B> (Set<B> for a Set)",
            "the closure applied to every element", _map_type, _map_spark, _map_python),
    Builtin("flatmap", 2, "flatmap(Vec<A> | Group<K, A>, |A| Vec<B>) -> Vec<B>",
            "the Vecs the closure returns, concatenated", _flatmap_type,
            lambda sx, a, ts, t: sx.F.flatten(sx.F.transform(_items_spark(a[0], ts[0]), a[1])),
            lambda a, ts, t: tuple(y for x in _items(a[0], ts[0]) for y in a[1](x))),
    Builtin("filter", 2, "filter(Vec<A> | Set<A> | Group<K, A>, |A| bool) -> Vec<A> "
            "(Set<A> for a Set)", "the elements the closure accepts, in order",
            _filter_type, _filter_spark, _filter_python),
    Builtin("retain", 2, "retain(Vec<A>, |A| bool) -> Vec<A>",
            "the elements the closure accepts (`v.retain(f);` changes v)", _retain_type,
            _filter_spark, _filter_python),
    Builtin("filter_map", 2, "filter_map(Vec<A> | Set<A> | Group<K, A>, |A| Option<B>) -> "
            "Vec<B> (Set<B> for a Set)", "the values of the closure's Some results",
            _filter_map_type, _filter_map_spark, _filter_map_python),
    Builtin("find", 2, "find(Vec<A> | Set<A> | Group<K, A>, |A| bool) -> Option<A>",
            "the first element the closure accepts", _find_type,
            lambda sx, a, ts, t: sx.F.get(_filter_spark(sx, a, ts, t), sx.F.lit(0)),
            lambda a, ts, t: next((x for x in _items(a[0], ts[0]) if a[1](x)), None)),
    Builtin("any", 2, "any(Vec<A> | Set<A> | Group<K, A>, |A| bool) -> bool",
            "whether the closure accepts some element", _test_type,
            lambda sx, a, ts, t: sx.F.exists(_items_spark(a[0], ts[0]), a[1]),
            lambda a, ts, t: any(a[1](x) for x in _items(a[0], ts[0]))),
    Builtin("all", 2, "all(Vec<A> | Set<A> | Group<K, A>, |A| bool) -> bool",
            "whether the closure accepts every element", _test_type,
            lambda sx, a, ts, t: sx.F.forall(_items_spark(a[0], ts[0]), a[1]),
            lambda a, ts, t: all(a[1](x) for x in _items(a[0], ts[0]))),
    Builtin("count", 2, "count(Vec<A> | Set<A> | Group<K, A>, |A| bool) -> usize",
            "how many elements the closure accepts", _count_type,
            lambda sx, a, ts, t: sx.F.size(_filter_spark(sx, a, ts, t)).cast("long"),
            lambda a, ts, t: sum(1 for x in _items(a[0], ts[0]) if a[1](x))),
    Builtin("fold", 3, "fold(Vec<A> | Set<A> | Group<K, A>, |B, A| B, B) -> B",
            "the closure applied to an accumulator and each element in order",
            _fold_type, _fold_spark, _fold_python),
    Builtin("arg_min", 2, "arg_min(Vec<A> | Set<A>, |A| B) -> Option<A>, "
            "arg_min(Group<K, A>, |A| B) -> A",
            "the element with the smallest closure value (the first among ties)", _arg_type,
            _arg_spark("array_min", last=False), _arg_python("<", last_of_vec=False)),
    Builtin("arg_max", 2, "arg_max(Vec<A> | Set<A>, |A| B) -> Option<A>, "
            "arg_max(Group<K, A>, |A| B) -> A",
            "the element with the largest closure value (among ties: a group's first, a Vec's "
            "or Set's last, as DDlog)", _arg_type,
            lambda sx, a, ts, t: _arg_spark("array_max", last=not isinstance(ts[0], TGroup))(
                sx, a, ts, t),
            _arg_python(">", last_of_vec=True)),
    Builtin("sort_by", 2, "sort_by(Vec<A>, |A| B) -> Vec<A>",
            "sorted by the closure's value (`v.sort_by(f);` changes v)", _sort_by_type,
            _sort_by_spark, _sort_by_python),
    # sizes and elements
    Builtin("len", 1, "len(string | Vec<A> | Set<A> | Group<K, A>) -> usize",
            "characters of a string / elements of a collection", _len_type, _len_spark,
            _len_python),
    Builtin("size", 1, "size(Vec<A> | Set<A> | Group<K, A>) -> usize", "number of elements",
            _len_type, _len_spark, _len_python),
    Builtin("is_empty", 1, "is_empty(string | Vec<A> | Set<A>) -> bool", "no element",
            _is_empty_type, lambda sx, a, ts, t: _len_spark(sx, a, ts, t) == 0,
            lambda a, ts, t: _len_python(a, ts, t) == 0),
    Builtin("nth", 2, "nth(Vec<A> | Set<A> | Group<K, A>, usize) -> Option<A>",
            "the element at a 0-based index, None beyond the end", _nth_type, _nth_spark,
            _nth_python),
    Builtin("first", 1, "first(Vec<A> | Set<A>) -> Option<A>, first(Group<K, A>) -> A",
            "the first (a group's: smallest) element", _first_type, _end_spark(False),
            _end_python(False)),
    Builtin("last", 1, "last(Vec<A> | Set<A>) -> Option<A>, last(Group<K, A>) -> A",
            "the last element", _first_type, _end_spark(True), _end_python(True)),
    Builtin("to_set", 1, "to_set(Vec<A> | Group<K, A> | Option<A> | Set<A>) -> Set<A>",
            "the distinct elements, sorted", _to_set_type,
            lambda sx, a, ts, t: sx.canonical_set(_option_items_spark(sx, a[0], ts[0]), t),
            lambda a, ts, t: canonical_set(_option_items(a[0], ts[0]))),
    Builtin("to_vec", 1, "to_vec(Set<A> | Group<K, A> | Option<A> | Vec<A>) -> Vec<A>",
            "the elements in order", _to_vec_type,
            lambda sx, a, ts, t: _option_items_spark(sx, a[0], ts[0]),
            lambda a, ts, t: _option_items(a[0], ts[0])),
    Builtin("loop_items", 1, "loop_items(Vec<A> | Set<A>) -> Vec<A>, loop_items(Map<K, V>) -> "
            "Vec<(K, V)>, loop_items(Group<K, A>) -> Vec<(A, s64)>",
            "what `for (x in c)` visits", _loop_items_type, _loop_items_spark,
            _loop_items_python),
    # Vec
    Builtin("push_imm", 2, "push_imm(Vec<A>, A) -> Vec<A>", "the Vec with one more element",
            _push_imm_type, lambda sx, a, ts, t: sx.F.concat(a[0], sx.F.array(a[1])),
            lambda a, ts, t: _push(a, ts, t)),
    Builtin("append", 2, "append(Vec<A>, Vec<A>) -> Vec<A>", "the two Vecs one after the other",
            _append_type, lambda sx, a, ts, t: sx.F.concat(a[0], a[1]),
            lambda a, ts, t: a[0] + a[1]),
    Builtin("sort", 1, "sort(Vec<A>) -> Vec<A>", "sorted (`v.sort();` changes v)", _same_vec,
            lambda sx, a, ts, t: sx.sort(a[0], ts[0].elem),
            lambda a, ts, t: tuple(sorted(a[0], key=sort_key))),
    Builtin("sort_imm", 1, "sort_imm(Vec<A>) -> Vec<A>", "sorted", _same_vec,
            lambda sx, a, ts, t: sx.sort(a[0], ts[0].elem),
            lambda a, ts, t: tuple(sorted(a[0], key=sort_key))),
    Builtin("dedup", 1, "dedup(Vec<A>) -> Vec<A>",
            "without consecutive repeats (`v.dedup();` changes v)", _same_vec, _dedup_spark,
            _dedup_python),
    Builtin("reverse", 1, "reverse(Vec<A>) -> Vec<A>", "in reverse order", _same_vec,
            lambda sx, a, ts, t: sx.F.reverse(a[0]), lambda a, ts, t: tuple(reversed(a[0]))),
    Builtin("reverse_imm", 1, "reverse_imm(Vec<A>) -> Vec<A>", "in reverse order", _same_vec,
            lambda sx, a, ts, t: sx.F.reverse(a[0]), lambda a, ts, t: tuple(reversed(a[0]))),
    Builtin("resize", 3, "resize(Vec<A>, usize, A) -> Vec<A>",
            "cut or padded with the value to the size", _vec_index_elem("size"), _resize_spark,
            _resize_python),
    Builtin("truncate", 2, "truncate(Vec<A>, usize) -> Vec<A>", "the first n elements",
            _truncate_type,
            lambda sx, a, ts, t: sx.F.slice(a[0], 1, sx.F.greatest(a[1], sx.F.lit(0))
                                            .cast("int")),
            lambda a, ts, t: tuple(a[0][:max(a[1], 0)])),
    Builtin("update_nth", 3, "update_nth(Vec<A>, usize, A) -> Vec<A>",
            "the element at the index replaced (no change beyond the end)",
            _vec_index_elem("index"),
            _update_nth_spark, _update_nth_python),
    Builtin("zip", 2, "zip(Vec<A>, Vec<B>) -> Vec<(A, B)>",
            "the pairs of elements at one index, as long as the shorter Vec", _zip_type,
            _zip_spark, lambda a, ts, t: tuple(zip(a[0], a[1]))),
    Builtin("unzip", 1, "unzip(Vec<(A, B)>) -> (Vec<A>, Vec<B>)",
            "the pairs' first and second elements", _unzip_type, _unzip_spark,
            lambda a, ts, t: (tuple(x for x, _ in a[0]), tuple(y for _, y in a[0]))),
    Builtin("join", 2, "join(Vec<string>, string) -> string", "the strings with a separator",
            _join_type, lambda sx, a, ts, t: sx.F.call_function("array_join", a[0], a[1]),
            lambda a, ts, t: a[1].join(a[0])),
    Builtin("split", 2, "split(string, string) -> Vec<string>",
            "the pieces between the separators (as Rust's `split`: empty pieces kept)",
            _split_type, _split_spark, lambda a, ts, t: _split(a[0], a[1])),
    _singleton("vec_singleton", TVec),
    _empty("vec_empty", TVec),
    Builtin("vec_with_capacity", 1, "vec_with_capacity(usize) -> Vec<A>",
            "an empty Vec (A from the context)", _empty_type(TVec, "vec_with_capacity"),
            empty_spark, lambda a, ts, t: ()),
    Builtin("range_vec", 3, "range_vec(N, N, N) -> Vec<N>, N an integer type",
            "from, up to (excluded), by step", _range_type, _range_spark, _range_python),
    # Set
    Builtin("insert", 2, "insert(Set<A>, A) -> Set<A>",
            "the Set with the element (`s.insert(x);` changes s)", _set_elem_type,
            lambda sx, a, ts, t: sx.canonical_set(sx.F.concat(a[0], sx.F.array(a[1])), t),
            lambda a, ts, t: canonical_set(a[0] + (a[1],))),
    Builtin("insert_imm", 2, "insert_imm(Set<A>, A) -> Set<A>", "the Set with the element",
            _set_elem_type,
            lambda sx, a, ts, t: sx.canonical_set(sx.F.concat(a[0], sx.F.array(a[1])), t),
            lambda a, ts, t: canonical_set(a[0] + (a[1],))),
    Builtin("remove", 2, "remove(Set<A>, A) -> Set<A>",
            "the Set without the element (`s.remove(x);` changes s)", _set_elem_type,
            lambda sx, a, ts, t: sx.F.array_remove(a[0], a[1]),
            lambda a, ts, t: tuple(x for x in a[0] if x != a[1])),
    Builtin("union", 2, "union(Set<A>, Set<A>) -> Set<A>", "the elements of either",
            _two_sets_type, lambda sx, a, ts, t: sx.canonical_set(sx.F.array_union(a[0], a[1]), t),
            lambda a, ts, t: canonical_set(a[0] + a[1])),
    Builtin("set_union", 2, "set_union(Set<A>, Set<A>) -> Set<A>", "the elements of either",
            _two_sets_type, lambda sx, a, ts, t: sx.canonical_set(sx.F.array_union(a[0], a[1]), t),
            lambda a, ts, t: canonical_set(a[0] + a[1])),
    Builtin("set_intersection", 2, "set_intersection(Set<A>, Set<A>) -> Set<A>",
            "the elements of both", _two_sets_type,
            lambda sx, a, ts, t: sx.F.array_intersect(a[0], a[1]),
            lambda a, ts, t: tuple(x for x in a[0] if x in a[1])),
    Builtin("set_difference", 2, "set_difference(Set<A>, Set<A>) -> Set<A>",
            "the elements of the first that are not in the second", _two_sets_type,
            lambda sx, a, ts, t: sx.F.array_except(a[0], a[1]),
            lambda a, ts, t: tuple(x for x in a[0] if x not in a[1])),
    _unions("unions"), _unions("set_unions"), _unions("group_set_unions"),
    # a Ref<Set<A>> is its Set<A>
    _unions("setref_unions"), _unions("group_setref_unions"),
    _singleton("set_singleton", TSet),
    _empty("set_empty", TSet),
    Builtin("default", 0, "default() -> T", "T's default value (0, \"\", false, empty, None, "
            "...; T from the context or `default(): T`)", _default_type,
            lambda sx, a, ts, t: sx.value(default_value(t), t),
            lambda a, ts, t: default_value(t)),
    Builtin("pow32", 2, "pow32(N, u32) -> N, N an integer type",
            "the power, wrapped to the type as repeated `*` is", _pow_type, _pow_spark,
            _pow_python),
    # Option
    Builtin("unwrap_or_default", 1, "unwrap_or_default(Option<T>) -> T",
            "the value, or T's default (0, \"\", false, empty, None, ...) when None",
            _unwrap_default_type, _unwrap_default_spark,
            lambda a, ts, t: default_value(t) if a[0] is None else a[0]),
]}
