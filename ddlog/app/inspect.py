"""Running a program's `Inspect`s after each commit (ddlog/check/program.Inspection): the
changes of each Inspect's relation in the epoch just committed, with the epoch as
`ddlog_timestamp` and each change's weight as `ddlog_weight`, go through the call's
arguments compiled to Spark Columns; the argument values come to the driver, which calls
the function on each, in the order of the values (DDlog's order is its dataflow's).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from ddlog.builtins.inspect import TIMESTAMP, WEIGHT
from ddlog.errors import EvaluationError
from ddlog.plan.exprs import lower, var_col

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ddlog.app.database import Database


def _log(file: str, message: str) -> None:
    """inspect_log::log: `message` as a line at the end of `file` (relative to the working
    directory, as DDlog's runs it)."""
    with open(file, "a", encoding="utf-8") as f:
        f.write(message + "\n")


EFFECTS: dict[str, Callable[..., None]] = {"inspect_log::log": _log}


def run_inspections(db: "Database", changes: dict[str, "DataFrame"], epoch: int) -> None:
    """Call each Inspect's function for every change of its relation in `changes` (those of
    the epoch `epoch`, just committed)."""
    from pyspark.sql import functions as F

    from ddlog.runtime.expr import compile_expr
    from ddlog.runtime.schema import WEIGHT as CHANGE_WEIGHT, col_name

    for inspection in db.program.inspections:
        change = changes.get(inspection.relation)
        if change is None:
            continue
        info = db.relations[inspection.relation]
        frame = change.select(*[F.col(col_name(k)).alias(var_col(name))
                                for k, (name, _) in enumerate(info.columns)],
                              F.lit(epoch).alias(var_col(TIMESTAMP)),
                              F.col(CHANGE_WEIGHT).cast("long").alias(var_col(WEIGHT)))
        args = [compile_expr(lower(a)).alias(f"a{k}")
                for k, a in enumerate(inspection.call.args)]
        calls = sorted(tuple(r) for r in frame.select(*args).collect())
        effect = EFFECTS[inspection.call.func]
        for values in calls:
            try:
                effect(*values)
            except OSError as err:
                raise EvaluationError(
                    f"epoch {epoch} was committed, but its Inspect could not "
                    f"{inspection.call.func} ({err.strerror or err}: "
                    f"{os.fsdecode(err.filename or '')})", inspection.span) from None
