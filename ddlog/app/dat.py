"""A DDlog command file (`.dat`) bound as a source (`ddlog run --input FILE.dat`): the input
relations it leaves after replaying it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ddlog.errors import DDlogError
from ddlog.syntax import commands as C
from ddlog.syntax.source import read_text

if TYPE_CHECKING:
    from ddlog.app.database import Database


def read_dat(db: Database, path: str) -> dict[str, set[tuple]]:
    """The input relations a DDlog command file leaves after replaying it: updates in order,
    transactions honoured (`rollback;` drops the open one), updates outside a transaction
    applied directly (a plain file of facts), `clear R;` empties R."""
    text = read_text(path)
    committed: dict[str, set[tuple]] = {}
    pending: dict[str, set[tuple]] | None = None
    for cmd in C.parse_commands(text, path):
        target = committed if pending is None else pending
        if isinstance(cmd, C.Start):
            if pending is not None:
                raise DDlogError("start: a transaction is already in progress", cmd.span, text)
            pending = {k: set(v) for k, v in committed.items()}
        elif isinstance(cmd, C.Commit):
            if pending is not None:
                committed, pending = pending, None
        elif isinstance(cmd, C.Rollback):
            pending = None
        elif isinstance(cmd, C.Update):
            row = db.row(cmd.atom, cmd.kind, path, text)
            rows = target.setdefault(cmd.atom.relation, set())
            if cmd.kind == "delete":
                rows.discard(row)
            else:
                db.keys.replay_insert(rows, row, cmd, path, text)
        elif isinstance(cmd, (C.Modify, C.DeleteKey)):
            db.keys.replay_by_key(target.setdefault(cmd.relation, set()), cmd, path, text)
        elif isinstance(cmd, C.Clear):
            db.input_relation(cmd.relation, cmd.span, text, "clear")
            target[cmd.relation] = set()
        elif isinstance(cmd, C.Exit):
            break
    if pending is not None:
        committed = pending  # a file that forgot its final `commit;`
    return committed
