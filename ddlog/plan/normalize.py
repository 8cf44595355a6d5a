"""Rule normal form: rewrites the typed rules into the shape the compiler expects.

`var g = e.group_by(k)` ends a rule's valuation, so a rule is split there: the part
up to the group_by defines a fresh relation `__G<n>(k.., g)`, and the rest of the rule reads it.
Afterwards every GroupBy is the last body item of a rule whose head is such a relation: in a
non-recursive stratum of its own, or in the recursive one of the relations it reads when the
rule's head reads the group back (DDlog allows aggregation inside a recursion). Facts and
bodies that start with no relation read the one-row relation `__unit()`, inserted in the first
epoch.
"""
from __future__ import annotations

from dataclasses import replace

from ddlog.syntax import ast
from ddlog.check.program import CheckedProgram
from ddlog.types import RelationInfo
from ddlog.types import TGroup, TTuple, Type

UNIT = "__unit"


def group_key_type(keys: list[ast.Var]) -> Type:
    if len(keys) == 1:
        return keys[0].ty
    return TTuple(tuple(k.ty for k in keys))


def _var(name: str, ty: Type, span) -> ast.Var:
    return ast.Var(name, span, ty=ty)


def normalize(program: CheckedProgram) -> tuple[dict[str, RelationInfo], list[ast.Rule]]:
    """Return all relations (declared ones, group relations, `__unit` if used) in dependency-
    friendly declaration order, and the rewritten rules."""
    relations: dict[str, RelationInfo] = {}
    rules: list[ast.Rule] = []
    counter = 0
    extra: dict[str, list[RelationInfo]] = {}

    def split(rule: ast.Rule) -> None:
        nonlocal counter
        for k, item in enumerate(rule.body):
            if not isinstance(item, ast.BodyGroupBy):
                continue
            counter += 1
            name = f"__G{counter}_{rule.head.relation}"
            key_t = group_key_type(item.keys)
            g_t = TGroup(key_t, item.expr.ty)
            cols = tuple((f"k{j}", key.ty) for j, key in enumerate(item.keys)) + (("g", g_t),)
            extra.setdefault(rule.head.relation, []).append(
                RelationInfo(name, "internal", cols, item.span))
            args = [_var(key.name, key.ty, key.span) for key in item.keys]
            args.append(_var(item.var, g_t, item.span))
            rules.append(ast.Rule(ast.Atom(name, args, item.span), rule.body[:k + 1], rule.span))
            reader = ast.BodyAtom(ast.Atom(name, [replace(a) for a in args], item.span), False,
                                  item.span)
            split(ast.Rule(rule.head, [reader] + rule.body[k + 1:], rule.span))
            return
        rules.append(rule)

    for rule in program.rules:
        split(rule)

    needs_unit = any(not r.body or not isinstance(r.body[0], ast.BodyAtom) or r.body[0].negated
                     for r in rules)
    if needs_unit:
        relations[UNIT] = RelationInfo(UNIT, "input", (), program.ast.decls[0].span
                                       if program.ast.decls else None)
    for name, info in program.relations.items():
        for e in extra.get(name, []):
            relations[e.name] = e
        relations[name] = info
    return relations, rules
