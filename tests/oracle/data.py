"""Input data for the oracle: DDlog command files (`.dat`) and plain update lists.

`load_dat` replays a command file the way DDlog's CLI does: updates are applied in order inside
`start; ... commit;` transactions (so inserting and then deleting a row inside one transaction
leaves it absent), `rollback;` drops the open transaction, `clear R;` empties a relation, and
`exit;` stops reading. Input relations are sets: inserting a present row or deleting an absent
one changes nothing; a multiset counts its records (a Counter), and a stream holds only what the
last transaction inserted.
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Iterable

from ddlog.syntax import ast
from ddlog.check.program import CheckedProgram
from ddlog.errors import EvaluationError

Relations = dict[str, set[tuple]]
Update = tuple[str, str, tuple]  # (kind 'insert' | 'delete', relation, row)


def apply_updates(inputs: Relations, updates: Iterable[Update]) -> Relations:
    """A new relation map: `inputs` with the updates applied in order (set semantics; a
    relation held as a Counter is a multiset: an insert adds 1, a delete takes 1 away)."""
    out = {name: rows.copy() for name, rows in inputs.items()}
    for kind, relation, row in updates:
        rows = out.setdefault(relation, set())
        if isinstance(rows, Counter):
            rows[tuple(row)] += 1 if kind == "insert" else -1
            if not rows[tuple(row)]:
                del rows[tuple(row)]
        elif kind == "insert":
            rows.add(tuple(row))
        elif kind == "delete":
            rows.discard(tuple(row))
        else:
            raise ValueError(f"unknown update kind {kind!r}")
    return out


def row_of(atom: ast.Atom, program: CheckedProgram, file: str, source: str) -> tuple:
    """The row an update's atom denotes (ddlog.values.literals converts the constants to values of
    the column types; named arguments are put in column order). Only input relations take
    updates."""
    from ddlog.values.literals import row_of as literal_row

    info = program.relations.get(atom.relation)
    if info is None:
        raise EvaluationError(f"unknown relation {atom.relation}", atom.span, source)
    if info.role != "input":
        raise EvaluationError(f"{atom.relation} is not an input relation", atom.span, source)
    return literal_row(atom, info, file, source)


def _read(path_or_text: str) -> tuple[str, str]:
    if "\n" not in path_or_text and os.path.isfile(path_or_text):
        with open(path_or_text, encoding="utf-8") as f:
            return f.read(), path_or_text
    return path_or_text, "<commands>"


def load_dat(path_or_text: str, program: CheckedProgram,
             inputs: Relations | None = None) -> Relations:
    """The committed input relations after replaying a command file (starting from `inputs`,
    or from empty relations and the facts of input relations, which DDlog inserts when the
    program starts). An update outside a transaction is an error, as in DDlog."""
    from ddlog.syntax import commands as C

    text, file = _read(path_or_text)
    committed: Relations = {r.name: Counter() if r.weighted else set() for r in program.inputs()}
    start = inputs if inputs is not None else program.input_facts
    for name, rows in start.items():
        if isinstance(rows, Counter):  # a multiset's records with their multiplicities
            committed[name] = rows.copy()
        else:
            committed = apply_updates(committed, [("insert", name, r) for r in rows])
    pending: Relations | None = None  # the open transaction's view of the inputs

    for cmd in C.parse_commands(text, file):
        if isinstance(cmd, C.Start):
            if pending is not None:
                raise EvaluationError("start: a transaction is already open",
                                      getattr(cmd, "span", None), text)
            pending = {name: Counter() if program.relations[name].kind == "stream"
                       else rows.copy() for name, rows in committed.items()}
        elif isinstance(cmd, C.Commit):
            if pending is None:
                raise EvaluationError("commit: no transaction is open",
                                      getattr(cmd, "span", None), text)
            committed, pending = pending, None
        elif isinstance(cmd, C.Rollback):
            pending = None
        elif isinstance(cmd, C.Update):
            if pending is None:
                raise EvaluationError(f"{cmd.kind}: no transaction is open",
                                      getattr(cmd, "span", None), text)
            row = row_of(cmd.atom, program, file, text)
            pending = apply_updates(pending, [(cmd.kind, cmd.atom.relation, row)])
        elif isinstance(cmd, C.Clear):
            target = pending if pending is not None else committed
            target[cmd.relation] = type(target[cmd.relation])()
        elif isinstance(cmd, C.Exit):
            break
        # Dump and Echo only print; they do not change the inputs.
    return committed
