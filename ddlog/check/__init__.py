"""AST -> typed, checked program: names resolved, types inferred and checked, patterns checked
for exhaustiveness, user functions inlined (ddlog/check/program.py says what comes out).

    check_text(text, file)  parse and check program text
    check_file(path)        the same for a file
"""
from __future__ import annotations

import os

from ddlog.builtins.prelude import LIBRARY_ROOT
from ddlog.check.program import CheckedProgram
from ddlog.check.rules import check_program
from ddlog.limits import collector_paused
from ddlog.syntax.d3log import reflect_locations
from ddlog.syntax.modules import resolve_imports
from ddlog.syntax.parser import parse_program
from ddlog.syntax.transformers import expand_transformers
from ddlog.syntax.source import read_text

__all__ = ["CheckedProgram", "check_file", "check_program", "check_text", "read_program"]


def read_program(path_or_text: str, file: str | None = None) -> tuple[str, str]:
    """(text, file name). An existing path, or anything ending in `.dl`, is read as a file (so a
    missing `.dl` file raises FileNotFoundError instead of being parsed as program text)."""
    looks_like_path = "\n" not in path_or_text and (
        path_or_text.endswith(".dl") or os.path.isfile(path_or_text))
    if looks_like_path:
        return read_text(path_or_text), file or path_or_text
    return path_or_text, file or "<input>"


def check_text(text: str, file: str = "<input>",
               libraries: tuple[str, ...] = ()) -> CheckedProgram:
    """Parse and check a program (and the user modules it imports, read from `file`'s
    directory, then the `libraries` directories, then the libraries that come with ddlog);
    raises a DDlogError subclass on any program error."""
    with collector_paused():
        prog = resolve_imports(parse_program(text, file), parse_program, read_text,
                               (*libraries, LIBRARY_ROOT))
        return check_program(reflect_locations(expand_transformers(prog, parse_program)))


def check_file(path: str, libraries: tuple[str, ...] = ()) -> CheckedProgram:
    """Like check_text, for the file at `path` (OSError when it cannot be read)."""
    return check_text(read_text(path), path, libraries)
