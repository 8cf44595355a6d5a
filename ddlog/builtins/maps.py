"""DDlog's `Map<K, V>` (its `ddlog_std` and `map` modules): the functions only a Map has
(`get`, `contains_key`, `keys`, ...) and a Map's own version of the functions other
collections have too (`size`, `insert`, `map`, `filter`, `fold`, ...), which `overload` joins
with theirs under one name.

A Map value is its entries `(k, v)`, sorted by key, one per key (ddlog/types.py says why): on
Spark an array of structs (`_0` the key, `_1` the value), in Python a tuple of pairs. Closures
over a Map take the value (`|v|`) or the key and the value (`|k, v|`), as DDlog's do; `fold`'s
take the accumulator first.

`insert` and `remove` are DDlog's mutating methods: here functions returning the changed Map
(a statement `m.remove(k);` changes m), and `var x = m.remove(k);` binds x to `map_remove`,
the value the key had, as DDlog's `remove` returns it (ddlog/syntax/blocks.py).
"""
from __future__ import annotations

from ddlog.builtins.base import Args, Builtin
from ddlog.builtins.library import empty_spark, want_index
from ddlog.types import BOOL, USIZE, TGroup, TMap, TOption, TSet, TTuple, TVec, Type
from ddlog.values import canonical_map

# -- type rules ------------------------------------------------------------------------------


def _receiver(a: Args, hint=None) -> TMap:
    t = a.infer(0, hint if isinstance(hint, TMap) else None)
    a.want(0, isinstance(t, TMap), "a Map")
    return t


def _closure(a: Args, i: int, t: TMap, extra: tuple[Type, ...] = (), hint=None) -> Type:
    """Type the closure at `i`: of the value, or of the key and the value when it has two
    parameters after the `extra` ones (fold's accumulator); its result type."""
    both = a.lambda_arity(i) == len(extra) + 2
    parts = (t.key, t.value) if both else (t.value,)
    return a.lambda_body(i, *extra, *parts, hint=hint)


def _predicate(a: Args) -> TMap:
    t = _receiver(a)
    r = _closure(a, 1, t, hint=BOOL)
    if r != BOOL:
        a.fail(f"expects a closure returning bool, found {r}", 1)
    return t


def _same_map(a: Args, hint) -> Type:
    return _predicate(a)


def _test_type(a: Args, hint) -> Type:
    _predicate(a)
    return BOOL


def _find_type(a: Args, hint) -> Type:
    return TOption(_predicate(a).value)


def _map_type(a: Args, hint) -> Type:
    t = _receiver(a)
    return TMap(t.key, _closure(a, 1, t))


def _in_place_type(a: Args, hint) -> Type:
    t = _receiver(a)
    a.arity(2)
    if a.lambda_arity(1) != 2:
        a.fail("expects a closure of the key and the value changing the value "
               "(`|k, v| v.x = e`)", 1)
    a.lambda_body(1, t.key, t.value, changes=1)
    return t


def _map_keys_type(a: Args, hint) -> Type:
    t = _receiver(a)
    return TMap(a.lambda_body(1, t.key), t.value)


def _filter_map_type(a: Args, hint) -> Type:
    t = _receiver(a)
    r = _closure(a, 1, t)
    if not isinstance(r, TOption):
        a.fail(f"expects a closure returning an Option, found {r}", 1)
    return TMap(t.key, r.elem)


def _fold_type(a: Args, hint) -> Type:
    t = _receiver(a)
    acc = a.infer(2, hint)
    r = _closure(a, 1, t, (acc,), hint=acc)
    if r != acc:
        a.fail(f"expects a closure returning the accumulator's type {acc}, found {r}", 1)
    return acc


def _of_map(result: Type):
    """The rule of a function of a Map alone returning `result`."""
    def rule(a: Args, hint) -> Type:
        _receiver(a)
        return result
    return rule


def _insert_type(a: Args, hint) -> Type:
    t = _receiver(a, hint)
    a.check(1, t.key)
    a.check(2, t.value)
    return t


def _key_type(result):
    def rule(a: Args, hint) -> Type:
        t = _receiver(a, hint)
        a.check(1, t.key)
        return result(t)
    return rule


def _union_type(a: Args, hint) -> Type:
    return a.same(hint if isinstance(hint, TMap) else None, lambda t: isinstance(t, TMap),
                  "two Maps of one type")


def _nth_type(part: str):
    def rule(a: Args, hint) -> Type:
        t = _receiver(a)
        want_index(a, 1, "index")
        return TOption(getattr(t, part))
    return rule


