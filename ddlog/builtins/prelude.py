"""The declarations of ddlog_std.dl, beside this module: the part of DDlog's standard library
written in the dialect (the generic type `Result` and its functions), which every program has;
and the folder of DDlog's other libraries written in the dialect, which a program imports.

They join a program before it is checked, as if it had declared them; a program that declares
a type or constructor of one of their names itself keeps its own, without them.
"""
from __future__ import annotations

import copy
import functools
import os

from ddlog.syntax import ast
from ddlog.syntax.parser import parse_program
from ddlog.syntax.source import read_text

PRELUDE = os.path.join(os.path.dirname(__file__), "ddlog_std.dl")
# DDlog's libraries written in the dialect (`import regex`): the last of the library roots
LIBRARY_ROOT = os.path.join(os.path.dirname(__file__), "lib")


@functools.cache
def _parsed() -> ast.Program:
    return parse_program(read_text(PRELUDE), PRELUDE)


def with_prelude(prog: ast.Program) -> ast.Program:
    """`prog` with the prelude's declarations before its own."""
    std = copy.deepcopy(_parsed())  # checking a program writes into its syntax tree
    names = {d.name for d in prog.typedefs} | {c.name for d in prog.typedefs
                                                for c in d.ctors or []}
    if names & ({d.name for d in std.typedefs} | {c.name for d in std.typedefs
                                                  for c in d.ctors or []}):
        return prog
    return ast.Program(std.decls + prog.decls, prog.file, prog.source, prog.sources)


def prelude_text() -> str:
    """What error messages about the prelude's declarations quote (it is not one of the
    program's modules, whose texts the program keeps)."""
    return _parsed().source
