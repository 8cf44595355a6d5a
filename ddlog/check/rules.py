"""The type checker: `check_program(ast.Program) -> CheckedProgram`.

Order of work: declarations (ddlog/check/resolve.py), then functions callees first (rejecting
recursion; each body is checked once and its own calls inlined), then rules. A rule body is
checked left to right with an environment `variable -> type` : positive atoms
bind fresh variables, `not` needs bound ones, `var v = e` / `FlatMap` add one variable and
`group_by` replaces the environment by its keys and the group. The head is checked last,
against the relation's column types, over the final environment.

The first error raises `TypeCheckError(message, span, prog.source)`.
"""
from __future__ import annotations

import copy
import pickle

from ddlog.syntax import ast
from ddlog.syntax.bindings import matching_items
from ddlog.syntax.modules import bound_variables
from ddlog.check.program import INSPECTED, CheckedProgram, Inspection
from ddlog.types import RelationInfo
from ddlog.errors import TypeCheckError
from ddlog.check.exprs import ExprChecker
from ddlog.check.calls import check_constants
from ddlog.check.inline import Inliner, iter_nodes, measure
from ddlog.limits import recursion_room
from ddlog.check.resolve import Decls, FuncInfo, resolve_decls
from ddlog.check.scope import Retype, Scope, error, flexible, mismatch
from ddlog.builtins.inspect import EFFECTS, INSPECT_VARS
from ddlog.builtins.prelude import PRELUDE, prelude_text, with_prelude
from ddlog.types import BOOL, TFunc, TGroup, TMap, TSet, TTuple, TVec, Type


@recursion_room()
def check_program(prog: ast.Program) -> CheckedProgram:
    prog = with_prelude(prog)
    try:
        decls = resolve_decls(prog)
        ck = ExprChecker(decls, Inliner())
        for f in function_order(decls):
            check_function(ck, f)
        facts = input_facts(prog, decls)
        rules = [check_rule(ck, rule) for rule in prog.rules
                 if not _is_input_fact(rule, decls)]
        rules = [ck.closures.expand(ck, r) for r in rules]  # now that every closure is known
        check_constants(rules)
        rules, inspections = split_inspections(rules, decls.relations)
        keys = check_keys(ck, prog, decls)
        for index in prog.indexes:
            check_index(index, decls)
    except TypeCheckError as e:
        if e.source is None:
            # an error in an imported module quotes that module's text
            file = e.span.file if e.span is not None else None
            e.source = (prelude_text() if file == PRELUDE
                        else prog.sources.get(file, prog.source))
        raise
    return CheckedProgram(prog, decls.relations, decls.types, rules, keys, facts, inspections)


def check_index(index: ast.IndexDecl, decls: Decls) -> None:
    """`index I(x: T, ..) on R(..)`: R is a relation, the atom gives each of its columns a
    variable or `_`, and each field is one of those variables, of its column's type. DDlog's
    query API reads an index; nothing here does, so it is only checked."""
    atom = index.atom
    rel = decls.relations.get(atom.relation)
    if rel is None:
        raise error(f"unknown relation '{atom.relation}'", atom.span)
    if atom.whole is not None or atom.names is not None or len(atom.args) != rel.arity:
        raise error(f"the atom of index '{index.name}' gives each of the {rel.arity} column(s) "
                    f"of '{rel.name}' a variable or `_`", atom.span)
    found = {}
    for arg, (col, t) in zip(atom.args, rel.columns):
        if not isinstance(arg, (ast.Var, ast.Wildcard)):
            raise error(f"an index's atom has variables and `_` only, found an expression for "
                        f"column '{col}'", arg.span)
        if isinstance(arg, ast.Var):
            found[arg.name] = t
    for f in index.fields:
        if f.name not in found:
            raise error(f"field '{f.name}' of index '{index.name}' is not a variable of its "
                        "atom", f.span)
        if decls.resolve(f.type) != found[f.name]:
            raise mismatch(found[f.name], decls.resolve(f.type), f.span,
                           f"field '{f.name}' of index '{index.name}'")


