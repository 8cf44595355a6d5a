"""Checked program -> the plan the runtime runs: rules in normal form, strata (computed once,
here), and one circuit per stratum (ddlog/plan/circuit.py is the IR, the one contract between
the language and runtime/).

    load(path_or_text)   parse, check and compile a program (file or text)
    load_text(text, file), load_file(path)
"""
from __future__ import annotations

from ddlog.check import check_text, read_program
from ddlog.limits import collector_paused
from ddlog.plan.compile import CompiledProgram, compile_program
from ddlog.syntax.source import read_text

__all__ = ["CompiledProgram", "compile_program", "load", "load_file", "load_text"]


def load_text(text: str, file: str = "<input>", libraries: tuple[str, ...] = (),
              distinct_internal: bool = False) -> CompiledProgram:
    """`libraries`: directories where imported modules are looked for after the program's
    own (DDlog's `-L`). `distinct_internal`: every internal relation made distinct
    (compile_program)."""
    with collector_paused():
        return compile_program(check_text(text, file, libraries), distinct_internal)


def load(path_or_text: str, file: str | None = None,
         libraries: tuple[str, ...] = ()) -> CompiledProgram:
    """A program from a file or from its text; raises a DDlogError subclass on any program
    error, OSError when a file cannot be read."""
    return load_text(*read_program(path_or_text, file), libraries)


def load_file(path: str, libraries: tuple[str, ...] = ()) -> CompiledProgram:
    """Like `load`, but `path` is always a file name (whatever it ends with)."""
    return load_text(read_text(path), path, libraries)
