"""How DDlog prints a closure value: `<closure: TEXT, captured_args: ..>`, where TEXT is not the
program's text but DDlog's compiler's rendering of the typed closure:

    |x| x * x     (function(x: signed<64>):signed<64>{(x * x)})
    |v| v.map(f)  (function(v: ddlog_std::Vec<ddlog_std::s64>):ddlog_std::Vec<ddlog_std::s64>{
                  (vec::map(v, f))})   (on one line)

Its rules, as DDlog's pretty-printer applies them to the checked expression: every call and
every operator is in parentheses; a method call `v.map(f)` is the call of the library
function it names, qualified by its module (`vec::map` for a Vec, `set::map` for a Set,
`ddlog_std::` for the rest); a function passed by name is its qualified name; an integer
literal carries the width its type gives it (`64'sd100`, `32'd1`); the parameters and the
result carry their inferred types, whose outer level is expanded (`s64` prints as
`signed<64>`) while the types inside a generic keep their library names
(`ddlog_std::Vec<ddlog_std::s64>`).

`render` gives that text for the closures made of what those rules cover (variables, literals,
operators, calls of the library, fields, tuples, nested closures); for any other closure (one
calling a function of the program, whose call the checker inlines, or holding a block, a match
or a vector literal) it gives None, and the closure prints the program's text instead.
"""
from __future__ import annotations

from ddlog.syntax import ast
from ddlog.types import TFloat, TFunc, TGroup, TInt, TMap, TSet, TStruct, TTuple, TVec, TypeMapping

# The library functions that DDlog defines in a module of their receiver's kind; every other
# library function is in `ddlog_std`.
MODULE_FUNCTIONS: dict[type, tuple[str, frozenset[str]]] = {
    TVec: ("vec", frozenset({"map", "flatmap", "sort_by", "arg_min", "arg_max", "find",
                             "filter", "filter_map", "retain", "all", "any", "count", "fold",
                             "first", "last"})),
    TSet: ("set", frozenset({"map", "arg_min", "arg_max", "find", "filter", "filter_map",
                             "all", "any", "fold"})),
    TMap: ("map", frozenset({"map", "map_in_place", "map_keys", "find", "any", "filter",
                             "filter_map", "retain", "fold"})),
    TGroup: ("group", frozenset({"map", "flatmap", "arg_min", "arg_max", "find", "filter",
                                 "filter_map", "all", "any", "count", "fold", "sum_of"})),
}
INTERNMENT = frozenset({"intern", "ival"})
ALIASED_WIDTHS = (8, 16, 32, 64, 128)  # ddlog_std's s8..s128 and u8..u128
# what a parsed closure body may hold for `render` to print it as DDlog does
PLAIN = (ast.Var, ast.Lit, ast.BinOp, ast.UnOp, ast.Call, ast.FieldAccess, ast.TupleLit,
         ast.Lambda)


class Unrendered(Exception):
    """The closure holds something the rules above do not cover."""


def render(parsed: ast.Expr, lam: ast.Lambda, body: ast.Expr, ty: TFunc,
           functions: set[str] | dict) -> str | None:
    """DDlog's text of the closure `lam` (parsed body `parsed`, checked body `body`, type
    `ty`), or None when it holds something `render` does not cover (see the module's doc).
    `functions`: the program's function names (calls of them are inlined when checked)."""
    for n in parsed.walk():
        if not isinstance(n, PLAIN):
            return None
        if isinstance(n, ast.Call) and n.func in functions:
            return None
        if isinstance(n, ast.Var) and n.name in functions:
            return None
        if isinstance(n, ast.Lit) and n.kind == "float":
            return None
    try:
        return _closure(lam.params, ty, body)
    except Unrendered:
        return None


def _closure(params: list[str], ty: TFunc, body: ast.Expr) -> str:
    args = ", ".join(f"{p}: {_type(t, outer=True)}" for p, t in zip(params, ty.params))
    return f"(function({args}):{_type(ty.result, outer=True)}{{{_expr(body)}}})"


def _expr(e: ast.Expr) -> str:
    if isinstance(e, ast.Var):
        return e.name
    if isinstance(e, ast.Lit):
        return _literal(e)
    if isinstance(e, ast.BinOp):
        return f"({_expr(e.left)} {e.op} {_expr(e.right)})"
    if isinstance(e, ast.UnOp):
        return f"({e.op} {_expr(e.operand)})"
    if isinstance(e, ast.FieldAccess):
        return f"({_expr(e.expr)}.{e.name})"
    if isinstance(e, ast.TupleLit):
        return f"({', '.join(_expr(i) for i in e.items)})"
    if isinstance(e, ast.Lambda):
        ref = _function_passed(e)
        if ref is not None:
            return ref
        if not isinstance(e.ty, TFunc):
            raise Unrendered()
        return _closure(e.params, e.ty, e.body)
    if isinstance(e, ast.Call):
        if e.func == "closure#apply":  # `f(x)` of a closure held in a variable
            return f"({_expr(e.args[0])}({', '.join(_expr(a) for a in e.args[1:])}))"
        return f"({_qualified(e)}({', '.join(_expr(a) for a in e.args)}))"
    raise Unrendered()