def split_inspections(rules: list[ast.Rule], relations: dict[str, RelationInfo]
                      ) -> tuple[list[ast.Rule], list[Inspection]]:
    """Each `Inspect` taken out of its rule (it derives nothing) and made an internal multiset
    relation of the variables bound at its point, derived by the body before it; the
    Inspection says what each of its changes calls."""
    out: list[ast.Rule] = []
    inspections: list[Inspection] = []
    for rule in rules:
        kept = [item for item in rule.body if not isinstance(item, ast.BodyInspect)]
        for k, item in enumerate(rule.body):
            if not isinstance(item, ast.BodyInspect):
                continue
            name = f"{INSPECTED}{len(inspections)}"
            relations[name] = RelationInfo(name, "internal", tuple(item.vars), item.span,
                                           kind="multiset")
            head = ast.Atom(name, [ast.Var(v, item.span, t) for v, t in item.vars], item.span)
            before = [i for i in rule.body[:k] if not isinstance(i, ast.BodyInspect)]
            out.append(ast.Rule(head, copy.deepcopy(before), item.span))
            inspections.append(Inspection(name, item.expr, item.span))
        out.append(rule if len(kept) == len(rule.body) else ast.Rule(rule.head, kept, rule.span))
    return out, inspections


def delayed(relations: dict[str, RelationInfo], rel: RelationInfo, n: int) -> RelationInfo:
    """The relation `R-n` (and R-1 .. R-(n-1), each the delay of the one before): R's columns
    and kind, no rules; the engine gives it R's value of n transactions ago."""
    newer = rel
    for k in range(1, n + 1):
        name = f"{rel.name}-{k}"
        if name not in relations:
            relations[name] = RelationInfo(name, "internal", rel.columns, rel.span,
                                           ctor=rel.record, kind=rel.kind, delay_of=newer.name,
                                           shape=rel.shape)
        newer = relations[name]
    return newer


def _is_input_fact(rule: ast.Rule, decls: Decls) -> bool:
    rel = decls.relations.get(rule.head.relation)
    return not rule.body and rel is not None and rel.role == "input"


def input_facts(prog: ast.Program, decls: Decls) -> dict[str, list[tuple]]:
    """`R(..).` for an input relation R: DDlog's static facts, which the program's first
    transaction inserts before the user's updates (the user may delete them later). Their
    arguments are constants, converted as the command language converts a record."""
    from ddlog.values.literals import row_of

    out: dict[str, list[tuple]] = {}
    for rule in prog.rules:
        if _is_input_fact(rule, decls):
            rel = decls.relations[rule.head.relation]
            file = rule.span.file
            source = prog.sources.get(file, prog.source)
            out.setdefault(rel.name, []).append(row_of(rule.head, rel, file, source))
    return out


def check_keys(ck: ExprChecker, prog: ast.Program, decls: Decls) -> dict[str, ast.Expr]:
    """The primary keys (`primary key (x) e`) of input relations, each as an expression over
    the relation's columns `key_columns(n)`: `{ var x = R{__key0, ..}; e }`, typed."""
    keys: dict[str, ast.Expr] = {}
    for r in prog.relations:
        if r.key is None:
            continue
        rel = decls.relations[r.name]
        sp = r.key.span
        if rel.role != "input":
            raise error(f"only an input relation has a primary key; '{rel.name}' is an "
                        f"{rel.role} relation", sp)
        if rel.weighted:
            raise error(f"a primary key makes one record per key; '{rel.name}' is a "
                        f"{rel.kind}, which may hold a record several times", sp)
        cols = key_columns(rel.arity)
        record = record_of(rel, [ast.Var(c, sp) for c in cols], sp)
        sc = Scope(dict(zip(cols, rel.column_types)),
                   lambda v: f"unknown variable '{v}' in the primary key of '{rel.name}'",
                   frozenset())
        keys[r.name] = ck.infer(ast.Let(r.key.var, record, r.key.expr, sp), sc)
    return keys


