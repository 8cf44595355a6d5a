"""The built-in functions and group methods of the dialect, each defined once: an entry in
functions.py, library.py (DDlog's standard library over collections) or groups.py holds its
signature, type rule, Spark lowering and Python meaning (base.py says what an entry is).
`reference()` renders the table the README shows.

Operators (`+`, `==`, `++`, ...) are part of the language, not of this table: their typing is
in ddlog/check/exprs.py, their Spark lowering in runtime/expr.py and their meaning on Python
values in ddlog/values/ops.py.
"""
from __future__ import annotations

from ddlog.builtins.base import Args, Builtin, Lowering
from ddlog.builtins.closures import CLOSURE_OPS
from ddlog.builtins.functions import FUNCTIONS
from ddlog.builtins.groups import GROUP_METHODS

__all__ = ["Args", "Builtin", "CLOSURE_OPS", "FUNCTIONS", "GROUP_METHODS", "Lowering", "lookup",
           "reference"]


# the functions ddlog_std also names `string_f` (`string_contains(s, t)`)
STRING_FUNCTIONS = frozenset({"contains", "join", "len", "to_lowercase", "to_uppercase",
                              "starts_with", "ends_with", "substr", "trim", "reverse"})


def lookup(name: str, argc: int) -> Builtin | None:
    """The built-in a call names, with `argc` arguments (the receiver included). A name that is
    both a function and a group method (`min`, `max`) is told apart by its argument count."""
    if name.startswith("string_") and name[len("string_"):] in STRING_FUNCTIONS:
        name = name[len("string_"):]  # ddlog_std's `string_len(s)` is `s.len()`
    name = "key" if name == "group_key" else name  # and its `group_key(g)` is `g.key()`
    if name.startswith("vec_") and name[len("vec_"):] in FUNCTIONS:
        name = name[len("vec_"):]  # ddlog_std's `vec_push(v, x)`, `vec_len(v)`
    g = GROUP_METHODS.get(name)
    f = FUNCTIONS.get(name) or CLOSURE_OPS.get(name)
    if g is not None and (f is None or argc == g.arity):
        return g
    return f


def reference() -> str:
    """Every built-in as a Markdown table: name, signature, meaning."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")  # a table cell's own bars (closures, alternatives)

    rows = ["| name | signature | meaning |", "|---|---|---|"]
    for table in (FUNCTIONS, GROUP_METHODS):
        for b in table.values():
            rows.append(f"| `{b.name}` | `{cell(b.signature)}` | {cell(b.meaning)} |")
    return "\n".join(rows) + "\n"
