"""Renders circuits as text (`ddlog explain`) and as Graphviz DOT (`--dot`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ddlog.plan import exprs as ir
from ddlog.plan.circuit import (AntiJoin, Delay, Distinct, FlatMap, GroupBy, Import,
                           Join, Negate, Node, Output, Select, Union_)
from ddlog.plan.compile import CompiledProgram
from ddlog.limits import recursion_room

if TYPE_CHECKING:
    from ddlog.plan.physical import PhysicalPlan


def show_expr(e) -> str:
    """A compact, readable form of an IR expression."""
    if isinstance(e, (ir.Col, ir.Ref)):
        return e.name
    if isinstance(e, ir.Const):
        if e.value is None:
            return "None"
        if isinstance(e.value, bool):
            return str(e.value).lower()
        return repr(e.value) if isinstance(e.value, str) else str(e.value)
    if isinstance(e, ir.Binary):
        return f"({show_expr(e.left)} {e.op} {show_expr(e.right)})"
    if isinstance(e, ir.Unary):
        return f"{e.op} {show_expr(e.arg)}"
    if isinstance(e, ir.Call):
        if e.group:
            return f"{show_expr(e.args[0])}.{e.name}({', '.join(map(show_expr, e.args[1:]))})"
        return f"{e.name}({', '.join(map(show_expr, e.args))})"
    if isinstance(e, ir.Field):
        return f"{show_expr(e.arg)}.{e.name}"
    if isinstance(e, ir.With):
        return f"{show_expr(e.arg)} with .{e.name} = {show_expr(e.value)}"
    if isinstance(e, ir.Tuple):
        return "(" + ", ".join(map(show_expr, e.items)) + ")"
    if isinstance(e, ir.Vec):
        return "[" + ", ".join(map(show_expr, e.items)) + "]"
    if isinstance(e, ir.Lambda):
        return f"|{', '.join(e.params)}| {show_expr(e.body)}"
    if isinstance(e, ir.Struct):
        return e.ctor + ("{" + ", ".join(map(show_expr, e.fields)) + "}" if e.fields else "")
    if isinstance(e, ir.Some):
        return "Some{" + show_expr(e.arg) + "}"
    if isinstance(e, ir.Interp):
        return '"' + "".join(p if isinstance(p, str) else "${" + show_expr(p) + "}"
                             for p in e.parts) + '"'
    if isinstance(e, ir.If):
        return f"if {show_expr(e.cond)} {show_expr(e.then)} else {show_expr(e.other)}"
    if isinstance(e, ir.Cast):
        return f"({show_expr(e.arg)} as {e.ty})"
    if isinstance(e, ir.Match):
        return f"match ({show_expr(e.arg)}) {{..}}"
    return type(e).__name__


def describe(node: Node) -> str:
    """One line: the operator and its parameters."""
    if isinstance(node, Import):
        return f"δ₀ import {node.relation}"
    if isinstance(node, Delay):
        return f"z⁻¹ delay {node.relation} (feedback)"
    if isinstance(node, Select):
        parts = []
        if node.filters:
            parts.append("filter " + " and ".join(show_expr(f) for f in node.filters))
        parts.append("map " + ", ".join(f"{n}={show_expr(e)}" for n, e in node.outputs))
        label = f" [{node.label}]" if node.label else ""
        return f"select{label} " + "; ".join(parts)
    if isinstance(node, FlatMap):
        return f"flatmap {node.column} <- {show_expr(node.expr)}"
    if isinstance(node, Union_):
        return "union " + ", ".join(f"#{s}" for s in node.sources)
    if isinstance(node, Negate):
        return "negate"
    if isinstance(node, Join):
        keys = ", ".join(f"{a}={b}" for a, b in zip(node.left_keys, node.right_keys))
        kind = "join" if keys else "product"
        return f"{kind} #{node.left} ⋈ #{node.right} on [{keys}] +[{', '.join(node.right_out)}]"
    if isinstance(node, AntiJoin):
        keys = ", ".join(f"{a}={b}" for a, b in zip(node.left_keys, node.right_keys))
        return f"antijoin #{node.left} ▷ #{node.right} on [{keys}]"
    if isinstance(node, Distinct):
        return "distinct"
    if isinstance(node, GroupBy):
        return f"group_by [{', '.join(node.keys)}] {node.column} <- {show_expr(node.elem)}"
    if isinstance(node, Output):
        return f"∫ export {node.relation}"
    return type(node).__name__


def _inputs(node: Node) -> str:
    return ", ".join(f"#{i}" for i in node.inputs)


@recursion_room()
def explain_text(cp: CompiledProgram) -> str:
    lines = []
    for s in cp.strata:
        kind = "recursive, nested (epoch, iteration)" if s.recursive else "non-recursive"
        lines.append(f"stratum {s.index}: {', '.join(s.relations)} ({kind})")
        circuit = next((c for c in cp.circuits if c.stratum == s.index), None)
        if circuit is None:
            delayed = [cp.relations[r].delay_of for r in s.relations
                       if cp.relations[r].delay_of is not None]
            lines.append(f"  z⁻¹ of {delayed[0]} over transactions (no rules)" if delayed
                         else "  input (no rules)")
            continue
        for node in circuit.nodes:
            src = f" <- {_inputs(node)}" if node.inputs and not isinstance(
                node, (Join, AntiJoin, Union_)) else ""
            cols = ", ".join(node.columns)
            lines.append(f"  #{node.id:<3} {describe(node)}{src}   ({cols})")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _dot_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


@recursion_room()
def explain_dot(cp: CompiledProgram, physical: "PhysicalPlan | None" = None) -> str:
    """The circuits as Graphviz DOT; with `physical` (ddlog/plan/physical.py), each stratum's
    label names its group of strata run together, each stateful operator its wave, and an
    operator inlined when it pays is dashed."""
    out = ["digraph ddlog {", "  rankdir=LR;", "  node [shape=box, fontname=Helvetica];"]
    plans = {s.circuit.stratum: s for s in physical.strata} if physical else {}
    group_of = {physical.strata[k].circuit.stratum: g for g, ks in enumerate(physical.groups)
                for k in ks} if physical else {}
    for c in cp.circuits:
        out.append(f"  subgraph cluster_{c.stratum} {{")
        rec = " (recursive)" if c.recursive else ""
        group = f", group {group_of[c.stratum]}" if c.stratum in group_of else ""
        out.append(f'    label="stratum {c.stratum}: {_dot_escape(", ".join(c.relations))}'
                   f'{rec}{group}";')
        plan = plans.get(c.stratum)
        wave = {n: k + 1 for k, w in enumerate(plan.waves) for n in w.operators} if plan else {}
        for node in c.nodes:
            extra = f" (wave {wave[node.id]})" if node.id in wave else ""
            style = ", style=dashed" if plan and node.id in plan.inlinable else ""
            out.append(f'    s{c.stratum}_{node.id} [label="#{node.id} '
                       f'{_dot_escape(describe(node))}{extra}"{style}];')
        for node in c.nodes:
            for i in node.inputs:
                out.append(f"    s{c.stratum}_{i} -> s{c.stratum}_{node.id};")
        for rel, d in c.delays.items():
            if c.recursive:
                for node in c.nodes:
                    if isinstance(node, Delay) and node.relation == rel:
                        out.append(f"    s{c.stratum}_{d} -> s{c.stratum}_{node.id} "
                                   f"[style=dashed, label=\"z⁻¹\"];")
        out.append("  }")
    # δ₀ edges between strata: from the producing stratum's export to the import
    export = {rel: (c.stratum, nid) for c in cp.circuits for rel, nid in c.outputs.items()}
    for c in cp.circuits:
        for node in c.nodes:
            if isinstance(node, Import) and node.relation in export:
                s, nid = export[node.relation]
                out.append(f"  s{s}_{nid} -> s{c.stratum}_{node.id} [label=\"δ₀\"];")
    out.append("}")
    return "\n".join(out) + "\n"
