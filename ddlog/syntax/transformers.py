"""`apply T(Edges, from, to) -> (Out)`: DDlog's transformers, written as rules.

DDlog runs a transformer as a Rust operator over differential dataflow collections. Here each
one that DDlog's `graph` library declares (ddlog/builtins/lib/graph.dl) becomes rules over
hidden relations, so that the checker, the planner and the engine see nothing new, and the
transformer is incremental through insertions and deletions as any rule is: a reachability
relation over the edges (recursive) and a minimum per node (aggregation in a later stratum).
The hidden relations are named after the output (`Out__Arc`, `Out__Path`, `Out__Label`) and
share its record type, a pair of nodes; their rules carry the `apply`'s place, so that a
type error in them (a function that does not give the nodes' type) points at it.

A transformer declared elsewhere (`extern transformer` in a program of its own, as DDlog
allows with a Rust implementation) has no rules here and is refused where it is applied.
"""
from __future__ import annotations

import copy
import dataclasses

from ddlog.errors import TypeCheckError
from ddlog.syntax import ast

_REACH = """
{A}[({F}(e), {T}(e))] :- {E}[e].
{P}[(x, y)] :- {A}[(x, y)].
{P}[(x, z)] :- {P}[(x, y)], {A}[(y, z)].
"""

# Each transformer's rules: {E} the edges, {F} and {T} the functions giving an edge's source
# and target, {O} the output; {A} the edges as pairs, {P} the pairs joined by a path, {L}
# candidate labels.
RULES: dict[str, str] = {
    # n and m in one component when each reaches the other; a node reaches itself only
    # through a cycle, so nodes on none are left out
    "graph::SCC": _REACH + """
{O}[(n, l)] :- {P}[(n, m)], {P}[(m, n)], var l = m.group_by(n).min().
""",
    # labels start at the edges' targets and flow along the edges; each node keeps the least
    "graph::ConnectedComponents": _REACH + """
{L}[(n, n)] :- {A}[(_, n)].
{L}[(n, m)] :- {A}[(_, m)], {P}[(m, n)].
{O}[(n, l)] :- {L}[(n, m)], var l = m.group_by(n).min().
""",
    # the pairs given by more than one edge record, in either direction, both ways round
    "graph::UnsafeBidirectionalEdges": """
{O}[p] :- {E}[e], var x = {F}(e), var y = {T}(e), var k = if (x < y) (x, y) else (y, x),
          var c = e.group_by(k).count(), c > 1, var p = FlatMap([k, (k.1, k.0)]).
""",
}
RULES["graph::ConnectedComponents64"] = RULES["graph::ConnectedComponents"]

# the hidden relations each transformer's rules use, by placeholder
_HIDDEN = {"A": "Arc", "P": "Path", "L": "Label"}


def expand_transformers(prog: ast.Program, parse) -> ast.Program:
    """`prog` with each `apply` replaced by its transformer's rules (and the relations they
    use), and `extern transformer` declarations dropped. `parse(text, file)` parses rules."""
    applies = [d for d in prog.decls if isinstance(d, ast.Apply)]
    declared = {d.name: d for d in prog.decls if isinstance(d, ast.TransformerDecl)}
    kept = [d for d in prog.decls if not isinstance(d, (ast.Apply, ast.TransformerDecl))]
    if not applies:
        return dataclasses.replace(prog, decls=kept) if len(kept) < len(prog.decls) else prog
    relations = {d.name: d for d in prog.decls if isinstance(d, ast.RelationDecl)}
    added: list[ast.Decl] = []
    for a in applies:
        added += _expand(a, declared, relations, prog, parse)
    return dataclasses.replace(prog, decls=kept + added)


def _expand(a: ast.Apply, declared: dict[str, ast.TransformerDecl],
            relations: dict[str, ast.RelationDecl], prog: ast.Program, parse) -> list[ast.Decl]:
    source = prog.sources.get(a.span.file, prog.source)

    def fail(message: str, span) -> TypeCheckError:
        return TypeCheckError(message, span, source)

    t = declared.get(a.transformer)
    if t is None:
        raise fail(f"unknown transformer '{a.transformer}' (DDlog's are declared by its "
                   "`graph` library: `import graph`)", a.span)
    if t.name not in RULES:
        raise fail(f"transformer '{t.name}' is declared `extern` (DDlog runs its Rust code); "
                   f"the ones that run here are {', '.join(sorted(RULES))}", a.span)
    for given, params, what in ((a.args, t.inputs, "argument"), (a.outputs, t.outputs,
                                                                  "output")):
        if len(given) != len(params):
            raise fail(f"transformer '{t.name}' takes {len(params)} {what}(s), found "
                       f"{len(given)}", a.span)
        for g, (name, kind) in zip(given, params):
            if (kind == "relation") != (g.name.rsplit("::", 1)[-1][:1].isupper()):
                raise fail(f"the {what} {name} of '{t.name}' is a {kind}, found '{g.name}'",
                           g.span)
            if kind == "relation" and g.name not in relations:
                raise fail(f"unknown relation '{g.name}'", g.span)
    out = relations[a.outputs[0].name]
    record = out.record
    if not (isinstance(record, ast.TupleType) and len(record.items) == 2):
        raise fail(f"the output of '{t.name}' is a relation of node pairs: declare "
                   f"`relation {out.name}[(N, N)]`, N the nodes' type", a.outputs[0].span)
    if out.role == "input":
        raise fail(f"cannot derive input relation '{out.name}'", a.outputs[0].span)
    names = {"E": a.args[0].name, "O": out.name}
    names.update({k: f"{out.name}__{v}" for k, v in _HIDDEN.items()})
    names.update(F=a.args[1].name, T=a.args[2].name)
    rules = parse(RULES[t.name].format(**names), a.span.file).decls
    used = {r.head.relation for r in rules} - {out.name}
    for name in sorted(used):
        if name in relations:
            raise fail(f"relation '{name}' is declared by the program: `apply` needs its "
                       "name for a relation of its own", a.span)
    hidden = [ast.RelationDecl("internal", name, [], a.span, record=copy.deepcopy(record))
              for name in sorted(used)]
    return [_placed(d, a.span) for d in [*hidden, *rules]]


def _placed(decl: ast.Decl, span) -> ast.Decl:
    """`decl` with every node's place the `apply`'s."""
    def place(n: ast.Node) -> ast.Node:
        return dataclasses.replace(n, span=span) if hasattr(n, "span") else n
    return decl.transform(place)
