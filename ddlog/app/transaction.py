"""One open transaction: the updates a commit will apply, per relation and in order."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ddlog.types import Update

if TYPE_CHECKING:
    from ddlog.app.database import Database


class _Clear:
    """`clear R;`: every row committed so far goes; updates after it still apply."""


CLEAR = _Clear()


class Transaction:
    """The updates of one open transaction, per relation and in order. Updates of single rows
    are folded as they come (the last update of a row decides, as the engine's set semantics
    would; for a multiset or a stream, `counted`, they add up), so a long stream of inserts
    becomes two DataFrames, not one per row."""

    def __init__(self) -> None:
        self.steps: dict[str, list[Any]] = {}

    def __bool__(self) -> bool:
        return bool(self.steps)

    def insert(self, relation: str, row: tuple, counted: bool = False) -> None:
        self._update(relation, row, 1, counted)

    def delete(self, relation: str, row: tuple, counted: bool = False) -> None:
        self._update(relation, row, -1, counted)

    def _update(self, relation: str, row: tuple, sign: int, counted: bool) -> None:
        rows = self._rows(relation)
        rows[row] = rows.get(row, 0) + sign if counted else sign

    def clear(self, relation: str) -> None:
        self.steps[relation] = [CLEAR]  # what came before in this transaction is moot

    def add_frame(self, relation: str, sign: int, df) -> None:
        """Rows given as a DataFrame with columns c0..cN (a source, a diff), or as an
        update (Database.ingest) whose sign this gives."""
        up = df._replace(sign=sign) if isinstance(df, Update) else Update(sign, df)
        self.steps.setdefault(relation, []).append(up)

    def _rows(self, relation: str) -> dict[tuple, int]:
        steps = self.steps.setdefault(relation, [])
        if not steps or not isinstance(steps[-1], dict):
            steps.append({})
        return steps[-1]

    def updates(self, db: "Database") -> dict[str, list[Update]]:
        """The engine's form: relation -> [Update(+1 | -1, DataFrame c0..cN), ...] in order."""
        out: dict[str, list[Update]] = {}
        for rel, steps in self.steps.items():
            info = db.relations[rel]
            ups: list[Update] = []
            for step in steps:
                if step is CLEAR:
                    # a stream starts each transaction empty: clearing drops this
                    # transaction's updates before the clear, which `clear` already did
                    if info.kind != "stream":
                        ups.append(Update(-1, db.value_frame(rel)))
                elif isinstance(step, dict):
                    for sign in (1, -1):  # a counted row once per unit of its weight
                        rows = [r for r, w in step.items() for _ in range(max(0, w * sign))]
                        if rows:
                            ups.append(db.rows_update(info, sign, rows))
                else:
                    ups.append(step)
            if ups:
                out[rel] = ups
        return out
