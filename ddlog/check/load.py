"""The whole front end in one call: text -> AST -> typed program -> strata.

Later stages (compiler, runtime, CLI) start from a `Frontend`; nothing after this re-reads text.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ddlog.check.program import CheckedProgram
from ddlog.syntax.parser import parse_program
from ddlog.syntax.source import read_text
from ddlog.check.rules import check_program
from strata import Stratum, stratify


@dataclass
class Frontend:
    program: CheckedProgram
    strata: list[Stratum]

    @property
    def file(self) -> str:
        return self.program.file

    @property
    def source(self) -> str:
        return self.program.source


def read_program(path_or_text: str, file: str | None = None) -> tuple[str, str]:
    """(text, file name). An existing path, or anything ending in `.dl`, is read as a file (so a
    missing `.dl` file raises FileNotFoundError instead of being parsed as program text)."""
    looks_like_path = "\n" not in path_or_text and (
        path_or_text.endswith(".dl") or os.path.isfile(path_or_text))
    if looks_like_path:
        return read_text(path_or_text), file or path_or_text
    return path_or_text, file or "<input>"


def load(path_or_text: str, file: str | None = None) -> Frontend:
    """Parse, type-check and stratify a file or a program text; raises a `DDlogError` subclass
    on any program error, OSError when a file cannot be read."""
    return load_text(*read_program(path_or_text, file))


def load_file(path: str) -> Frontend:
    """Like `load`, but `path` is always a file name (whatever it ends with)."""
    return load_text(read_text(path), path)


def load_text(text: str, file: str = "<input>") -> Frontend:
    checked = check_program(parse_program(text, file))
    return Frontend(checked, stratify(checked))
