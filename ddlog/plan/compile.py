"""Compiles strata of normalised rules into circuits (ddlog/plan/circuit.py), one rule body term at a
time, left to right, as the DDlog chapter of the DBSP paper compiles Datalog to circuits:

- a relation atom joins the valuation with the relation on the variables they share (a
  Cartesian product when none, an intersection when all); constants, expressions and repeated
  variables in the atom become filters or join keys;
- `not R(..)` is an antijoin with distinct(π_keys(R));
- a predicate is a filter, `var v = e` a map, `var v = FlatMap(e)` a flatmap;
- `var g = e.group_by(k)` a GroupBy (last term: see ddlog/plan/normalize.py);
- the head is a projection; the rules of one relation are summed and passed through distinct,
  except for a multiset, a stream, and an internal relation whose multiplicities a group can
  see (`counted_relations`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ddlog.syntax import ast
from ddlog.check.program import CheckedProgram
from ddlog.types import RelationInfo
from ddlog.plan.circuit import (AntiJoin, Circuit, Col, Delay, Distinct, FlatMap, GroupBy, Import,
                           IRExpr, Join, Node, Output, Select, Union_, var_col)
from ddlog.limits import recursion_room
from ddlog.plan.normalize import UNIT, group_key_type, normalize
from ddlog.plan.exprs import Binary, lower
from ddlog.types import BOOL, TGroup, TMap, TSet, TVec, Type
from ddlog.plan.strata import Stratum, stratify_rules
from ddlog.errors import StratificationError


@dataclass
class CompiledProgram:
    program: CheckedProgram
    relations: dict[str, RelationInfo]  # declared + internal (group relations, __unit)
    strata: list[Stratum]
    circuits: list[Circuit]  # one per stratum that has rules, in evaluation order
    # internal relations that keep each record's number of derivations (counted_relations)
    counted: frozenset[str] = frozenset()


def free_vars(e: IRExpr) -> set[str]:
    """Variables an expression reads (lambda parameters and pattern variables excluded)."""
    out: set[str] = set()

    def walk(x, bound: frozenset[str]) -> None:
        if isinstance(x, ast.Var):
            if x.name not in bound:
                out.add(x.name)
        elif isinstance(x, ast.Lambda):
            walk(x.body, bound | set(x.params))
        elif isinstance(x, ast.MatchExpr):
            walk(x.scrutinee, bound)
            for arm in x.arms:
                walk(arm.body, bound | pattern_vars(arm.pattern))
        elif isinstance(x, ast.Interp):
            for p in x.parts:
                if not isinstance(p, str):
                    walk(p, bound)
        elif isinstance(x, ast.StructLit):
            for _, v in x.fields:
                walk(v, bound)
        elif isinstance(x, (ast.BinOp,)):
            walk(x.left, bound)
            walk(x.right, bound)
        elif isinstance(x, ast.UnOp):
            walk(x.operand, bound)
        elif isinstance(x, ast.Call):
            for a in x.args:
                walk(a, bound)
        elif isinstance(x, ast.FieldAccess):
            walk(x.expr, bound)
        elif isinstance(x, (ast.TupleLit, ast.VecLit)):
            for a in x.items:
                walk(a, bound)
        elif isinstance(x, ast.IfExpr):
            walk(x.cond, bound)
            walk(x.then, bound)
            walk(x.other, bound)
        elif isinstance(x, ast.Cast):
            walk(x.expr, bound)

    walk(e, frozenset())
    return out


def pattern_vars(p: ast.Pattern) -> frozenset[str]:
    return frozenset(v.name for v in p.find(ast.PVar))


def _eq(a, b) -> IRExpr:
    """`a == b` as an IR filter (`b` may still be an AST expression)."""
    return Binary("==", lower(a), lower(b), BOOL)


class _Builder:
    """Builds one stratum's circuit."""

    def __init__(self, stratum: Stratum, relations: dict[str, RelationInfo],
                 counted: frozenset[str] = frozenset()):
        self.stratum = stratum
        self.relations = relations
        self.counted = counted
        self.nodes: list[Node] = []
        self.sources: dict[str, int] = {}
        self.keys = 0

    def add(self, cls, schema, **kw) -> int:
        node = cls(id=len(self.nodes), schema=tuple(schema), **kw)
        self.nodes.append(node)
        return node.id

    def schema(self, nid: int) -> tuple[tuple[str, Type], ...]:
        return self.nodes[nid].schema

    def source(self, rel: str) -> int:
        if rel not in self.sources:
            info = self.relations[rel]
            schema = [(f"c{k}", t) for k, t in enumerate(info.column_types)]
            cls = Delay if (self.stratum.recursive and rel in self.stratum.relations) else Import
            self.sources[rel] = self.add(cls, schema, relation=rel)
        return self.sources[rel]

    def fresh_key(self) -> str:
        self.keys += 1
        return f"k{self.keys}"

    # -- body terms ------------------------------------------------------------------------

    def atom_side(self, atom: ast.Atom, bound: dict[str, Type]):
        """The relation side of an atom: a Select over the source that filters constants and
        repeated variables and names columns; plus the join keys (left exprs, right columns)."""
        src = self.source(atom.relation)
        types = self.relations[atom.relation].column_types
        filters: list[IRExpr] = []
        outputs: list[tuple[str, IRExpr]] = []
        fresh: dict[str, Col] = {}
        left_keys: list[tuple[str, IRExpr]] = []
        right_keys: list[str] = []
        for k, arg in enumerate(atom.args):
            c = Col(f"c{k}", types[k])
            if isinstance(arg, ast.Wildcard):
                continue
            if isinstance(arg, ast.Var) and arg.name not in bound:
                if arg.name in fresh:
                    filters.append(_eq(c, fresh[arg.name]))
                else:
                    fresh[arg.name] = c
                    outputs.append((var_col(arg.name), c))
                continue
            fv = free_vars(arg)
            if not fv:
                filters.append(_eq(c, arg))
            else:  # a bound variable, or an expression over bound variables: a join key
                key = self.fresh_key()
                right_keys.append(key)
                outputs.append((key, c))
                left_keys.append((key, arg))
        return src, filters, outputs, fresh, left_keys, right_keys

    def with_keys(self, cur: int, left_keys: list[tuple[str, IRExpr]]) -> tuple[int, list[str]]:
        """Left join-key columns: a bound variable's own column, or a computed one."""
        names: list[str] = []
        extra: list[tuple[str, IRExpr]] = []
        for key, e in left_keys:
            if isinstance(e, ast.Var):
                names.append(var_col(e.name))
            else:
                names.append(key)
                extra.append((key, lower(e)))
        if extra:
            schema = list(self.schema(cur)) + [(k, e.ty) for k, e in extra]
            identity = [(n, Col(n, t)) for n, t in self.schema(cur)]
            cur = self.add(Select, schema, input=cur, outputs=identity + extra, label="join keys")
        return cur, names

    def positive(self, cur: int | None, atom: ast.Atom, bound: dict[str, Type]) -> int:
        src, filters, outputs, fresh, left_keys, right_keys = self.atom_side(atom, bound)
        rschema = [(n, e.ty) for n, e in outputs]
        right = self.add(Select, rschema, input=src, filters=filters, outputs=outputs,
                         label=atom.relation)
        for name, c in fresh.items():
            bound[name] = c.ty
        if cur is None:
            return right
        cur_l, lnames = self.with_keys(cur, left_keys)
        out_cols = [n for n, _ in rschema if n not in right_keys]
        schema = [s for s in self.schema(cur)] + [(n, t) for n, t in rschema if n in out_cols]
        return self.add(Join, schema, left=cur_l, right=right, left_keys=lnames,
                        right_keys=right_keys, right_out=out_cols)

    def negative(self, cur: int, atom: ast.Atom, bound: dict[str, Type]) -> int:
        src, filters, outputs, fresh, left_keys, right_keys = self.atom_side(atom, bound)
        # Fresh variables cannot occur in `not` (the type checker rejects them); a repeated
        # wildcard-like fresh var would be a filter only.
        outputs = [(n, e) for n, e in outputs if n in right_keys]
        rschema = [(n, e.ty) for n, e in outputs]
        proj = self.add(Select, rschema, input=src, filters=filters, outputs=outputs,
                        label=f"π {atom.relation}")
        right = self.add(Distinct, rschema, input=proj)
        cur_l, lnames = self.with_keys(cur, left_keys)
        return self.add(AntiJoin, self.schema(cur), left=cur_l, right=right, left_keys=lnames,
                        right_keys=right_keys)

    def unit(self) -> int:
        return self.add(Select, [], input=self.source(UNIT), outputs=[], label="()")

    def rule(self, rule: ast.Rule) -> int:
        bound: dict[str, Type] = {}
        cur: int | None = None
        for item in rule.body:
            if isinstance(item, ast.BodyAtom) and not item.negated:
                cur = self.positive(cur, item.atom, bound)
                continue
            if cur is None:
                cur = self.unit()
            identity = [(n, Col(n, t)) for n, t in self.schema(cur)]
            if isinstance(item, ast.BodyAtom):
                cur = self.negative(cur, item.atom, bound)
            elif isinstance(item, ast.BodyCond):
                cur = self.add(Select, self.schema(cur), input=cur, filters=[lower(item.expr)],
                               outputs=identity, label="filter")
            elif isinstance(item, ast.BodyAssign):
                bound[item.var] = item.expr.ty
                cur = self.add(Select, list(self.schema(cur)) + [(var_col(item.var),
                                                                   item.expr.ty)],
                               input=cur,
                               outputs=identity + [(var_col(item.var), lower(item.expr))],
                               label=f"var {item.var}")
            elif isinstance(item, ast.BodyFlatMap):
                t = item.expr.ty
                elem = t.elem if isinstance(t, (TVec, TSet, TMap)) else t
                bound[item.var] = elem
                cur = self.add(FlatMap, list(self.schema(cur)) + [(var_col(item.var), elem)],
                               input=cur, column=var_col(item.var), expr=lower(item.expr))
            elif isinstance(item, ast.BodyGroupBy):
                key_t = group_key_type(item.keys)
                g_t = TGroup(key_t, item.expr.ty)
                keys = [var_col(k.name) for k in item.keys]
                schema = [(var_col(k.name), k.ty) for k in item.keys] + [(var_col(item.var),
                                                                         g_t)]
                bound.clear()
                for k in item.keys:
                    bound[k.name] = k.ty
                bound[item.var] = g_t
                before = rule.body[:next(k for k, x in enumerate(rule.body) if x is item)]
                counted = any(self.keeps_multiplicities(a.atom.relation) for a in before
                              if isinstance(a, ast.BodyAtom) and not a.negated)
                cur = self.add(GroupBy, schema, input=cur, keys=keys, elem=lower(item.expr),
                               column=var_col(item.var), key_type=key_t, counted=counted)
            else:  # pragma: no cover - the parser produces no other items
                raise TypeError(item)
        if cur is None:
            cur = self.unit()
        info = self.relations[rule.head.relation]
        outputs = [(f"c{k}", lower(e)) for k, e in enumerate(rule.head.args)]
        schema = [(f"c{k}", t) for k, t in enumerate(info.column_types)]
        return self.add(Select, schema, input=cur, outputs=outputs,
                        label=f"head {rule.head.relation}")

    def keeps_multiplicities(self, rel: str) -> bool:
        return self.relations[rel].weighted or rel in self.counted

    def build(self) -> Circuit:
        heads: dict[str, list[int]] = {r: [] for r in self.stratum.relations}
        for rule in self.stratum.rules:
            heads[rule.head.relation].append(self.rule(rule))
        outputs: dict[str, int] = {}
        delays: dict[str, int] = {}
        for rel in self.stratum.relations:
            info = self.relations[rel]
            schema = [(f"c{k}", t) for k, t in enumerate(info.column_types)]
            ins = heads[rel]
            if not ins:
                continue
            # A group relation's single rule ends in a GroupBy, which already emits a set.
            grouped = (len(ins) == 1 and isinstance(self.nodes[self.nodes[ins[0]].input],
                                                    GroupBy))
            u = ins[0] if len(ins) == 1 else self.add(Union_, schema, sources=ins)
            # a multiset, a stream or a counted relation keeps its multiplicities: no distinct
            d = u if grouped or self.keeps_multiplicities(rel) \
                else self.add(Distinct, schema, input=u)
            outputs[rel] = self.add(Output, schema, input=d, relation=rel)
            delays[rel] = d
        return Circuit(self.stratum.index, self.stratum.relations, self.stratum.recursive,
                       self.nodes, outputs, delays)


