"""The reference evaluator: naive fixpoint over Python sets, stratum by stratum.

A rule body is evaluated left to right over a *set of valuations*, as the DDlog chapter of
the DBSP paper defines it: each valuation binds the variables seen so far. Valuations are
frozensets of (variable, value) pairs so that a body's valuations form a real set: two rows that
bind the same variables to the same values are one valuation, which is what makes `group_by`
count "one element per distinct valuation".
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Iterator

from ddlog.syntax import ast
from ddlog.check.program import CheckedProgram
from ddlog.errors import EvaluationError
from ddlog.limits import recursion_room
from ddlog.values import Group, sort_key

from tests.oracle import expr as E

Valuation = frozenset  # of (name, value) pairs
Relations = dict[str, "set[tuple] | Counter"]  # a Counter for a multiset or a stream

MAX_ITERATIONS = 10_000


# ---------------------------------------------------------------------------------------------
# Atoms


def match_arg(arg: ast.Expr, value: Any, env: dict) -> dict | None:
    """Match one atom argument against a column value: a fresh variable binds, `_` matches
    anything, anything else (bound variable, constant, expression over bound variables) must
    equal the value. (The type checker rejects patterns such as `R(Some{x})` in atoms.)"""
    if isinstance(arg, ast.Wildcard):
        return env
    if isinstance(arg, ast.Var) and arg.name not in env:
        return {**env, arg.name: value}
    return env if E.evaluate(arg, env) == value else None


def match_atom(atom: ast.Atom, row: tuple, env: dict) -> dict | None:
    """Match all arguments of `atom` against `row`, left to right (so a variable repeated in
    the atom binds at its first occurrence and must be equal at the others)."""
    if len(row) != len(atom.args):
        raise EvaluationError(f"{atom.relation} has {len(atom.args)} arguments but the row "
                              f"has {len(row)} columns", atom.span)
    for arg, value in zip(atom.args, row):
        env = match_arg(arg, value, env)
        if env is None:
            return None
    return env


class _Candidates:
    """Only a speed-up: the rows of a relation that can match an atom under a valuation.

    Rows are indexed by the columns whose argument is a plain variable; for a valuation, the
    candidates are the rows whose indexed columns equal the bound values of those variables.
    Any row that matches the atom is among them, and `match_atom` still checks every argument,
    so the result is the same as trying all rows."""

    def __init__(self, atom: ast.Atom, rows: set[tuple]):
        self.rows = rows
        self.atom = atom
        self.index: dict[tuple, dict[tuple, list[tuple]]] = {}  # by column positions

    def of(self, env: dict) -> Iterable[tuple]:
        cols = tuple(i for i, a in enumerate(self.atom.args)
                     if isinstance(a, ast.Var) and a.name in env)
        if not cols:
            return self.rows
        if cols not in self.index:
            by_key: dict[tuple, list[tuple]] = {}
            for row in self.rows:
                by_key.setdefault(tuple(row[i] for i in cols), []).append(row)
            self.index[cols] = by_key
        key = tuple(env[self.atom.args[i].name] for i in cols)
        return self.index[cols].get(key, ())


# ---------------------------------------------------------------------------------------------
# Rule bodies


def _valuation(env: dict) -> Valuation:
    return frozenset(env.items())


def eval_body(body: list[ast.BodyItem], db: Relations) -> Counter:
    """The valuations of a rule body over the relation values `db`, each with its
    multiplicity (1 over sets; over a multiset or a stream the product of the matched
    records' multiplicities, summed over the ways to reach the valuation)."""
    current: Counter = Counter({frozenset(): 1})
    counted = False  # whether a multiset, a stream or a counted relation was read: a group
    # then weighs its elements
    for item in body:
        if isinstance(item, ast.BodyAtom) and not item.negated:
            counted = counted or isinstance(db[item.atom.relation], Counter)
        nxt: Counter = Counter()
        for val, w in _step(item, current, db, counted):
            nxt[val] += w
        current = Counter({v: w for v, w in nxt.items() if w != 0})
    return current


def _weights(rows: "set[tuple] | Counter") -> Counter:
    return rows if isinstance(rows, Counter) else Counter(dict.fromkeys(rows, 1))


def _step(item: ast.BodyItem, current: Counter, db: Relations,
          counted: bool = False) -> Iterator[tuple]:
    if isinstance(item, ast.BodyAtom):
        rows = _weights(db[item.atom.relation])
        candidates = _Candidates(item.atom, set(rows))
        for val, w in current.items():
            env = dict(val)
            found = [(m, rows[row]) for row in candidates.of(env)
                     if (m := match_atom(item.atom, row, env)) is not None]
            if item.negated:
                # Antijoin: keep the valuation when no record (of positive multiplicity)
                # matches it.
                if all(n <= 0 for _, n in found):
                    yield val, w
            else:
                for m, n in found:
                    yield _valuation(m), w * n
    elif isinstance(item, ast.BodyCond):
        for val, w in current.items():
            if E.evaluate(item.expr, dict(val)):
                yield val, w
    elif isinstance(item, ast.BodyAssign):
        for val, w in current.items():
            env = dict(val)
            _check_fresh(item.var, env, item.span)
            yield _valuation({**env, item.var: E.evaluate(item.expr, env)}), w
    elif isinstance(item, ast.BodyFlatMap):
        for val, w in current.items():
            env = dict(val)
            _check_fresh(item.var, env, item.span)
            for x in E.evaluate(item.expr, env):  # equal elements add their multiplicities
                yield _valuation({**env, item.var: x}), w
    elif isinstance(item, ast.BodyGroupBy):
        yield from _group_by(item, current, counted)
    else:
        raise EvaluationError(f"unknown body item {type(item).__name__}")


def _group_by(item: ast.BodyGroupBy, current: Counter, counted: bool) -> Iterator[tuple]:
    """Group the distinct valuations (of positive multiplicity) by key; a group holds the
    value of the projected expression once per valuation (so equal values from different
    valuations all count) with the valuation's multiplicity beside it when `counted` (the
    rule reads a multiset, a stream or a counted relation). Afterwards only the keys and the
    group variable are bound."""
    names = [k.name for k in item.keys]
    groups: dict[tuple, list] = {}
    for val, w in current.items():
        if w <= 0:
            continue
        env = dict(val)
        key_values = tuple(env[n] for n in names)
        groups.setdefault(key_values, []).append((E.evaluate(item.expr, env), w))
    for key_values, elems in groups.items():
        key = key_values[0] if len(names) == 1 else key_values
        elems.sort(key=lambda p: (sort_key(p[0]), p[1]))
        weights = tuple(w for _, w in elems) if counted else None
        group = Group(key, tuple(x for x, _ in elems), weights)
        yield _valuation({**dict(zip(names, key_values)), item.var: group}), 1


def _check_fresh(var: str, env: dict, span) -> None:
    if var in env:
        raise EvaluationError(f"variable {var} is already bound", span)


def eval_rule(rule: ast.Rule, db: Relations) -> Counter:
    """The rows a rule derives from the relation values `db` (facts: one row), each with
    its multiplicity."""
    out: Counter = Counter()
    for val, w in eval_body(rule.body, db).items():
        out[tuple(E.evaluate(a, dict(val)) for a in rule.head.args)] += w
    return out


def _derive(rules: list[ast.Rule], rel: str, db: Relations) -> Counter:
    """The sum of what the rules of `rel` derive, zeros dropped."""
    out: Counter = Counter()
    for r in rules:
        if r.head.relation == rel:
            out.update(eval_rule(r, db))
    return Counter({row: w for row, w in out.items() if w != 0})


# ---------------------------------------------------------------------------------------------
# Programs


@recursion_room()
def evaluate(program: CheckedProgram, inputs: dict[str, Iterable[tuple]],
             max_iterations: int = MAX_ITERATIONS, previous: Relations | None = None
             ) -> Relations:
    """The value of every relation of `program` (inputs included) on the given input values:
    a set of rows per relation, a Counter (row -> multiplicity) for a multiset or a stream.
    A multiset input is given as a Counter or as rows (each occurrence counts once); a
    stream input as what the current transaction inserted. `previous` is the result of the
    previous transaction, which the delayed relations (`R-1`) read.

    Strata are evaluated in order; within a stratum, all its rules are applied to the current
    values, which their results replace, until nothing changes (naive fixpoint from nothing,
    as DDlog iterates a recursive fragment). Negated relations always come from lower strata,
    so they are final when read; a group may read a relation of its own stratum."""
    from ddlog.plan.strata import stratify  # looked up per call: a test substitutes a wrong order

    rels = program.relations
    strata = stratify(program)
    bags = _counted(program, strata)
    db: Relations = {name: Counter() if info.weighted or name in bags else set()
                     for name, info in rels.items()}
    for name, info in rels.items():
        if info.delay_of is not None and previous is not None:
            db[name] = previous[info.delay_of]
    for name, rows in inputs.items():
        if name not in rels or rels[name].role != "input":
            raise EvaluationError(f"{name} is not an input relation")
        if rels[name].weighted:
            counted = rows if isinstance(rows, Counter) else Counter(tuple(r) for r in rows)
            db[name] = Counter({tuple(r): w for r, w in counted.items() if w != 0})
        else:
            db[name] = {tuple(r) for r in rows}
        bad = [r for r in db[name] if len(r) != rels[name].arity]
        if bad:
            raise EvaluationError(f"{name} has {program.relations[name].arity} columns, "
                                  f"but the row {bad[0]!r} has {len(bad[0])}")

    for stratum in strata:
        members = set(stratum.relations)
        rules = [r for r in program.rules if r.head.relation in members]
        for iteration in range(max_iterations + 1):
            if iteration == max_iterations:
                raise EvaluationError(
                    f"stratum {stratum.index} ({', '.join(sorted(members))}) did not converge "
                    f"in {max_iterations} iterations")
            changed = False
            heads = sorted({r.head.relation for r in rules})
            derived = [(rel, _derive(rules, rel, db)) for rel in heads]
            for rel, counted in derived:
                if isinstance(db[rel], Counter):  # never recursive: one pass computes it
                    db[rel] = counted
                    continue
                # the value of the next iteration is what the rules derive from this one's
                # (a group over a relation of the recursion can replace a record it derived)
                rows = {row for row, w in counted.items() if w > 0}
                if rows != db[rel]:
                    db[rel] = rows
                    changed = True
            if not changed:
                break

    _check_supported(program, db)
    for name in bags:  # its value is the set of its records
        db[name] = {row for row, w in db[name].items() if w > 0}
    return db


def _counted(program: CheckedProgram, strata) -> set[str]:
    """The relations kept with their number of derivations while evaluating: as DDlog, every
    internal relation that is not recursive (nor read through a delay: `R-1` holds R's
    value as a set here)."""
    recursive = {r for s in strata if s.recursive for r in s.relations}
    delayed = {info.delay_of for info in program.relations.values() if info.delay_of}
    return {name for name, info in program.relations.items()
            if info.role == "internal" and info.kind == "relation" and name not in recursive
            and name not in delayed and info.delay_of is None}


def _check_supported(program: CheckedProgram, db: Relations) -> None:
    """Self-check: the result of a stratified program is a supported fixpoint: applying every
    rule once to it derives exactly the derived relations. This catches a wrong stratum order
    (a relation negated before it was complete) independently of the stratifier."""
    heads = {r.head.relation for r in program.rules}
    for name in heads:
        counted = _derive(program.rules, name, db)
        if isinstance(db[name], Counter):
            derived = counted
        else:
            derived = {row for row, w in counted.items() if w > 0}
        if derived != db[name]:
            raise AssertionError(f"oracle self-check failed for {name}: "
                                 f"{len(set(derived) ^ set(db[name]))} rows differ")
