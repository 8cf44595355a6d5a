"""A generated program analysis: context-insensitive points-to with an on-the-fly call graph,
the shape of Doop's analyses of Java (Soufflé's usual example). Four relations are mutually
recursive (Reachable, VarPointsTo, FieldPointsTo, Receiver, with CallEdge derived from
Receiver): a method becomes reachable when a call reaches it, its allocations then flow, the
objects a receiver may point to pick the methods a virtual call dispatches to, and arguments
and results flow along the call edges found. Two negations read the fixpoint: the methods
never reached, and the fields loaded that no store writes.

`facts(n, seed)` generates about n input facts of a program shaped as real ones are
(modules of classes and methods, calls mostly within a module); `python_fixpoint` computes the
same relations as a 60-line Python program would, a worklist over dict indexes; `loop` as a
Spark user writes it by hand (semi-naive over the four relations, lineage cut per iteration).
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

PROGRAM = """
input relation Alloc(v: bigint, o: bigint, m: bigint)
input relation Move(to: bigint, from: bigint)
input relation Load(to: bigint, base: bigint, f: bigint)
input relation Store(base: bigint, f: bigint, from: bigint)
input relation VCall(base: bigint, sig: bigint, site: bigint, inm: bigint)
input relation HeapType(o: bigint, t: bigint)
input relation Dispatch(t: bigint, sig: bigint, m: bigint)
input relation ThisVar(m: bigint, v: bigint)
input relation Formal(m: bigint, i: bigint, v: bigint)
input relation Actual(site: bigint, i: bigint, v: bigint)
input relation Return(m: bigint, v: bigint)
input relation CallResult(site: bigint, v: bigint)
input relation Entry(m: bigint)
input relation Method(m: bigint)

output relation Reachable(m: bigint)
output relation VarPointsTo(v: bigint, o: bigint)
output relation FieldPointsTo(b: bigint, f: bigint, o: bigint)
output relation Receiver(site: bigint, m: bigint, o: bigint)
output relation CallEdge(site: bigint, m: bigint)
output relation Unreachable(m: bigint)
output relation NeverStored(b: bigint, f: bigint)

Reachable(m) :- Entry(m).
Reachable(m) :- CallEdge(_, m).
VarPointsTo(v, o) :- Reachable(m), Alloc(v, o, m).
VarPointsTo(to, o) :- Move(to, from), VarPointsTo(from, o).
FieldPointsTo(b, f, o) :- Store(base, f, from), VarPointsTo(from, o), VarPointsTo(base, b).
VarPointsTo(to, o) :- Load(to, base, f), VarPointsTo(base, b), FieldPointsTo(b, f, o).
Receiver(site, m, o) :- VCall(base, sig, site, inm), Reachable(inm), VarPointsTo(base, o),
                        HeapType(o, t), Dispatch(t, sig, m).