def record_of(rel: RelationInfo, columns: list[ast.Expr], span) -> ast.Expr:
    """A record of `rel` built from the values of its columns: `R{c1, ..}`, `(c1, ..)` or the
    one column's value, as the relation's shape says."""
    if rel.shape == "tuple":
        return ast.TupleLit(columns, span)
    if rel.shape == "value":
        return columns[0]
    return ast.StructLit(rel.record, [(None, c) for c in columns], span)


def key_columns(n: int) -> list[str]:
    """The variables a primary key expression (check_keys) reads the columns from."""
    return [f"__key{i}" for i in range(n)]


# ---------------------------------------------------------------------------------------------
# Functions


def function_order(decls: Decls) -> list[FuncInfo]:
    """User functions, each after the functions it calls; an error on (mutual) recursion,
    located at the call that closes the cycle."""
    def callees(n: ast.Node, local: set[str]) -> list[str]:
        """The functions `n` may call (of a shared name, those taking as many arguments:
        which one is known once the arguments are typed); a variable `local` names is none."""
        c = _callee(n)
        if isinstance(n, ast.Var) and c in local:
            return []
        if c not in decls.overloads:
            return [c] if c in decls.functions else []
        return [o for o in decls.overloads[c] if not isinstance(n, ast.Call)
                or len(decls.functions[o].params) == len(n.args)]

    calls: dict[str, list[tuple[ast.Node, str]]] = {}
    for name, f in decls.functions.items():
        local = bound_variables(f.decl)
        nodes = iter_nodes(f.decl.body) if f.decl.body is not None else ()
        calls[name] = [(n, c) for n in nodes if isinstance(n, (ast.Call, ast.Var))
                       for c in callees(n, local)]
    order: list[FuncInfo] = []
    state: dict[str, str] = {}  # name -> 'active' | 'done'
    path: list[str] = []

    def visit(name: str) -> None:
        state[name] = "active"
        path.append(name)
        for call, callee in calls[name]:
            if state.get(callee) == "active":
                cycle = " -> ".join(path[path.index(callee):] + [callee])
                raise error(f"recursive function '{callee}' ({cycle}): recursive functions "
                            "are not supported", call.span)
            if callee not in state:
                visit(callee)
        path.pop()
        state[name] = "done"
        order.append(decls.functions[name])

    for name in decls.functions:
        if name not in state:
            visit(name)
    return order


def _callee(n: ast.Call | ast.Var) -> str:
    """The function a call calls, or a variable names (passed as a closure)."""
    return n.func if isinstance(n, ast.Call) else n.name


def check_function(ck: ExprChecker, f: FuncInfo) -> None:
    if f.generic or f.decl.body is None:
        return  # checked at each call (ExprChecker._generic_call); an extern one is refused
    name = f.decl.name
    sc = Scope(dict(f.params), lambda v: f"unknown variable '{v}' in function '{name}'")
    f.decl.body = ck.check(f.decl.body, sc, f.result, f"result of function '{name}'")
    f.body = f.decl.body
    f.size = measure(f.body)


# ---------------------------------------------------------------------------------------------
# Rules


def _bound_first(v: str) -> str:
    return f"unbound variable '{v}': it must be bound by an earlier term"


def check_rule(ck: ExprChecker, rule: ast.Rule) -> ast.Rule:
    """Check a rule (annotating it in place). A variable that a `var` or `FlatMap` item binds
    to untyped literals and that is used as another type (Retype) gets that type, and the rule
    is checked again from an untouched copy: pickled bytes, read back only then (that copies a
    tree of dataclasses several times faster than copy.deepcopy), and taken only of rules with
    such an item."""
    hints: dict[str, Type] = {}
    untouched = pickle.dumps(rule, pickle.HIGHEST_PROTOCOL) if any(
        isinstance(item, (ast.BodyAssign, ast.BodyFlatMap)) for item in rule.body) else None
    attempt = rule
    while True:
        try:
            return RuleChecker(ck, attempt, hints).check()
        except Retype as r:
            if r.var in hints or untouched is None:  # cannot happen: see RuleChecker.flex
                raise AssertionError(f"retyped unexpectedly: {r.var}") from None
            hints[r.var] = r.ty
            attempt = pickle.loads(untouched)