def _parts_type(part: str):
    def rule(a: Args, hint) -> Type:
        return TVec(getattr(_receiver(a), part))
    return rule


def _to_map_type(a: Args, hint) -> Type:
    want = TVec(hint.elem) if isinstance(hint, TMap) else None
    t = a.infer(0, want)
    pairs = isinstance(t, (TVec, TGroup)) and isinstance(t.elem, TTuple) \
        and len(t.elem.items) == 2
    a.want(0, pairs, "a Vec or Group of pairs (K, V)")
    return TMap(*t.elem.items)


def _entries_type(a: Args, hint) -> Type:
    return TVec(_receiver(a).elem)


def _empty_type(a: Args, hint) -> Type:
    if not isinstance(hint, TMap):
        a.fail("function 'map_empty' needs its type from the context (a column, a declared "
               "variable `var m: Map<K, V> = map_empty()`, or an argument)")
    return hint


def _singleton_type(a: Args, hint) -> Type:
    k = a.infer(0, hint.key if isinstance(hint, TMap) else None)
    v = a.infer(1, hint.value if isinstance(hint, TMap) else None)
    return TMap(k, v)


# -- Spark: entries are structs (_0 key, _1 value) ---------------------------------------------


def _entry(sx, k, v):
    return sx.F.struct(k.alias("_0"), v.alias("_1"))


def _apply(fn, n: int):
    """The closure as a function of an entry: of its value, or of its key and value."""
    return (lambda e: fn(e["_0"], e["_1"])) if n == 2 else (lambda e: fn(e["_1"]))


def _n(types: list, extra: int = 0) -> int:
    """How many of the entry's parts the closure (argument 1) takes, after `extra`
    parameters of its own (fold's accumulator)."""
    return len(types[1].params) - extra


def _filter_spark(sx, a, ts, t):
    return sx.F.filter(a[0], _apply(a[1], _n(ts)))


def _map_spark(sx, a, ts, t):
    f = _apply(a[1], _n(ts))
    return sx.F.transform(a[0], lambda e: _entry(sx, e["_0"], f(e)))


def _map_keys_spark(sx, a, ts, t):
    return sx.canonical_map(sx.F.transform(a[0], lambda e: _entry(sx, a[1](e["_0"]), e["_1"])),
                            t)


def _filter_map_spark(sx, a, ts, t):
    F = sx.F
    f = _apply(a[1], _n(ts))
    mapped = F.transform(a[0], lambda e: _entry(sx, e["_0"], f(e)))
    return F.filter(mapped, lambda e: e["_1"].isNotNull())


def _fold_spark(sx, a, ts, t):
    fn = a[1]
    step = (lambda acc, e: fn(acc, e["_0"], e["_1"])) if _n(ts, 1) == 2 \
        else (lambda acc, e: fn(acc, e["_1"]))
    return sx.F.aggregate(a[0], a[2], step)


def _with_key(sx, m, k):
    return sx.F.filter(m, lambda e: e["_0"].eqNullSafe(k))


def _nth_spark(part: str):
    def lower(sx, a, ts, t):
        F = sx.F
        m, i = a
        return F.when((i >= 0) & (i < F.size(m)), F.get(m, i.cast("int"))[part])
    return lower


# -- Python: a tuple of (key, value) pairs -----------------------------------------------------


def _call(fn, n: int, k, v):
    return fn(k, v) if n == 2 else fn(v)


def _map_python(a, ts, t):
    n = _n(ts)
    return tuple((k, _call(a[1], n, k, v)) for k, v in a[0])


def _filter_python(a, ts, t):
    n = _n(ts)
    return tuple((k, v) for k, v in a[0] if _call(a[1], n, k, v))


def _filter_map_python(a, ts, t):
    n = _n(ts)
    mapped = ((k, _call(a[1], n, k, v)) for k, v in a[0])
    return tuple((k, y) for k, y in mapped if y is not None)


def _fold_python(a, ts, t):
    acc, fn, n = a[2], a[1], _n(ts, 1)
    for k, v in a[0]:
        acc = fn(acc, k, v) if n == 2 else fn(acc, v)
    return acc


def _get_python(a, ts, t):
    return next((v for k, v in a[0] if k == a[1]), None)


def _nth_python(part: int):
    def meaning(a, ts, t):
        m, i = a
        return m[i][part] if 0 <= i < len(m) else None
    return meaning


def _to_map_python(a, ts, t):
    items = a[0].items if isinstance(ts[0], TGroup) else a[0]
    return canonical_map(items)


def _to_map_spark(sx, a, ts, t):
    items = a[0].getField("items") if isinstance(ts[0], TGroup) else a[0]
    return sx.canonical_map(items, t)


