"""SOURCE and SINK specifications: `table:NAME`, `parquet:PATH`, `csv:PATH`, `json:PATH`, a
`.dat` file; and `R=SPEC` bindings. Paths are made absolute when bound, so a state can be
refreshed from any directory."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ddlog.errors import DDlogError

SOURCE_KINDS = ("table", "parquet", "csv", "json", "dat")
SINK_KINDS = ("table", "parquet", "csv", "json")


class BindingError(DDlogError):
    """A SOURCE/SINK that cannot be used (bad spec, unreadable data, wrong types)."""


@dataclass(frozen=True)
class Spec:
    kind: str  # one of SOURCE_KINDS / SINK_KINDS
    target: str  # a table name, or an absolute path

    def __str__(self) -> str:
        return f"{self.kind}:{self.target}"

    def file_bytes(self) -> int | None:
        """The bytes of the files this source reads now (a file, or every file under a
        directory; 0 if there is nothing yet), or None for a table (its size is the
        catalog's to know)."""
        if self.kind == "table":
            return None
        if not os.path.isdir(self.target):
            return _size(self.target)
        return sum(_size(os.path.join(d, f)) for d, _, files in os.walk(self.target)
                   for f in files)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # not there (yet, or any more): it holds nothing to read
        return 0


def literal(path: str) -> str:
    """`path` as Spark reads exactly that file or directory: Spark (Hadoop) takes a path as a
    glob pattern, so a name holding `*?[]{}` or `\\` would match other files, or none."""
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", path)


def parse_spec(text: str, sink: bool = False) -> Spec:
    kinds = SINK_KINDS if sink else SOURCE_KINDS
    what = "SINK" if sink else "SOURCE"
    kind, sep, target = text.partition(":")
    if sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]+", kind) and kind not in kinds \
            and kind.lower() not in ("file", "hdfs", "s3a", "s3", "gs", "abfs", "abfss"):
        raise BindingError(f"bad {what} '{text}': no format '{kind}' (formats: "
                           f"{', '.join(k for k in kinds if k != 'dat')}"
                           f"{'' if sink else ', or a .dat file'})")
    if not sep or kind not in kinds:
        ext = os.path.splitext(text)[1].lstrip(".").lower()
        if ext in kinds and ext != "table":
            kind, target = ext, text
        else:
            raise BindingError(f"bad {what} '{text}': expected one of "
                               f"{', '.join(k + ':' + ('NAME' if k == 'table' else 'PATH') for k in kinds)}"
                               f"{'' if sink else ', or a .dat file'}")
    if not target:
        raise BindingError(f"bad {what} '{text}': nothing after '{kind}:'")
    if kind != "table":
        target = os.path.abspath(target)
    return Spec(kind, target)


def parse_binding(text: str, sink: bool = False) -> tuple[str | None, Spec]:
    """`R=SPEC` -> (R, spec). A bare `FILE.dat` source binds every input relation that no other
    binding names (relation None)."""
    name, sep, rest = text.partition("=")
    if sep and name and name[0].isalpha() and name.replace("_", "a").isalnum():
        return name, parse_spec(rest, sink)
    if sink or not text.lower().endswith(".dat"):
        flag, what = ("--output", "SINK") if sink else ("--input", "SOURCE")
        raise BindingError(f"bad {flag} '{text}': expected RELATION={what}"
                           f"{'' if sink else ' or a FILE.dat'}")
    return None, parse_spec(text, sink)


