"""D3log's located heads (`H(..) @loc :- body`) reflected back as data, as DDlog's compiler does
under `--d3log-dev` for a program that imports `d3log::reflect`: each such rule gains a twin
that puts each record it derives into `d3log::reflect::DistributedRelFacts` (or `..Stream..`
for a stream), with the relation's name and `Some{loc}`. The rule itself still derives its
head: there is no other location to send it to, Spark places the data.
"""
from __future__ import annotations

import copy
import dataclasses

from ddlog.syntax import ast

REFLECT = "d3log::reflect::"


def reflect_locations(prog: ast.Program) -> ast.Program:
    """`prog` with a reflecting twin of every rule of a located head (none when the program
    does not import d3log::reflect)."""
    relations = {d.name: d for d in prog.decls if isinstance(d, ast.RelationDecl)}
    if REFLECT + "DistributedRelFacts" not in relations:
        return prog
    twins: list[ast.Decl] = []
    for rule in (d for d in prog.decls if isinstance(d, ast.Rule)):
        head = rule.head
        decl = relations.get(head.relation)
        if head.location is None or decl is None:
            continue
        target = REFLECT + ("DistributedStreamFacts" if decl.kind == "stream"
                            else "DistributedRelFacts")
        span = head.span
        fact = copy.deepcopy(head.whole) if head.whole is not None else ast.StructLit(
            _record_ctor(decl), [(name, copy.deepcopy(arg)) for name, arg in
                                 zip(head.names or [None] * len(head.args), head.args)], span)
        args = [ast.Lit(head.relation, "string", span), ast.Call("to_any", [fact], span),
                ast.StructLit("Some", [(None, copy.deepcopy(head.location))], span)]
        twins.append(ast.Rule(ast.Atom(target, args, span), copy.deepcopy(rule.body),
                              rule.span))
    return dataclasses.replace(prog, decls=[*prog.decls, *twins])


def _record_ctor(decl: ast.RelationDecl) -> str:
    """The constructor of a relation's records: the relation's name, or its record type's."""
    return getattr(decl.record, "name", None) or decl.name