class RuleChecker:
    def __init__(self, ck: ExprChecker, rule: ast.Rule, hints: dict[str, Type] | None = None):
        self.ck = ck
        self.rule = rule
        self.env: dict[str, Type] = {}
        self.dropped: set[str] = set()  # variables that a group_by took out of scope
        self.hints = hints or {}  # variable -> type its literal takes (see check_rule)
        # variables of defaulted type (Scope.flex): bound by `var` and `FlatMap` items alone
        self.flex: set[str] = set()

    # -- helpers --------------------------------------------------------------------------------

    def scope(self, unbound=None, env: dict[str, Type] | None = None) -> Scope:
        def message(v: str) -> str:
            if v in self.dropped:
                # `__g<N>` variables come from the parser's desugaring, not from the user.
                kept = ", ".join(f"'{k}'" for k in self.env if not k.startswith("__")) \
                    or "nothing"
                return f"variable '{v}' is no longer bound after group_by (only {kept} are)"
            return (unbound or _bound_first)(v)
        env = self.env if env is None else env
        return Scope(env, message, frozenset(self.flex & set(env)))

    def relation(self, atom: ast.Atom) -> RelationInfo:
        rel = self.ck.decls.relations.get(atom.relation)
        if rel is None:
            raise error(f"unknown relation '{atom.relation}'", atom.span)
        if atom.delay:
            rel = delayed(self.ck.decls.relations, rel, atom.delay)
            atom.relation, atom.delay = rel.name, 0  # the atom now reads `R-N` itself
        if atom.diff and rel.kind != "stream":
            raise error(f"differentiation ({rel.name}') applies to streams; '{rel.name}' is a "
                        f"{rel.kind}", atom.span)
        return rel

    def stream_rule(self) -> None:
        """A rule whose body reads a stream (not differentiated: `S'` reads it as a relation)
        computes a stream, and only such a rule may derive a stream, as in DDlog."""
        streams = [item.atom for item in self.rule.body
                   if isinstance(item, ast.BodyAtom) and not item.atom.diff
                   and self.ck.decls.relations[item.atom.relation].kind == "stream"]
        head = self.relation(self.rule.head)
        if head.kind == "stream" and not streams:
            raise error(f"'{head.name}' is a stream, but the body of this rule reads no stream: "
                        f"it computes a relation", self.rule.head.span)
        if streams and head.kind != "stream":
            s = streams[0].relation
            raise error(f"the body of this rule reads the stream '{s}', so it computes a stream, "
                        f"but '{head.name}' is a {head.kind} (declare it `stream`, or read "
                        f"{s}' as a relation)", streams[0].span)

    def positional(self, atom: ast.Atom, rel: RelationInfo, head: bool) -> None:
        """Turn `R(.col = e)` into positional arguments, `_` for the columns not given; check
        the argument count."""
        if atom.names is None:
            if len(atom.args) != rel.arity:
                raise error(f"relation '{rel.name}' expects {rel.arity} argument"
                            f"{'' if rel.arity == 1 else 's'}, found {len(atom.args)}",
                            atom.span)
            return
        slots: list[ast.Expr | None] = [None] * rel.arity
        for name, arg in zip(atom.names, atom.args):
            if name not in rel.column_names:
                raise error(f"relation '{rel.name}' has no column '{name}'", arg.span)
            i = rel.column_names.index(name)
            if slots[i] is not None:
                raise error(f"column '{name}' of '{rel.name}' is given twice", arg.span)
            slots[i] = arg
        for i, s in enumerate(slots):
            if s is None:
                if head:
                    raise error(f"missing column '{rel.column_names[i]}' of '{rel.name}' in "
                                "rule head", atom.span)
                slots[i] = ast.Wildcard(atom.span)
        atom.args, atom.names = slots, None

    # -- the rule -------------------------------------------------------------------------------

    def check(self) -> ast.Rule:
        body: list[ast.BodyItem] = []
        todo = list(self.rule.body)
        while todo:
            item = todo.pop(0)
            matches = self.atom_patterns(item) if isinstance(item, ast.BodyAtom) else []
            getattr(self, "_" + type(item).__name__)(item)
            body.append(item)
            todo[:0] = matches  # checked next, once the atom has bound its columns
            if isinstance(item, ast.BodyAtom) and item.record is not None:
                # `d in R(..)` binds d next: var d = R{c1, .., cn}
                atom = item.atom
                rel = self.relation(atom)
                fields: list[ast.Expr] = [ast.Var(a.name, a.span) for a in atom.args]
                assign = ast.BodyAssign(item.record, record_of(rel, fields, atom.span),
                                        item.span)
                self._BodyAssign(assign)
                body.append(assign)
        self.rule.body = body
        self.head(self.rule.head)
        self.stream_rule()
        return self.rule

    def head(self, atom: ast.Atom) -> None:
        if atom.delay or atom.diff:
            what = f"{atom.relation}-{atom.delay}" if atom.delay else f"{atom.relation}'"
            raise error(f"{what} cannot be derived: delays and differentiation are only read "
                        f"in a rule's body", atom.span)
        rel = self.relation(atom)
        if rel.role == "input":
            raise error(f"cannot derive input relation '{rel.name}': an input relation takes "
                        f"updates and facts (rules without a body), not rules", atom.span)
        if atom.whole is not None:
            self.whole_head(atom, rel)
        self.positional(atom, rel, head=True)
        sc = self.scope(lambda v: f"unbound variable '{v}' in rule head")
        for i, (arg, (col, t)) in enumerate(zip(atom.args, rel.columns)):
            if isinstance(arg, ast.Wildcard):
                raise error("'_' is not allowed in a rule head: every column needs a value",
                            arg.span)
            atom.args[i] = self.ck.check(arg, sc, t, f"column '{col}' of '{rel.name}'")

    def whole_head(self, atom: ast.Atom, rel: RelationInfo) -> None:
        """`R[e]`: the columns are the fields of the record e (of R's record type), the
        elements of a tuple, or e itself."""
        if rel.shape == "value":
            atom.args, atom.whole = [atom.whole], None
            return
        if rel.shape == "tuple" and isinstance(atom.whole, ast.TupleLit):
            atom.args, atom.whole = list(atom.whole.items), None
            return
        sc = self.scope(lambda v: f"unbound variable '{v}' in rule head")
        t = rel.value_type or (self.ck.decls.ctors[rel.record][0]
                               if rel.record in self.ck.decls.ctors else None)
        if t is None:
            raise error(f"relation '{rel.name}' has no record type", atom.span)
        e = self.ck.check(atom.whole, sc, t, f"the record of '{rel.name}'")
        names = [str(k) for k in range(rel.arity)] if rel.shape == "tuple" else rel.column_names
        atom.args = [ast.FieldAccess(copy.deepcopy(e), name, e.span) for name in names]
        atom.whole = None

    def whole_body(self, item: ast.BodyAtom, rel: RelationInfo) -> None:
        """`R[p]` in a body: for a relation of tuples or other values, p is matched against
        the record as an atom's arguments are against its columns; for a relation of structs,
        p must be a variable: a new one is bound to the record (as `p in R()`), one bound
        before is a record R must hold."""
        atom = item.atom
        p, atom.whole = atom.whole, None
        if rel.shape == "value":
            atom.args = [p]
        elif rel.shape == "tuple" and isinstance(p, ast.TupleLit) and len(p.items) == rel.arity:
            atom.args = list(p.items)
        elif isinstance(p, ast.Var) and p.name in self.env:
            # a record bound before: R holds it (its columns joined with its fields)
            names = [str(k) for k in range(rel.arity)] if rel.shape == "tuple" \
                else rel.column_names
            atom.args = [ast.FieldAccess(ast.Var(p.name, p.span), n, p.span) for n in names]
        elif isinstance(p, ast.Var) and not item.negated:
            atom.names, item.record = [], p.name
        else:
            raise error(f"in a rule's body, `{rel.name}[x]` binds a new variable x to the whole "
                        "record (compare it in a condition)", p.span)

    def atom_patterns(self, item: ast.BodyAtom) -> list[ast.BodyItem]:
        """Arguments that are patterns (`Some{x}`, `Book{.author = a}`, `(_, 1)`) and `b@p`:
        the atom binds a variable there (b, or a fresh one), and the items returned match it
        against the pattern (ddlog/syntax/bindings.py), binding the pattern's new variables.
        Inside a pattern, a bound variable or another expression is compared."""
        atom = item.atom
        rel = self.relation(atom)
        if atom.whole is not None:
            self.whole_body(item, rel)
        if item.record is not None and not atom.args:
            atom.names = []  # `d in R()`: every column free
        self.positional(atom, rel, head=False)
        plain = {a.name for a in atom.args if isinstance(a, ast.Var)}
        bound = set(self.env) | plain  # compared inside a pattern, not bound again
        items: list[ast.BodyItem] = []
        for i, arg in enumerate(atom.args):
            if isinstance(arg, ast.AtBinding):
                var, shape = arg.var, arg.pattern
                if var in plain or var in self.env:
                    raise error(f"variable '{var}' is already bound", arg.span)
                bound.add(var)
            elif self.is_pattern(arg, bound):
                var, shape = self.ck.inliner.fresh("pat"), arg
            elif item.record is not None and not isinstance(arg, (ast.Var, ast.Wildcard)):
                # `d in R(.a = e)`: the record needs a variable for every column
                var = self.ck.inliner.fresh("col")
                atom.args[i] = ast.Var(var, arg.span)
                items.append(ast.BodyCond(ast.BinOp("==", ast.Var(var, arg.span), arg,
                                                    arg.span), arg.span))
                continue
            else:
                continue
            if item.negated:
                raise error(f"a pattern cannot be an argument of `not {rel.name}(..)`: bind "
                            "the column to a variable and test it in another term", arg.span)
            atom.args[i] = ast.Var(var, arg.span)
            items += matching_items(shape, ast.Var(var, arg.span), arg.span, bound,
                                    lambda: self.ck.inliner.fresh("b"))
        return items

    @staticmethod
    def is_pattern(arg: ast.Expr, bound: set[str]) -> bool:
        """A constructor or tuple with `_` or a new variable among its parts."""
        def open_part(e: ast.Expr) -> bool:
            if isinstance(e, (ast.Wildcard, ast.Var)):
                return not isinstance(e, ast.Var) or e.name not in bound
            return RuleChecker.is_pattern(e, bound)
        parts = [e for _, e in arg.fields] if isinstance(arg, ast.StructLit) else \
            arg.items if isinstance(arg, ast.TupleLit) else []
        return any(open_part(p) for p in parts)

    def _BodyAtom(self, item: ast.BodyAtom) -> None:
        atom = item.atom
        rel = self.relation(atom)
        if item.record is not None:
            for i, a in enumerate(atom.args):
                if isinstance(a, ast.Wildcard):  # the record needs every column's value
                    atom.args[i] = ast.Var(self.ck.inliner.fresh("col"), a.span)
        # Expressions in an atom see only the variables bound before it (the compiler evaluates
        # them on the left side of the join); a fresh variable binds at the end of the atom.
        before = dict(self.env)
        if item.negated:
            sc = self.scope(lambda v: f"variable '{v}' in 'not {rel.name}(..)' must be bound "
                                      "by an earlier term", before)
        else:
            sc = self.scope(None, before)
        fresh: dict[str, Type] = {}
        for i, (arg, (col, t)) in enumerate(zip(atom.args, rel.columns)):
            what = f"column '{col}' of '{rel.name}'"
            if isinstance(arg, ast.Wildcard):
                arg.ty = t
            elif isinstance(arg, ast.Var) and arg.name not in before and not item.negated:
                # A fresh variable binds the column; a repeat in the same atom is an equality.
                if fresh.setdefault(arg.name, t) != t:
                    raise mismatch(t, fresh[arg.name], arg.span, what)
                arg.ty = t
            else:
                atom.args[i] = self.ck.check(arg, sc, t, what)
        self.env.update(fresh)
        self.dropped -= set(fresh)

    def _BodyCond(self, item: ast.BodyCond) -> None:
        item.expr = self.ck.check(item.expr, self.scope(), BOOL, "a condition must be bool")

    def _BodyInspect(self, item: ast.BodyInspect) -> None:
        """`Inspect f(args)`: f one of the functions run for their effect (EFFECTS); its
        arguments see the variables bound so far (but groups and closures, which no
        relation holds) and `ddlog_timestamp`, `ddlog_weight`. Binds nothing."""
        call = item.expr
        known = ", ".join(f"{name}({', '.join(str(t) for t in params)})"
                          for name, params in EFFECTS.items())
        if not isinstance(call, ast.Call) or call.method or call.func not in EFFECTS:
            raise error(f"Inspect calls a function for its effect on each change, one of: "
                        f"{known} (import DDlog's inspect_log module for `log`)", item.span)
        params = EFFECTS[call.func]
        if len(call.args) != len(params):
            raise error(f"'{call.func}' takes {len(params)} arguments, found {len(call.args)}",
                        call.span)
        item.vars = [(v, t) for v, t in self.env.items() if not isinstance(t, (TGroup, TFunc))]
        for name in INSPECT_VARS:
            if name in self.env:
                raise error(f"'{name}' is the Inspect's own variable: rename the rule's "
                            f"'{name}'", item.span)
        sc = self.scope(env={**dict(item.vars), **INSPECT_VARS})
        call.args = [self.ck.check(a, sc, t, f"argument {i + 1} of '{call.func}'")
                     for i, (a, t) in enumerate(zip(call.args, params))]

    def bind(self, var: str, span) -> None:
        if var in self.env:
            raise error(f"variable '{var}' is already bound", span)

    def _BodyAssign(self, item: ast.BodyAssign) -> None:
        self.bind(item.var, item.span)
        sc = self.scope()
        if item.annotation is not None:
            item.expr = self.ck.check(item.expr, sc, self.ck.resolve(item.annotation),
                                      f"variable '{item.var}'")
        else:
            self.note_flexible(item.var, item.expr, sc)
            item.expr = self.ck.infer(item.expr, sc, self.hints.get(item.var))
        self.env[item.var] = item.expr.ty
        self.dropped.discard(item.var)

    def note_flexible(self, var: str, e: ast.Expr, sc: Scope) -> None:
        if var not in self.hints and flexible(e, sc.flex):
            self.flex.add(var)

    def _BodyFlatMap(self, item: ast.BodyFlatMap) -> None:
        self.bind(item.var, item.span)
        span = item.expr.span
        sc = self.scope()
        self.note_flexible(item.var, item.expr, sc)
        hint = self.hints.get(item.var)
        item.expr = self.ck.infer(item.expr, sc, TVec(hint) if hint is not None else None)
        t = item.expr.ty
        if not isinstance(t, (TVec, TSet, TMap)):  # a Map gives its (key, value) entries
            raise error(f"FlatMap expects a Vec, Set or Map, found {t}", span)
        self.env[item.var] = t.elem
        self.dropped.discard(item.var)

    def _BodyGroupBy(self, item: ast.BodyGroupBy) -> None:
        self.bind(item.var, item.span)
        item.expr = self.ck.infer(item.expr, self.scope())
        keys: dict[str, Type] = {}
        for k in item.keys:
            if k.name not in self.env:
                raise error(f"group_by key '{k.name}' must be a variable bound by an earlier "
                            "term", k.span)
            if k.name in keys:
                raise error(f"group_by key '{k.name}' is given twice", k.span)
            keys[k.name] = k.ty = self.env[k.name]
        key_t = next(iter(keys.values())) if len(keys) == 1 else TTuple(tuple(keys.values()))
        self.dropped |= set(self.env) - set(keys)
        self.env.clear()
        self.env.update(keys)
        self.env[item.var] = TGroup(key_t, item.expr.ty)
        if item.annotation is not None and self.ck.resolve(item.annotation) != self.env[item.var]:
            raise mismatch(self.ck.resolve(item.annotation), self.env[item.var],
                           item.annotation.span, f"variable '{item.var}'")
