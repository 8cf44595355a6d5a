"""Writing an output relation to its sink after each commit: the sink is rewritten whole, so it
must never be a directory of someone else's files."""
from __future__ import annotations

import itertools
import os
import re

from ddlog.types import RelationInfo, is_u64, is_wide, unoptioned
from ddlog.runtime.errors import describe
from ddlog.runtime.io.sources import check_csv_columns
from ddlog.runtime.io.specs import BindingError, Spec

_SPARK_OUTPUT = re.compile(r"\.?(part-.*|_SUCCESS.*|_committed_.*|_started_.*)")


def check_sink_path(spec: Spec, owned: re.Pattern = _SPARK_OUTPUT,
                    what: str = "a sink") -> None:
    """A path sink is rewritten whole after each commit (Spark deletes what is there): so it
    must be new, or a directory that holds only what an earlier write of a sink left (part
    files, _SUCCESS, their checksums; or, for a change feed, only what `owned` names: its
    epoch directories). Anything else there is the user's, and is kept."""
    if spec.kind == "table" or not os.path.exists(spec.target):
        return
    if not os.path.isdir(spec.target):
        raise BindingError(f"{spec}: the path is a file; {what} is a directory that ddlog "
                           f"rewrites after every commit, so give a new path")
    foreign = sorted(e for e in os.listdir(spec.target) if not owned.fullmatch(e))
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise BindingError(f"{spec}: the directory holds files that are not {what}'s output "
                           f"({shown}); {what} is rewritten after every commit, so give a new "
                           f"path")


# what marks a ddlog state directory (runtime/state/layout.MARK, or a manifest beside its
# program): the io layer sits below the state's and names them here
_STATE_FILES = ((".ddlog-state",), ("manifest.json", "program.dl"))


def check_apart(written: list[tuple[str, Spec]], state: str | None,
                read: list[tuple[str, Spec]] = ()) -> None:
    """Paths a command rewrites (`written`: sinks, change feeds, a checkpoint directory,
    each with what it is for the message) must not be inside a ddlog state directory (its
    files would be overwritten), hold `state` (the command's own), nor overlap each other or
    a path the command reads (`read`: a stream's watched directories): one rewrite would
    delete another's files. Symbolic links are followed."""
    def real(spec: Spec) -> str:
        return os.path.realpath(spec.target)

    home = os.path.realpath(state) if state else None
    paths = [(what, spec, real(spec)) for what, spec in written if spec.kind != "table"]
    for what, spec, path in paths:
        inside = _state_above(path)
        if inside is not None:
            raise BindingError(f"{what} ({spec.target}): the path is inside the ddlog state directory "
                               f"{inside}, whose files it would overwrite; give a path outside")
        if home is not None and _within(path, home):
            raise BindingError(f"{what} ({spec.target}): the state directory {home} is inside it, and "
                               f"rewriting it would delete the state; give another path")
    others = paths + [(what, spec, real(spec)) for what, spec in read if spec.kind != "table"]
    for k, (what, spec, path) in enumerate(paths):
        for what2, spec2, path2 in others[k + 1:]:
            if _within(path, path2) or _within(path2, path):
                raise BindingError(f"{what} ({spec.target}) and {what2} ({spec2.target}) overlap: rewriting one "
                                   f"would delete the other's files; give separate paths")


def _within(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def _state_above(path: str) -> str | None:
    """The ddlog state directory `path` is in (or is), if any."""
    here = path
    while True:
        if any(all(os.path.isfile(os.path.join(here, f)) for f in files)
               for files in _STATE_FILES):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def write_sink(spec: Spec, df, info: RelationInfo) -> None:
    """Replace the sink's contents with `df` (the relation's value, declared column names)."""
    from pyspark.errors import PySparkException

    check_sink_path(spec)
    if spec.kind in ("csv", "json"):  # text: numbers, not their stored form
        df = _text_numbers(df, info)
    try:
        w = df.write.mode("overwrite")
        if spec.kind == "table":
            w.saveAsTable(spec.target)
        elif spec.kind == "parquet":
            w.parquet(spec.target)
        elif spec.kind == "csv":
            check_csv_columns(info, spec)
            w.option("header", True).csv(spec.target)
        elif spec.kind == "json":
            w.json(spec.target)
        else:
            raise BindingError(f"{spec}: not a sink")
    except PySparkException as err:
        raise BindingError(f"cannot write {spec}: {describe(err)}") from None


def _text_numbers(df, info: RelationInfo):
    """bit<64> columns as their unsigned values (decimals); wider integers, which no Spark
    number holds, as their decimal digits (strings)."""
    from ddlog.runtime.expr import to_string, unsigned_value

    def written(n: str, t):
        if is_u64(unoptioned(t)):
            return unsigned_value(df[n]).alias(n)
        if is_wide(unoptioned(t)):
            return to_string(df[n], unoptioned(t)).alias(n)
        return None
    columns = [written(n, t) for n, t in zip(df.columns, info.column_types)]
    if all(c is None for c in columns):
        return df
    # (a changes frame has a weight after the relation's columns)
    return df.select(*[c if c is not None else df[n]
                       for n, c in itertools.zip_longest(df.columns, columns)])