@recursion_room()
def compile_program(program: CheckedProgram, distinct_internal: bool = False
                    ) -> CompiledProgram:
    """`distinct_internal`: no relation is counted (counted_relations), as DDlog's
    `--output-internal-relations` makes every internal relation an output, made distinct."""
    relations, rules = normalize(program)
    strata = stratify_rules(list(relations), rules, program.file, program.source)
    for s in strata:
        weighted = [r for r in s.relations if s.recursive and relations[r].weighted]
        if weighted:
            rel = relations[weighted[0]]
            rule = next(r for r in s.rules if r.head.relation == rel.name)
            raise StratificationError(
                f"{rel.kind} '{rel.name}' is recursive (with {', '.join(sorted(s.relations))}): "
                f"a recursive relation must be a set, whose distinct ends the fixpoint",
                rule.span, program.source)
    counted = frozenset() if distinct_internal else counted_relations(relations, strata)
    circuits = [_Builder(s, relations, counted).build() for s in strata if s.rules]
    return CompiledProgram(program, relations, strata, circuits, counted)


def counted_relations(relations: dict[str, RelationInfo], strata: list[Stratum]
                      ) -> frozenset[str]:
    """The internal relations whose records keep their number of derivations instead of being
    made distinct. DDlog applies distinct to output relations and recursive ones only, so a
    record of an internal relation derived twice weighs 2 in a group over it, which a loop
    `for ((x, w) in g)` sees. Nothing else can tell a relation from its distinct, so only the
    relations a group reads, and those their multiplicities come from, are kept counted: the
    others stay sets. A recursive relation (whose distinct ends its fixpoint), a relation read
    through a delay (`R-1`, which holds R's value) and a group relation stay sets."""
    recursive = {r for s in strata if s.recursive for r in s.relations}
    delayed = {info.delay_of for info in relations.values() if info.delay_of is not None}

    def candidate(rel: str) -> bool:
        info = relations[rel]
        return (info.role == "internal" and info.kind == "relation" and rel not in recursive
                and rel not in delayed and info.delay_of is None and not rel.startswith("__"))

    by_head: dict[str, list[str]] = {}  # relation -> the relations its rules read
    todo: list[str] = []  # the relations a group reads (normalised, a group ends its rule)
    for r in (r for s in strata for r in s.rules):
        atoms = [x.atom.relation for x in r.body
                 if isinstance(x, ast.BodyAtom) and not x.negated]
        by_head.setdefault(r.head.relation, []).extend(atoms)
        if r.body and isinstance(r.body[-1], ast.BodyGroupBy):
            todo.extend(atoms)
    counted: set[str] = set()
    seen: set[str] = set()
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        if candidate(rel):
            counted.add(rel)
        elif not relations[rel].weighted:
            continue  # a set: the multiplicities of what it reads end at its distinct
        todo.extend(by_head.get(rel, []))  # they flow on into it: go on upstream
    return frozenset(counted)