def _function_passed(e: ast.Lambda) -> str | None:
    """The name of the function a closure only passes its parameters to: what the checker
    makes of a function passed by name (`v.map(ref_new)`, `v.map(f)` with f a closure)."""
    body = e.body
    if e.text or not isinstance(body, ast.Call):
        return None
    passed = [a.name for a in body.args if isinstance(a, ast.Var)]
    if body.func == "closure#apply":
        if passed[1:] == e.params and len(body.args) == len(e.params) + 1:
            return _expr(body.args[0])
        return None
    if passed == e.params and len(body.args) == len(e.params):
        return _qualified(body)
    return None


def _qualified(call: ast.Call) -> str:
    """A library function's name as DDlog prints it: with the module that defines it."""
    name = call.func
    if "#" in name or "::" in name:
        raise Unrendered()
    receiver = call.args[0].ty if call.args else None
    for kind, (module, names) in MODULE_FUNCTIONS.items():
        if isinstance(receiver, kind) and name in names:
            return f"{module}::{name}"
    return f"internment::{name}" if name in INTERNMENT else f"ddlog_std::{name}"


def _literal(e: ast.Lit) -> str:
    if e.kind == "bool":
        return "true" if e.value else "false"
    if e.kind == "string":
        return _haskell_show(str(e.value))
    if e.kind == "int" and isinstance(e.ty, TInt):
        if e.ty.width is None:
            return str(e.value)
        return f"{e.ty.width}'{'sd' if e.ty.signed else 'd'}{e.value}"
    raise Unrendered()


def _haskell_show(s: str) -> str:
    """A string literal as DDlog's compiler (Haskell's `show`) writes it."""
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", '"': '\\"'}
    out = []
    for i, ch in enumerate(s):
        if ch in named:
            out.append(named[ch])
        elif " " <= ch <= "~":
            # a numeric escape followed by a digit is separated by `\&`
            out.append("\\&" + ch if ch.isdigit() and out and out[-1][-1:].isdigit()
                       and out[-1].startswith("\\") else ch)
        else:
            out.append(f"\\{ord(ch)}")
    return '"' + "".join(out) + '"'


class _TypeText(TypeMapping):
    """A type as DDlog's compiler writes it in a closure's text: library types by their
    module's names (`ddlog_std::Vec<ddlog_std::s64>`), an integer of an aliased width by its
    alias except where `outer` (a parameter's or the result's own type)."""

    def on_bool(self, t, outer=False):
        return "bool"

    def on_string(self, t, outer=False):
        return "string"

    def on_int(self, t: TInt, outer=False):
        if t.width is None:
            return "bigint"
        if not outer and t.width in ALIASED_WIDTHS:
            return f"ddlog_std::{'s' if t.signed else 'u'}{t.width}"
        return f"{'signed' if t.signed else 'bit'}<{t.width}>"

    def on_float(self, t: TFloat, outer=False):
        return "float" if t.bits == 32 else "double"

    def on_tuple(self, t: TTuple, outer=False):
        return f"({', '.join(self(i) for i in t.items)})"

    def on_func(self, t: TFunc, outer=False):
        return f"function({', '.join(self(p) for p in t.params)}):{self(t.result)}"

    def on_vec(self, t, outer=False):
        return f"ddlog_std::Vec<{self(t.elem)}>"

    def on_set(self, t, outer=False):
        return f"ddlog_std::Set<{self(t.elem)}>"

    def on_option(self, t, outer=False):
        return f"ddlog_std::Option<{self(t.elem)}>"

    def on_map(self, t: TMap, outer=False):
        return f"ddlog_std::Map<{self(t.key)},{self(t.value)}>"

    def on_group(self, t: TGroup, outer=False):
        return f"ddlog_std::Group<{self(t.key)},{self(t.elem)}>"

    def on_any(self, t, outer=False):
        return "ddlog_std::Any"

    def on_struct(self, t: TStruct, outer=False):
        if t.args:  # an instance of a generic user type: not rendered
            raise Unrendered()
        return t.name


_type = _TypeText()