# -- the entries ---------------------------------------------------------------------------

MAP_ONLY: dict[str, Builtin] = {b.name: b for b in [
    Builtin("get", 2, "get(Map<K, V>, K) -> Option<V>", "the value of a key, None without it",
            _key_type(lambda t: TOption(t.value)),
            lambda sx, a, ts, t: sx.F.get(_with_key(sx, a[0], a[1]), sx.F.lit(0))["_1"],
            _get_python),
    Builtin("contains_key", 2, "contains_key(Map<K, V>, K) -> bool", "whether the key has a value",
            _key_type(lambda t: BOOL),
            lambda sx, a, ts, t: sx.F.exists(a[0], lambda e: e["_0"].eqNullSafe(a[1])),
            lambda a, ts, t: any(k == a[1] for k, _ in a[0])),
    Builtin("map_remove", 2, "map_remove(Map<K, V>, K) -> Option<V>",
            "the value the key has (`var x = m.remove(k);` gives it and removes the key)",
            _key_type(lambda t: TOption(t.value)),
            lambda sx, a, ts, t: sx.F.get(_with_key(sx, a[0], a[1]), sx.F.lit(0))["_1"],
            _get_python),
    Builtin("keys", 1, "keys(Map<K, V>) -> Vec<K>", "the keys, in order", _parts_type("key"),
            lambda sx, a, ts, t: sx.F.transform(a[0], lambda e: e["_0"]),
            lambda a, ts, t: tuple(k for k, _ in a[0])),
    Builtin("values", 1, "values(Map<K, V>) -> Vec<V>", "the values, in the keys' order",
            _parts_type("value"), lambda sx, a, ts, t: sx.F.transform(a[0], lambda e: e["_1"]),
            lambda a, ts, t: tuple(v for _, v in a[0])),
    Builtin("nth_key", 2, "nth_key(Map<K, V>, usize) -> Option<K>",
            "the n-th smallest key (0-based)", _nth_type("key"), _nth_spark("_0"),
            _nth_python(0)),
    Builtin("nth_value", 2, "nth_value(Map<K, V>, usize) -> Option<V>",
            "the value of the n-th smallest key", _nth_type("value"), _nth_spark("_1"),
            _nth_python(1)),
    Builtin("map_keys", 2, "map_keys(Map<K, V>, |K| K2) -> Map<K2, V>",
            "the keys changed by the closure (of keys that collide, the last one's value stays)",
            _map_keys_type, _map_keys_spark,
            lambda a, ts, t: canonical_map((a[1](k), v) for k, v in a[0])),
    Builtin("map_in_place", 2, "map_in_place(Map<K, V>, |K, mut V|) -> Map<K, V>",
            "each value as the closure changes it (`m.map_in_place(|k, v| v.x = e);` changes m)",
            _in_place_type, _map_spark, _map_python),
    Builtin("to_map", 1, "to_map(Vec<(K, V)> | Group<G, (K, V)>) -> Map<K, V>",
            "the pairs as a Map (of pairs with one key, the last one's value stays)",
            _to_map_type, _to_map_spark, _to_map_python),
    Builtin("map_empty", 0, "map_empty() -> Map<K, V>", "an empty Map (K, V from the context)",
            _empty_type, empty_spark, lambda a, ts, t: ()),
    Builtin("map_singleton", 2, "map_singleton(K, V) -> Map<K, V>", "a Map of one entry",
            _singleton_type, lambda sx, a, ts, t: sx.F.array(_entry(sx, a[0], a[1])),
            lambda a, ts, t: ((a[0], a[1]),)),
]}

