"""The Lark grammars of the dialect and cached parsers for them.

`ddlog.lark` is the language of programs; `commands.lark` adds DDlog's command language on top of
it (it reuses `atom` and the expressions). Both are LALR(1) with the contextual lexer, which the
grammar relies on (see the header of ddlog.lark); the grammar has no conflicts.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources

from lark import Lark

PROGRAM_STARTS = ["program", "expr_start"]
COMMAND_STARTS = ["commands", "command"]


@lru_cache(maxsize=None)
def load_grammar(name: str) -> str:
    """The text of `grammar/<name>.lark` (name without the extension)."""
    return resources.files(__package__).joinpath(f"{name}.lark").read_text(encoding="utf-8")


def _build(text: str, start: list[str], debug: bool = False) -> Lark:
    return Lark(text, parser="lalr", lexer="contextual", start=start,
                propagate_positions=True, maybe_placeholders=True, debug=debug)


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
