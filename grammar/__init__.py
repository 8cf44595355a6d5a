"""The Lark grammars of the dialect and cached parsers for them.

`ddlog.lark` is the language of programs; `commands.lark` adds DDlog's command language on top of
it (it reuses `atom` and the expressions). Both are LALR(1) with the contextual lexer, which the
grammar relies on (see the header of ddlog.lark); the grammar has no conflicts.
"""
from __future__ import annotations

import hashlib
import os
import sys
import uuid
from contextlib import suppress
from functools import lru_cache
from importlib import resources

import lark
from lark import Lark

from ddlog.cache import cache_dir

PROGRAM_STARTS = ["program", "expr_start"]
COMMAND_STARTS = ["commands", "command"]


@lru_cache(maxsize=None)
def load_grammar(name: str) -> str:
    """The text of `grammar/<name>.lark` (name without the extension)."""
    return resources.files(__package__).joinpath(f"{name}.lark").read_text(encoding="utf-8")


def _build(text: str, start: list[str], debug: bool = False) -> Lark:
    """The parser of `text`. Building its LALR tables takes half a second, at every command's
    start; stored (`Lark.save`) they load back in a twentieth of that. They are kept in ddlog's
    cache directory, in a file named by what they are built from, written under a name of its
    own and then renamed (a process starting meanwhile reads a whole file or none)."""
    options = dict(parser="lalr", lexer="contextual", start=start,
                   propagate_positions=True, maybe_placeholders=True, debug=debug)
    directory = None if debug else cache_dir()
    if directory is None:
        return Lark(text, **options)
    made_of = "\0".join([text, *start, lark.__version__, sys.version])
    path = os.path.join(directory, f"lark-{hashlib.sha256(made_of.encode()).hexdigest()[:16]}")
    try:
        with open(path, "rb") as f:
            return Lark.load(f)
    except Exception:  # noqa: BLE001 - not there yet, or damaged: built again below
        pass
    parser = Lark(text, **options)
    own = f"{path}.{uuid.uuid4().hex}.tmp"  # of this process and thread alone
    try:
        with open(own, "wb") as f:
            parser.save(f)
        os.replace(own, path)
    except OSError:  # a full disk, say: this command parses anyway, uncached
        with suppress(OSError):
            os.remove(own)
    return parser


def program_grammar() -> str:
    return load_grammar("ddlog")


def commands_grammar() -> str:
    return load_grammar("ddlog") + "\n" + load_grammar("commands")


@lru_cache(maxsize=None)
def program_parser() -> Lark:
    """Parser of programs (`start="program"`) and of single expressions (`"expr_start"`)."""
    return _build(program_grammar(), PROGRAM_STARTS)


@lru_cache(maxsize=None)
def commands_parser() -> Lark:
    """Parser of command-language statements (`start="command"`; `"commands"` for a run)."""
    return _build(commands_grammar(), COMMAND_STARTS)


def build_debug(which: str) -> Lark:
    """An uncached parser built in debug mode, so that Lark logs any shift/reduce conflict
    (tests use it to prove the grammar conflict-free)."""
    text = program_grammar() if which == "program" else commands_grammar()
    return _build(text, PROGRAM_STARTS if which == "program" else COMMAND_STARTS, debug=True)