# A Map's version of functions other receivers have too (joined with theirs by `overload`).
ON_MAPS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("size", 1, "size(Map<K, V>) -> usize", "number of entries", _of_map(USIZE),
            lambda sx, a, ts, t: sx.F.size(a[0]).cast("long"), lambda a, ts, t: len(a[0])),
    Builtin("is_empty", 1, "is_empty(Map<K, V>) -> bool", "no entry", _of_map(BOOL),
            lambda sx, a, ts, t: sx.F.size(a[0]) == 0, lambda a, ts, t: not a[0]),
    Builtin("insert", 3, "insert(Map<K, V>, K, V) -> Map<K, V>",
            "the Map with the key's value set (`m.insert(k, v);` changes m)", _insert_type,
            lambda sx, a, ts, t: sx.canonical_map(
                sx.F.concat(a[0], sx.F.array(_entry(sx, a[1], a[2]))), t),
            lambda a, ts, t: canonical_map(a[0] + ((a[1], a[2]),))),
    Builtin("insert_imm", 3, "insert_imm(Map<K, V>, K, V) -> Map<K, V>",
            "the Map with the key's value set", _insert_type,
            lambda sx, a, ts, t: sx.canonical_map(
                sx.F.concat(a[0], sx.F.array(_entry(sx, a[1], a[2]))), t),
            lambda a, ts, t: canonical_map(a[0] + ((a[1], a[2]),))),
    Builtin("remove", 2, "remove(Map<K, V>, K) -> Map<K, V>",
            "the Map without the key (`m.remove(k);` changes m)", _key_type(lambda t: t),
            lambda sx, a, ts, t: sx.F.filter(a[0], lambda e: ~e["_0"].eqNullSafe(a[1])),
            lambda a, ts, t: tuple((k, v) for k, v in a[0] if k != a[1])),
    Builtin("union", 2, "union(Map<K, V>, Map<K, V>) -> Map<K, V>",
            "the entries of both (the second's value for a key in both)", _union_type,
            lambda sx, a, ts, t: sx.canonical_map(sx.F.concat(a[0], a[1]), t),
            lambda a, ts, t: canonical_map(a[0] + a[1])),
    Builtin("map", 2, "map(Map<K, V>, |V| W or |K, V| W) -> Map<K, W>",
            "the values changed by the closure", _map_type, _map_spark, _map_python),
    Builtin("filter", 2, "filter(Map<K, V>, |V| bool or |K, V| bool) -> Map<K, V>",
            "the entries the closure accepts", _same_map, _filter_spark, _filter_python),
    Builtin("retain", 2, "retain(Map<K, V>, |V| bool or |K, V| bool) -> Map<K, V>",
            "the entries the closure accepts (`m.retain(f);` changes m)", _same_map,
            _filter_spark, _filter_python),
    Builtin("filter_map", 2, "filter_map(Map<K, V>, |V| Option<W> or |K, V| Option<W>) -> "
            "Map<K, W>", "the entries whose closure value is Some, with that value",
            _filter_map_type, _filter_map_spark, _filter_map_python),
    Builtin("fold", 3, "fold(Map<K, V>, |B, V| B or |B, K, V| B, B) -> B",
            "the closure applied to an accumulator and each entry in key order", _fold_type,
            _fold_spark, _fold_python),
    Builtin("find", 2, "find(Map<K, V>, |V| bool) -> Option<V>",
            "the value of the first entry the closure accepts", _find_type,
            lambda sx, a, ts, t: sx.F.get(_filter_spark(sx, a, ts, t), sx.F.lit(0))["_1"],
            lambda a, ts, t: next((v for k, v in _filter_python(a, ts, t)), None)),
    Builtin("any", 2, "any(Map<K, V>, |V| bool or |K, V| bool) -> bool",
            "whether the closure accepts some entry", _test_type,
            lambda sx, a, ts, t: sx.F.exists(a[0], _apply(a[1], _n(ts))),
            lambda a, ts, t: bool(_filter_python(a, ts, t))),
    Builtin("to_vec", 1, "to_vec(Map<K, V>) -> Vec<(K, V)>", "the entries, in key order",
            _entries_type, lambda sx, a, ts, t: a[0], lambda a, ts, t: tuple(a[0])),
]}


# the functions whose other receivers are typed by the call's context
_RECEIVER_FROM_CONTEXT = frozenset({"insert", "insert_imm", "remove", "union"})


def overload(other: Builtin, on_map: Builtin) -> Builtin:
    """One name, two definitions: `on_map` for a Map receiver, `other` for any other. Where
    `other` types its receiver by the context (`[1, 2].insert(3)` is a Set<u8> where one is
    due), a literal receiver in a Vec or Set context is left to it."""
    hinted = other.name in _RECEIVER_FROM_CONTEXT

    def rule(a: Args, hint) -> Type:
        chosen = other
        if not (hinted and a.flexible(0) and isinstance(hint, (TVec, TSet))) \
                and isinstance(a.infer(0, hint if isinstance(hint, TMap) else None), TMap):
            chosen = on_map
        a.arity(chosen.arity)
        return chosen.type_rule(a, hint)

    def pick(types: list) -> Builtin:
        return on_map if isinstance(types[0], TMap) else other

    return Builtin(other.name, tuple(sorted({*other.arities, *on_map.arities})),
                   f"{other.signature}, {on_map.signature}",
                   f"{other.meaning}; on a Map: {on_map.meaning}", rule,
                   lambda sx, a, ts, t: pick(ts).spark(sx, a, ts, t),
                   lambda a, ts, t: pick(ts).python(a, ts, t), other.group)