CallEdge(site, m) :- Receiver(site, m, _).
VarPointsTo(this, o) :- Receiver(_, m, o), ThisVar(m, this).
VarPointsTo(p, o) :- CallEdge(site, m), Formal(m, i, p), Actual(site, i, a), VarPointsTo(a, o).
VarPointsTo(r, o) :- CallEdge(site, m), Return(m, v), CallResult(site, r), VarPointsTo(v, o).
Unreachable(m) :- Method(m), not Reachable(m).
NeverStored(b, f) :- Load(_, base, f), VarPointsTo(base, b), not FieldPointsTo(b, f, _).
"""

OUTPUT = "VarPointsTo"
SCHEMAS = {
    "Alloc": "v long, o long, m long", "Move": "to long, from long",
    "Load": "to long, base long, f long", "Store": "base long, f long, from long",
    "VCall": "base long, sig long, site long, inm long", "HeapType": "o long, t long",
    "Dispatch": "t long, sig long, m long", "ThisVar": "m long, v long",
    "Formal": "m long, i long, v long", "Actual": "site long, i long, v long",
    "Return": "m long, v long", "CallResult": "site long, v long", "Entry": "m long",
    "Method": "m long",
}

LOCALS = 6  # a method's variables: 0 `this`, 1-2 its parameters, 3 what it returns
FIELDS = 4
SIGNATURES = 4


def facts(n: int, seed: int, module: int = 50, moves: int = 8,
          calls: int = 3) -> dict[str, list[tuple]]:
    """About `n` facts. Methods come `module` to a module with a class for each
    `SIGNATURES` of them; each class implements the signatures with methods of the module;
    each method allocates 2 objects of its module's classes, has `moves` assignments, a load
    and a store between its locals, and `calls` virtual calls (2 arguments, a result) on one
    of its locals. A tenth of a module's methods are entries. Variables are numbered by
    method (`m * LOCALS + k`), objects after them, call sites from 0. (50,000 facts derive
    about a million rows, and reach about two thirds of the methods.)"""
    types, entries = max(1, module // SIGNATURES), max(1, module // 10)
    rng = random.Random(seed)
    methods = max(module, n // (5 + moves + 6 * calls))
    out: dict[str, set[tuple]] = defaultdict(set)
    obj = methods * LOCALS
    site = 0

    def local(m: int) -> int:
        return m * LOCALS + rng.randrange(LOCALS)

    for first in range(0, methods, module):
        mods = range(first, min(first + module, methods))
        classes = [first * types + k for k in range(types)]
        out["Entry"].update((m,) for m in mods[:entries])
        for t in classes:
            for sig in range(SIGNATURES):
                out["Dispatch"].add((t, sig, rng.choice(mods)))
        for m in mods:
            out["Method"].add((m,))
            out["ThisVar"].add((m, m * LOCALS))
            out["Formal"].update({(m, 0, m * LOCALS + 1), (m, 1, m * LOCALS + 2)})
            out["Return"].add((m, m * LOCALS + 3))
            for _ in range(2):
                out["Alloc"].add((local(m), obj, m))
                out["HeapType"].add((obj, rng.choice(classes)))
                obj += 1
            for _ in range(moves):
                out["Move"].add((local(m), local(m)))
            out["Load"].add((local(m), local(m), rng.randrange(FIELDS)))
            out["Store"].add((local(m), rng.randrange(FIELDS), local(m)))
            for _ in range(calls):
                out["VCall"].add((local(m), rng.randrange(SIGNATURES), site, m))
                out["Actual"].update({(site, 0, local(m)), (site, 1, local(m))})
                out["CallResult"].add((site, local(m)))
                site += 1
    return {rel: sorted(out[rel]) for rel in SCHEMAS}


def python_fixpoint(given: dict[str, list[tuple]]) -> dict[str, int]:
    """The analysis in plain Python: a worklist of new facts, each joined through dict
    indexes with what is known when it is taken. The relations' sizes."""
    def index(rel: str, *key: int) -> dict:
        out: dict = defaultdict(list)
        for row in given[rel]:
            out[tuple(row[k] for k in key) if len(key) > 1 else row[key[0]]].append(row)
        return out

    alloc_m, move_from = index("Alloc", 2), index("Move", 1)
    load_base, store_from, store_base = index("Load", 1), index("Store", 2), index("Store", 0)
    vcall_base, vcall_in = index("VCall", 0), index("VCall", 3)
    types = index("HeapType", 0)
    dispatch = index("Dispatch", 0, 1)
    this, formal = index("ThisVar", 0), index("Formal", 0, 1)
    actual_v, actual_site = index("Actual", 2), index("Actual", 0)
    ret_m, ret_v, result = index("Return", 0), index("Return", 1), index("CallResult", 0)
    reach: set = set()
    vpt: dict[int, set] = defaultdict(set)  # variable -> objects
    pointed: dict[int, set] = defaultdict(set)  # object -> variables
    fpt: dict[tuple, set] = defaultdict(set)  # (object, field) -> objects
    receiver: set = set()
    edges_site: dict[int, set] = defaultdict(set)
    edges_m: dict[int, set] = defaultdict(set)
    work: list[tuple] = [("R", m) for (m,) in given["Entry"]]

    def calls(base_rows, o):
        for (_, sig, site, _) in base_rows:
            for (_, t) in types[o]:
                for (_, _, m) in dispatch[(t, sig)]:
                    work.append(("C", site, m, o))

    while work:
        fact = work.pop()
        kind = fact[0]
        if kind == "R":
            m = fact[1]
            if m in reach:
                continue
            reach.add(m)
            work.extend(("V", v, o) for (v, o, _) in alloc_m[m])
            for row in vcall_in[m]:
                for o in list(vpt[row[0]]):
                    calls([row], o)
        elif kind == "V":
            _, v, o = fact
            if o in vpt[v]:
                continue
            vpt[v].add(o)
            pointed[o].add(v)
            work.extend(("V", to, o) for (to, _) in move_from[v])
            for (base, f, _) in store_from[v]:
                work.extend(("F", b, f, o) for b in list(vpt[base]))
            for (_, f, src) in store_base[v]:
                work.extend(("F", o, f, o2) for o2 in list(vpt[src]))
            for (to, _, f) in load_base[v]:
                work.extend(("V", to, o2) for o2 in list(fpt[(o, f)]))
            calls([row for row in vcall_base[v] if row[3] in reach], o)
            for (site, i, _) in actual_v[v]:
                for m in list(edges_site[site]):
                    work.extend(("V", p, o) for (_, _, p) in formal[(m, i)])
            for (m, _) in ret_v[v]:
                for site in list(edges_m[m]):
                    work.extend(("V", r, o) for (_, r) in result[site])
        elif kind == "F":
            _, b, f, o = fact
            if o in fpt[(b, f)]:
                continue
            fpt[(b, f)].add(o)
            for base in list(pointed[b]):
                work.extend(("V", to, o) for (to, _, g) in load_base[base] if g == f)
        else:
            _, site, m, o = fact
            if (site, m, o) in receiver:
                continue
            receiver.add((site, m, o))
            work.extend(("V", t, o) for (_, t) in this[m])
            if m in edges_site[site]:
                continue
            edges_site[site].add(m)
            edges_m[m].add(site)
            work.append(("R", m))
            for (_, i, a) in actual_site[site]:
                for (_, _, p) in formal[(m, i)]:
                    work.extend(("V", p, o2) for o2 in list(vpt[a]))
            for (_, v) in ret_m[m]:
                for (_, r) in result[site]:
                    work.extend(("V", r, o2) for o2 in list(vpt[v]))
    never = {(b, f) for (_, base, f) in given["Load"] for b in vpt[base] if not fpt[(b, f)]}
    return {"Reachable": len(reach), "VarPointsTo": sum(map(len, vpt.values())),
            "FieldPointsTo": sum(map(len, fpt.values())), "Receiver": len(receiver),
            "CallEdge": sum(map(len, edges_site.values())),
            "Unreachable": len(given["Method"]) - len(reach), "NeverStored": len(never)}


