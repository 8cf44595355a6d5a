"""Limits on what a program or a command may ask for, so that hostile or generated input gets
one clear, located message instead of a RecursionError, a memory blow-up or a hang.

The front end, the compiler and the expression compilers are recursive over expressions, so
the depth of an expression is bounded (`MAX_NESTING`) and the passes run under
`recursion_room()`, which gives Python's recursion limit enough head room for that depth in
every pass (the deepest, type checking with inlining, takes about five frames per level).
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

# Levels of nesting in one expression or type: operators (a chain `a + b + c` nests one level
# per operator), parentheses, calls, blocks, string interpolations. Also bounds expressions
# built by inlining function calls.
MAX_NESTING = 200

# Operands of one chain of an associative operator (`a or b or c ...`, `++`, `and`, `|`, `&`,
# `^`), which counts as one level of nesting: a generated condition may list thousands.
MAX_CHAIN = 2_000

# Nodes of one expression after function calls are inlined (each call copies the function's
# body, so functions that call each other twice per level grow exponentially).
MAX_EXPRESSION_NODES = 20_000

# The widest integer type (bit<128>, signed<128>): no literal may be wider.
MAX_INT_BITS = 128

# Bytes of one text a command reads: a program, a command file, standard input. (A program of
# 110,000 rules is about 5 MB.) Larger input is refused before it fills the memory.
MAX_TEXT_BYTES = 64 << 20

# Characters of one statement of the command language, and of a line read from a pipe.
MAX_STATEMENT = 16 << 20
MAX_LINE = 1 << 20

# Digits of an integer literal (Python refuses to convert more than 4,300 into a number; no
# integer type here is wider than 128 bits, 39 digits).
MAX_DIGITS = 200

# How much of a long source line an error message shows around the column it points at.
EXCERPT_WIDTH = 100

_RECURSION = 20_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the front end without Python's cyclic garbage collector, as it was before
    afterwards. A program's syntax trees are millions of small objects that live until it
    is compiled; the collector, run every few hundred allocations, walks them again and again
    (checking a large program takes far longer with it than without), and they hold few
    cycles."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def recursion_room() -> Iterator[None]:
    """Run a recursive pass with room for expressions `MAX_NESTING` levels deep. Pure Python
    recursion does not grow the C stack in CPython 3.11, so a high limit is safe; the previous
    limit is restored afterwards."""
    old = sys.getrecursionlimit()
    if old >= _RECURSION:
        yield
        return
    sys.setrecursionlimit(_RECURSION)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)
