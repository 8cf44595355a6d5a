"""Physical planning: what an epoch will run, decided over the circuit IR before any Spark
session exists, as a list of passes (each a function from a plan to a plan, testable alone).

A `StratumPlan` starts as a stratum's circuit and is filled in by `STRATUM_PASSES`, in order:

- `levels`: each node's wave, the number of stateful operators on its longest path from an
  import or delay within one iteration;
- `waves`: the stateful operators (and the relations fed by linear nodes) grouped by that
  depth: a wave reads only deltas of earlier waves (or of earlier iterations, through the
  delay), so each wave is one Spark action over materialised inputs only;
- `inlinable`: the joins and antijoins of a recursive stratum whose delta at an iteration is
  read only at that iteration, by a relation's distinct: planned into the distinct's action,
  an iteration is one Spark action, as in a hand-written semi-naive loop (the runtime does so
  in the epochs where it pays: runtime/stratum.StratumRuntime._inline);
- `arrangements`: the traces that joins, distincts and groups read by key, with those keys
  (followed back through linear nodes to the trace that stores the columns), so that their
  large batches are kept partitioned and sorted by them; a recursive stratum's imports keep
  their running epoch's batches arranged too.

`PROGRAM_PASSES` then work on all the strata: `together` puts the strata an epoch can run
side by side (their actions packed into one) into groups.

`physical_plan(compiled)` runs them all; `ddlog explain --physical` prints the result
(`explain_physical`), and runtime/stratum.py and runtime/engine.py run what it says. See
docs/design.md, An epoch.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Union

from ddlog.plan.circuit import (AntiJoin, Circuit, Delay, Distinct, FlatMap, GroupBy, Import,
                                Join, Negate, Node, Output, Select, Union_)
from ddlog.plan.compile import CompiledProgram
from ddlog.plan.exprs import Col

# Where an arranged trace lives: a relation's own trace (its name) or a stateful node's
# output trace (its id within the stratum's circuit).
Holder = Union[str, int]


@dataclass(frozen=True)
class Wave:
    """One Spark action of an iteration: these stateful operators' deltas, and the deltas of
    these relations fed by linear nodes."""

    operators: tuple[int, ...]
    relations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Arrangement:
    """A trace kept arranged (partitioned and sorted) by `keys`."""

    holder: Holder
    keys: tuple[str, ...]


@dataclass(frozen=True)
class StratumPlan:
    circuit: Circuit
    levels: dict[int, int] = field(default_factory=dict)
    waves: tuple[Wave, ...] = ()
    inlinable: frozenset[int] = frozenset()
    arrangements: tuple[Arrangement, ...] = ()
    # the relations whose running epoch's batches are kept arranged (a recursive stratum's
    # imports: its joins read them at every iteration)
    arranged_cur: tuple[str, ...] = ()


@dataclass(frozen=True)
class PhysicalPlan:
    strata: tuple[StratumPlan, ...]
    # the groups an epoch runs the strata in, in order: indexes into `strata`
    groups: tuple[tuple[int, ...], ...] = ()


# -- the stratum passes ------------------------------------------------------------------------

def levels(p: StratumPlan) -> StratumPlan:
    """Each node's wave: stateful operators on its longest path from an import or delay
    within one iteration (a stateful node counts itself)."""
    level: dict[int, int] = {}
    for node in p.circuit.nodes:
        if isinstance(node, (Import, Delay)):
            level[node.id] = 0
            continue
        below = max((level[k] for k in node.inputs), default=0)
        level[node.id] = below + 1 if node.stateful else below
    return replace(p, levels=level)


def waves(p: StratumPlan) -> StratumPlan:
    """The stateful operators (and linear-fed relations) by depth. (Planning a whole iteration
    as one action instead would re-plan shared sub-plans once per use: the plan grows
    exponentially with the chain of operators.)"""
    c, level = p.circuit, p.levels
    ops = [n.id for n in c.nodes if n.stateful]
    depth = max([level[n] for n in ops] + [0])
    linear_fed = {rel: nid for rel, nid in c.delays.items() if nid not in ops}
    out = []
    for k in range(1, depth + 2):
        now = tuple(n for n in ops if level[n] == k)
        rels = tuple(r for r, n in linear_fed.items() if level[n] + 1 == k)
        if now or rels:
            out.append(Wave(now, rels))
    return replace(p, waves=tuple(out))


def inlinable(p: StratumPlan) -> StratumPlan:
    """The joins and antijoins of a recursive stratum whose delta at iteration i is read only
    at iteration i, by the Distinct of a relation (or as a linear-fed relation's delta). An
    operator read by another join is not: that join reads all its earlier iterations too,
    which would re-run their plans in every later one."""
    c = p.circuit
    if not c.recursive:
        return p
    feeds = set(c.delays.values())
    consumers = c.consumers()

    def read_now(nid: int) -> bool:
        for k in consumers[nid]:
            node = c.node(k)
            if isinstance(node, Output) or (isinstance(node, Distinct) and k in feeds):
                continue
            if node.stateful or not read_now(k):
                return False
        return True

    return replace(p, inlinable=frozenset(
        n.id for n in c.nodes if isinstance(n, (Join, AntiJoin))
        and n.id not in feeds and read_now(n.id)))


def arrangements(p: StratumPlan) -> StratumPlan:
    """What each trace read by key is arranged by. A trace read by several keys keeps the
    first (joins come first: they read the largest traces)."""
    c = p.circuit
    reads: list[tuple[int, list[str]]] = []
    for node in c.nodes:
        if isinstance(node, (Join, AntiJoin)):
            reads += [(node.left, list(node.left_keys)), (node.right, list(node.right_keys))]
    for node in c.nodes:
        if isinstance(node, Distinct):
            reads.append((node.input, list(node.columns)))
        elif isinstance(node, GroupBy):
            reads.append((node.input, list(node.keys)))
    out: dict[Holder, Arrangement] = {}
    for nid, cols in reads:
        if not cols:
            continue
        for holder, held in holders(c, nid, cols):
            out.setdefault(holder, Arrangement(holder, tuple(held)))
    cur = tuple(dict.fromkeys(n.relation for n in c.nodes if isinstance(n, Import))) \
        if c.recursive else ()
    return replace(p, arrangements=tuple(out.values()), arranged_cur=cur)


STRATUM_PASSES: list[Callable[[StratumPlan], StratumPlan]] = [
    levels, waves, inlinable, arrangements]


# -- the program passes ------------------------------------------------------------------------

def together(p: PhysicalPlan) -> PhysicalPlan:
    """The groups an epoch runs the strata in, in order, each group's actions packed into one
    (runtime/stratum.run_together). A stratum goes into the first group after every group
    that writes a relation it reads; a non-recursive one joins a non-recursive group from
    there on when there is one. So the strata of one level of the dependency graph run side
    by side however the stratifier ordered them (an aggregate's group-by and the relation
    that reads it come one after the other in stratum order). A recursive stratum runs
    alone: its iterations are actions of their own."""
    groups: list[list[int]] = []
    writer: dict[str, int] = {}  # relation -> index of the group whose stratum writes it
    for k, s in enumerate(p.strata):
        c = s.circuit
        level = max((writer[r] + 1 for r in c.imports() if r in writer), default=0)
        at = None if c.recursive else next(
            (g for g in range(level, len(groups))
             if not p.strata[groups[g][0]].circuit.recursive), None)
        if at is None:
            groups.append([k])
            at = len(groups) - 1
        else:
            groups[at].append(k)
        writer.update((r, at) for r in c.relations)
    return replace(p, groups=tuple(tuple(g) for g in groups))


PROGRAM_PASSES: list[Callable[[PhysicalPlan], PhysicalPlan]] = [together]


def stratum_plan(circuit: Circuit) -> StratumPlan:
    plan = StratumPlan(circuit)
    for run in STRATUM_PASSES:
        plan = run(plan)
    return plan


def physical_plan(circuits: list[Circuit] | CompiledProgram) -> PhysicalPlan:
    """Every pass over the program's circuits (of a compiled program, or given)."""
    if isinstance(circuits, CompiledProgram):
        circuits = circuits.circuits
    plan = PhysicalPlan(tuple(stratum_plan(c) for c in circuits))
    for run in PROGRAM_PASSES:
        plan = run(plan)
    return plan


# -- helpers over the circuit ------------------------------------------------------------------

def column_sources(node: Node) -> dict[str, str]:
    """For each output column of a linear node that is an input column as it is (kept or
    renamed): that input column. A filter only drops rows, so a key read through it is a
    superset, which is all a lookup needs."""
    if isinstance(node, Select):
        return {n: e.name for n, e in node.outputs if isinstance(e, Col)}
    if isinstance(node, FlatMap):
        return {n: n for n in node.columns if n != node.column}
    if isinstance(node, Negate):
        return {n: n for n in node.columns}
    raise TypeError(f"{type(node).__name__} is not linear")


def holders(c: Circuit, nid: int, cols: list[str]) -> list[tuple[Holder, list[str]]]:
    """The stored traces that node `nid`'s columns `cols` come from, with their names there;
    only where every one of them is a column passed through unchanged. A relation's distinct
    records into the relation's own trace."""
    node = c.node(nid)
    if isinstance(node, (Import, Delay)):
        return [(node.relation, cols)]
    if isinstance(node, (Select, FlatMap, Negate)):
        src = column_sources(node)
        if any(k not in src for k in cols):
            return []
        return holders(c, node.input, [src[k] for k in cols])
    if isinstance(node, Union_):
        return [h for s in node.sources for h in holders(c, s, cols)]
    if isinstance(node, Output):
        return holders(c, node.input, cols)
    if node.stateful:
        rel = next((r for r, d in c.delays.items() if d == nid), None)
        return [(rel if rel is not None else nid, cols)]
    return []


def explain_physical(p: PhysicalPlan) -> str:
    """What each epoch runs: the groups of strata run together, and per stratum its waves
    (one Spark action each per iteration), the operators inlined when it pays, and the
    arrangements."""
    lines = []
    for g, group in enumerate(p.groups):
        strata = [p.strata[k] for k in group]
        names = ", ".join(f"{s.circuit.stratum} ({', '.join(s.circuit.relations)})"
                          for s in strata)
        packed = " (their actions packed into one)" if len(strata) > 1 else ""
        lines.append(f"group {g}: strata {names}{packed}")
        for s in strata:
            c = s.circuit
            kind = "recursive: per iteration" if c.recursive else "one iteration"
            lines.append(f"  stratum {c.stratum}, {kind}:")
            for k, w in enumerate(s.waves):
                what = [f"#{n} {_short(c.node(n))}" for n in w.operators]
                what += [f"{r} (linear)" for r in w.relations]
                lines.append(f"    wave {k + 1}: {', '.join(what)}")
            if s.inlinable:
                lines.append("    inlined into their readers' action when it pays: "
                             + ", ".join(f"#{n}" for n in sorted(s.inlinable)))
            for a in s.arrangements:
                where = a.holder if isinstance(a.holder, str) else f"#{a.holder}"
                lines.append(f"    arranged: {where} by ({', '.join(a.keys)})")
            if s.arranged_cur:
                lines.append("    this epoch's batches arranged too: "
                             + ", ".join(s.arranged_cur))
    return "\n".join(lines) + "\n"


def _short(node: Node) -> str:
    return {Join: "join", AntiJoin: "antijoin", Distinct: "distinct",
            GroupBy: "group_by"}.get(type(node), type(node).__name__.lower())