def loop(ins: dict[str, "DataFrame"]) -> int:
    """The analysis as a Spark user writes it: each iteration joins each rule's new rows in
    one recursive atom at a time with the others' known rows (known including the new),
    keeps what is new of each relation, and cuts the lineage; then the two negations. The
    rows of VarPointsTo."""
    from pyspark.sql import functions as F

    from bench.workloads import _cut

    def col(df, **names):
        return df.select(*[F.col(c).alias(a) for a, c in names.items()])

    alloc, move, load, store = ins["Alloc"], ins["Move"], ins["Load"], ins["Store"]
    vcall, heap, dispatch = ins["VCall"], ins["HeapType"], ins["Dispatch"]
    this, formal, actual = ins["ThisVar"], ins["Formal"], ins["Actual"]
    ret, result = ins["Return"], ins["CallResult"]
    targets = heap.join(dispatch, "t").select("o", "sig", "m")  # an object's methods

    def vpt_rules(r, v_new, v, f_new, f, c_new, c):
        """VarPointsTo's rows from the new rows of one atom at a time."""
        e_new, e = (x.select("site", "m").distinct() for x in (c_new, c))
        parts = [r.join(alloc, "m").select("v", "o"),
                 col(move, to="to", frm="from").join(col(v_new, frm="v", o="o"), "frm")
                 .select(F.col("to").alias("v"), "o")]
        for vb, fb in ((v_new, f), (v, f_new)):
            parts.append(load.join(col(vb, base="v", b="o"), "base")
                         .join(col(fb, b="b", f="f", o="o"), ["b", "f"])
                         .select(F.col("to").alias("v"), "o"))
        parts.append(c_new.join(this, "m").select("v", "o"))
        for eb, vb in ((e_new, v), (e, v_new)):
            args = eb.join(formal, "m").join(col(actual, site="site", i="i", a="v"),
                                              ["site", "i"])
            parts.append(args.join(col(vb, a="v", o="o"), "a").select("v", "o"))
            outs = eb.join(col(ret, m="m", rv="v"), "m").join(col(result, site="site",
                                                                  r="v"), "site")
            parts.append(outs.join(col(vb, rv="v", o="o"), "rv")
                         .select(F.col("r").alias("v"), "o"))
        out = parts[0]
        for p in parts[1:]:
            out = out.union(p)
        return out.distinct()

    def fpt_rules(v_new, v):
        parts = [store.join(col(vf, **{"from": "v", "o": "o"}), "from")
                 .join(col(vb, base="v", b="o"), "base").select("b", "f", "o")
                 for vf, vb in ((v_new, v), (v, v_new))]
        return parts[0].union(parts[1]).distinct()

    def receiver_rules(r_new, r, v_new, v):
        parts = []
        for rb, vb in ((r_new, v), (r, v_new)):
            calls = vcall.join(col(rb, inm="m"), "inm").join(col(vb, base="v", o="o"), "base")
            parts.append(calls.join(targets, ["o", "sig"]).select("site", "m", "o"))
        return parts[0].union(parts[1]).distinct()

    def reach_rules(c_new):
        return c_new.select("m").distinct()

    spark = alloc.sparkSession
    r = _cut(ins["Entry"].distinct())
    v = _cut(spark.createDataFrame([], "v long, o long"))
    f = _cut(spark.createDataFrame([], "b long, f long, o long"))
    c = _cut(spark.createDataFrame([], "site long, m long, o long"))
    r_new, v_new, f_new, c_new = r, v, f, c
    while True:
        # the new rows of each relation from this round's new rows, against all known
        v2 = vpt_rules(r_new, v_new, v, f_new, f, c_new, c)
        f2 = fpt_rules(v_new, v)
        c2 = receiver_rules(r_new, r, v_new, v)
        r2 = reach_rules(c_new)
        v_new = _cut(v2.join(v, ["v", "o"], "left_anti"))
        v = _cut(v.union(v_new))
        f_new = _cut(f2.join(f, ["b", "f", "o"], "left_anti"))
        f = _cut(f.union(f_new))
        c_new = _cut(c2.join(c, ["site", "m", "o"], "left_anti"))
        c = _cut(c.union(c_new))
        r_new = _cut(r2.join(r, "m", "left_anti"))
        r = _cut(r.union(r_new))
        if v_new.isEmpty() and f_new.isEmpty() and c_new.isEmpty() and r_new.isEmpty():
            break
    ins["Method"].join(r, "m", "left_anti").count()
    loaded = load.join(col(v, base="v", b="o"), "base").select("b", "f").distinct()
    loaded.join(f.select("b", "f").distinct(), ["b", "f"], "left_anti").count()
    return v.count()
