"""Text -> AST: `parse_program` and `parse_expr`.

Three steps:
1. `mask` (ddlog/syntax/scanner.py) blanks what the LALR lexer should not see, keeping every
   newline and the length of the text so that Lark's positions are positions in the original:
   comments (`//`, nested `/* */`, or `#` in the command language) and the inside of string
   interpolations `${...}`. It is also where unterminated comments and strings are reported,
   at their start.
2. Lark (grammar/ddlog.lark) builds a tree; its errors become `ParseError`s with readable terminal
   names. `check_nesting` nests its operator chains by precedence (ddlog/syntax/precedence.py)
   and bounds its depth.
3. `Builder` turns the tree into ddlog/syntax/ast.py nodes with spans. String tokens are
   decoded from the original text; each `${e}` is parsed on its own (same machinery, shifted
   positions).
   Rule bodies are desugared here: `var c = e.group_by(k).count()` becomes a BodyGroupBy of a fresh
   `__g<N>` followed by `var c = __g<N>.count()`.

ddlog/syntax/commands.py reuses the scanner, the error conversion and the Builder.
"""
from __future__ import annotations

import copy
import dataclasses
import re
from functools import partial
from types import SimpleNamespace
from typing import Callable

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedToken
from lark.parsers.lalr_interactive_parser import InteractiveParser

from ddlog.errors import ParseError, Span
from ddlog.limits import MAX_CHAIN, MAX_DIGITS, MAX_INT_BITS, MAX_NESTING, recursion_room
from ddlog.syntax import ast, blocks, flwor, precedence
from ddlog.syntax.bindings import matching_items
from ddlog.syntax.scanner import Located, gap_end, mask, scan_interpolation, unescaped_quotes
from ddlog.tree import Node
from ddlog.grammar import program_parser

# ---------------------------------------------------------------------------------------------
# Lark errors -> ParseError

_LITERALS = {"DEC_INT", "HEX_INT", "WIDTH_INT", "WIDTH_FLOAT", "FLOAT", "STRING", "ISTRING",
             "RAW_STRING", "TRUE", "FALSE", "JSON"}
_READABLE = {"UIDENT": "identifier", "LIDENT": "identifier", "WHOLE": "identifier",
             "DOT": "'.'", "END_DOT": "'.'",
             "$END": "end of input", "WILDCARD": "'_'", "REF": "'&'"}
# Binary and postfix operators: listed as one word after an operand, where all of them fit.
_OPERATORS = {"IMPLIES", "OR", "AND", "EQ", "NE", "LT", "LE", "GT", "GE", "BAR", "CARET", "AMP",
              "SHL", "SHR", "PLUS", "MINUS", "CONCAT", "STAR", "SLASH", "PERCENT", "DOT", "AS",
              "LSQB", "COLON"}  # `e: T`, a type ascription


def _expected(names: set[str], lark: Lark) -> str:
    strings = {t.name: t.pattern.value for t in lark.terminals if t.pattern.type == "str"}
    lump = "PLUS" in names
    found: set[tuple[int, str]] = set()
    for name in names:
        if lump and name in _OPERATORS:
            found.add((3, "operator"))
        elif name in _READABLE:
            found.add((0 if _READABLE[name] == "identifier" else 4 if name == "$END" else 2,
                       _READABLE[name]))
        elif name in _LITERALS:
            found.add((1, "literal"))
        elif name in strings:
            found.add((2, f"'{strings[name]}'"))
        elif not name.startswith("__IGNORE"):
            found.add((2, name.lower()))
    return ", ".join(text for _, text in sorted(found))


def _describe_token(tok: Token, raw: str) -> str:
    if tok.type == "$END":
        return "end of input"
    value = raw[tok.start_pos:tok.end_pos] if tok.start_pos is not None else str(tok)
    if len(value) > 30:
        value = value[:27] + "..."
    if tok.type == "STRING":
        return f"string {value}"
    return f"'{value}'"


def _acceptable(e: UnexpectedToken) -> set[str]:
    """The terminals that could really come next. LALR merges look-aheads of states with the
    same core, so `e.expected` may name tokens that would fail a few reductions later; the
    interactive parser tries each one."""
    try:
        return set(e.interactive_parser.accepts())
    except Exception:  # no interactive parser (should not happen with LALR): be approximate
        return set(e.expected)


def _acceptable_at(e: UnexpectedCharacters) -> set[str]:
    """Same as `_acceptable`, for a character no token starts with (`e.allowed` lacks the
    keywords, which the lexer folds into the identifier terminal)."""
    try:
        # `accepts` only needs the parser state and a token factory from the lexer thread
        return set(InteractiveParser(None, e.state, SimpleNamespace(_Token=Token)).accepts())
    except Exception:
        return set(e.allowed or ())


def run_lark(lark: Lark, masked: str, raw: str, start: str, loc: Located):
    """Parse `masked` (whose original is `raw`), turning Lark's exceptions into ParseError."""
    try:
        return lark.parse(masked, start=start)
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            # Lark puts the end token at the last token; point just past it instead.
            if tok.end_line is not None:
                span = loc.span(tok.end_line, tok.end_column, tok.end_line, tok.end_column + 1)
            else:
                span = loc.span_at(raw, len(raw.rstrip()))
        else:
            span = loc.span(tok.line, tok.column, tok.end_line, tok.end_column)
        message = f"unexpected {_describe_token(tok, raw)}"
        acceptable = _acceptable(e)
        expected = _expected(acceptable, lark)
        if expected:
            message += f", expected one of: {expected}"
        if tok.type == "LIDENT" and "UIDENT" in acceptable and "LIDENT" not in acceptable:
            message += " (relation, constructor and type names start with an upper-case letter)"
        elif tok.type == "UIDENT" and "LIDENT" in acceptable and "UIDENT" not in acceptable:
            message += (" (variable, function, column and field names start with a lower-case "
                        "letter)")
        raise loc.error(message, span) from None
    except UnexpectedCharacters as e:
        span = loc.span(e.line, e.column, e.line, e.column + 1)
        message = f"unexpected character {e.char!r}"
        expected = _expected(_acceptable_at(e), lark)
        if expected:
            message += f", expected one of: {expected}"
        raise loc.error(message, span) from None


# ---------------------------------------------------------------------------------------------
# Tree -> AST

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "$": "$", "'": "'",
            "0": "\0", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_WIDTH = re.compile(r"([0-9]*)'(s?)([dhbo])(-?)([0-9a-fA-F_]+)")
_BASES = {"d": (10, "0123456789"), "h": (16, "0123456789abcdefABCDEF"), "b": (2, "01"),
          "o": (8, "01234567")}


def _strip_none(items: list) -> list:
    return [x for x in items if x is not None]


class Builder:
    """Lark tree -> AST (`transform` drives it). Every method is named after a rule of the
    grammar (or its alias) and gets the node's `meta` (positions) and its children, built."""

    def __init__(self, loc: Located, raw: str):
        self.loc = loc
        self.raw = raw  # the unmasked text the tree was parsed from
        self.fresh = 0  # counter for `__g<N>` variables
        self.string_depth: dict[int, int] = {}  # see check_nesting
        # method calls `.group_by(..)` not (yet) consumed by a `var v = ...` body item
        self.stray_group_by: dict[int, ast.Call] = {}

    # -- positions and errors --

    def sp(self, meta) -> Span:
        return self.loc.span(meta.line, meta.column, meta.end_line, meta.end_column)

    def tsp(self, tok: Token) -> Span:
        return self.loc.span(tok.line, tok.column, tok.end_line, tok.end_column)

    def fail(self, message: str, span: Span) -> ParseError:
        return self.loc.error(message, span)

    def check_no_stray_group_by(self) -> None:
        if self.stray_group_by:
            call = min(self.stray_group_by.values(),
                       key=lambda c: (c.span.line, c.span.col))
            raise self.fail("group_by is only allowed as `var v = e.group_by(k, ..)` in a rule "
                            "body (optionally followed by one group method)", call.span)

    # -- program and declarations --

    def program(self, meta, ch):
        # a rule of several heads is one rule per head (a list here)
        decls = [d for c in ch for d in (c if isinstance(c, list) else [c])]
        return ast.Program(decls, self.loc.file, self.loc.source)

    def expr_start(self, meta, ch):
        return ch[0]

    def type_def_name(self, meta, ch):
        """(name, type variables): `Name<'A, 'B>`"""
        return str(ch[0]), [str(c) for c in ch[1:] if c is not None and c.type == "TYPEVAR"]

    def typedef_alias(self, meta, ch):
        (name, params), alias = ch
        return ast.TypeDef(name, alias, None, self.sp(meta), params)

    def typedef_alias_upper(self, meta, ch):
        # `typedef T = Name`: an alias of the type Name (a single constructor needs braces)
        (name, params), target = ch
        return ast.TypeDef(name, ast.TypeName(str(target), [], self.tsp(target)), None,
                           self.sp(meta), params)

    def typedef_ctors(self, meta, ch):
        (name, params), ctors = ch
        return ast.TypeDef(name, None, ctors, self.sp(meta), params)

    def extern_type(self, meta, ch):
        name, text = ch
        default = ast.Lit("", "string", self.sp(meta)) if text is None \
            else self.decode_string(text)
        if not isinstance(default, ast.Lit):
            raise self.fail("an extern type's default is a plain string", self.tsp(text))
        return ast.TypeDef(str(name), None, None, self.sp(meta), extern_default=default.value)

    def ctor_list(self, meta, ch):
        return [c for c in ch if isinstance(c, ast.Constructor)]

    def ctor_bare(self, meta, ch):
        return ast.Constructor(str(ch[0]), [], self.sp(meta))

    def ctor_fields(self, meta, ch):
        return ast.Constructor(str(ch[0]), _strip_none(ch[1:]), self.sp(meta))

    def field(self, meta, ch):
        return ast.Field(str(ch[0]), ch[1], self.sp(meta))

    def type_upper(self, meta, ch):
        return ast.TypeName(str(ch[0]), [], self.sp(meta))

    type_lower = type_upper
    type_var = type_upper  # `'A`: the resolver tells it by its quote
    cast_name = type_upper

    def bits_type(self, meta, ch):
        kw, _, width, _ = ch
        digits = str(width).lstrip("0")
        if not digits:
            raise self.fail("a bit width must be at least 1", self.tsp(width))
        if len(digits) > 9:  # resolve.py reports the other widths over MAX_INT_BITS
            raise self.fail(f"{kw}<N> width must be between 1 and {MAX_INT_BITS}",
                            self.tsp(width))
        return ast.BitsType(str(kw) == "signed", int(digits), self.sp(meta))

    cast_bits = bits_type

    def generic_name(self, meta, ch):
        return str(ch[0])

    def generic_type(self, meta, ch):
        args = [c for c in ch[1:] if not isinstance(c, Token)]
        return ast.TypeName(str(ch[0]).rstrip("<"), args, self.sp(meta))

    def tuple_type(self, meta, ch):
        return ast.TupleType(_strip_none(ch), self.sp(meta))

    def func_type(self, meta, ch):
        items = [c for c in ch if c is not None and not isinstance(c, Token)]
        return ast.FuncType(items[:-1], items[-1], self.sp(meta))

    def role(self, meta, ch):
        return str(ch[0])

    def relation_decl(self, meta, ch):
        role = ch[0] or "internal"  # ch[2]: `&` of a relation of references (Ref<R> is R)
        return ast.RelationDecl(role, str(ch[3]), _strip_none(ch[4:-1]), self.sp(meta),
                                key=ch[-1], kind=ch[1])

    def relation_of_type(self, meta, ch):
        role = ch[0] or "internal"
        return ast.RelationDecl(role, str(ch[2])[:-1], [], self.sp(meta), record=ch[3],
                                key=ch[4], kind=ch[1])

    def rel_kind(self, meta, ch):
        return str(ch[0])

    def primary_key(self, meta, ch):
        return ast.PrimaryKey(str(ch[0]), ch[1], self.sp(meta))

    def import_decl(self, meta, ch):
        return ast.Import(str(ch[0]), str(ch[1]) if ch[1] is not None else None, self.sp(meta))

    def function_decl(self, meta, ch):
        params = [c for c in ch[1:-2] if isinstance(c, ast.Field)]
        body = blocks.function_body(ch[-1], self.fail, ch[-2])
        return ast.FunctionDecl(str(ch[0]), params, ch[-2], body, self.sp(meta))

    def function_unit(self, meta, ch):
        """A function without a return type returns `()`, as in DDlog."""
        params = [c for c in ch[1:-1] if isinstance(c, ast.Field)]
        unit = ast.TupleType([], self.sp(meta))
        body = blocks.function_body(ch[-1], self.fail, unit)
        return ast.FunctionDecl(str(ch[0]), params, unit, body, self.sp(meta))

    def index_decl(self, meta, ch):
        fields = [c for c in ch[1:-1] if isinstance(c, ast.Field)]
        return ast.IndexDecl(str(ch[0]), fields, ch[-1], self.sp(meta))

    def transformer_decl(self, meta, ch):
        return ast.TransformerDecl(str(ch[0]), ch[1], ch[2], self.sp(meta))

    def t_params(self, meta, ch):
        return _strip_none(ch)

    def t_relation(self, meta, ch):
        return str(ch[0]), "relation"

    def t_function(self, meta, ch):
        return str(ch[0]), "function"

    def apply_decl(self, meta, ch):
        return ast.Apply(str(ch[0]), ch[1], ch[2], self.sp(meta))

    def t_args(self, meta, ch):
        return _strip_none(ch)

    def t_arg(self, meta, ch):
        return ast.NameRef(str(ch[0]), self.tsp(ch[0]))

    def extern_function(self, meta, ch):
        params = [c for c in ch[1:-1] if isinstance(c, ast.Field)]
        return ast.FunctionDecl(str(ch[0]), params, ch[-1], None, self.sp(meta))

    # -- FLWOR-style rules (ddlog/syntax/flwor.py) --

    def ftl_decl(self, meta, ch):
        return flwor.rules(ch[0], self._fresh_binding)

    def ftl_for(self, meta, ch):
        return flwor.For(str(ch[0]), ch[1], ch[2], ch[3], self.sp(meta))

    def ftl_for_atom(self, meta, ch):
        """`for (R[p] if c)`, `for (R(x, _))`: the atom's rows, bound as in a rule body."""
        return flwor.For(None, ch[0], ch[1], ch[2], self.sp(meta))

    def ftl_source(self, meta, ch):
        # `for (x in R)`: every column of R; `for (x in R(.a = 1))`: those of its rows
        if isinstance(ch[0], ast.Atom):
            self._no_whole(ch[0])
            return ch[0]
        return ast.Atom(str(ch[0]), [], self.sp(meta), names=[])

    def ftl_var(self, meta, ch):
        return flwor.Let(str(ch[0]), ch[2], ch[3], self.sp(meta), annotation=ch[1])

    def ftl_if(self, meta, ch):
        return flwor.If(ch[0], ch[1], ch[2], self.sp(meta))

    def ftl_if_then(self, meta, ch):
        return flwor.If(ch[0], ch[1], None, self.sp(meta))

    def ftl_match(self, meta, ch):
        return flwor.Match(ch[0], [c for c in ch[1:] if c is not None], self.sp(meta))

    def ftl_arm(self, meta, ch):
        return (ch[0], ch[1])

    def ftl_block(self, meta, ch):
        return flwor.Block([c for c in ch if c is not None])

    def ftl_skip(self, meta, ch):
        """`skip`: nothing (no rule)."""
        return flwor.Block([])

    # -- rules --

    def fact(self, meta, ch):
        return ast.Rule(ch[-2], [], self.sp(meta))

    def rule(self, meta, ch):
        heads = [c for c in ch if isinstance(c, ast.Atom)]
        body = [item for items in ch[len(heads):-1] for item in items]
        if len(heads) == 1:
            return ast.Rule(heads[0], body, self.sp(meta))
        # `A(..), B(..) :- body.`: DDlog's rule of several heads, one rule per head (each
        # with its own copy of the body: the checker types nodes in place)
        return [ast.Rule(h, copy.deepcopy(body), self.sp(meta)) for h in heads]

    def located_head(self, meta, ch):
        """`&H(..)` and `H(..) @e`: the head H(..), with its location e."""
        head = next(c for c in ch if isinstance(c, ast.Atom))
        if len(ch) == 2 and ch[0] is head:
            head.location = ch[1]
        return head

    def atom(self, meta, ch):
        name, args = str(ch[0]), ch[1]
        delay, diff = 0, False
        if ch[0].type == "DELAYED":
            name, _, n = name.rpartition("-")
            if len(n) > MAX_DIGITS:
                raise self.fail(f"`{name}-{n[:21]}...`: too many transactions back",
                                self.sp(meta))
            delay = int(n)
            if delay == 0:
                raise self.fail(f"`{name}-0` is {name} itself: a delay counts transactions "
                                f"back from 1", self.sp(meta))
        elif ch[0].type == "DIFFERENTIATED":
            name, diff = name[:-1], True
        if args is None:
            return ast.Atom(name, [], self.sp(meta), delay=delay, diff=diff)
        kind, items = args
        if kind == "named":
            return ast.Atom(name, [it.value for it in items], self.sp(meta),
                            names=[it.name for it in items], delay=delay, diff=diff)
        return ast.Atom(name, items, self.sp(meta), delay=delay, diff=diff)

    def atom_whole(self, meta, ch):
        return ast.Atom(str(ch[0])[:-1], [], self.sp(meta), whole=ch[1])

    def try_expr(self, meta, ch):
        return blocks.Try(ch[0], self.sp(meta))

    def at_binding(self, meta, ch):
        return ast.AtBinding(str(ch[0]), ch[1], self.sp(meta))

    def at_binding_ref(self, meta, ch):
        # `&t@C{..}`: a reference whose value t binds (a Ref<T> is its T here)
        return ast.AtBinding(str(ch[1]), ch[2], self.sp(meta))

    def positional_args(self, meta, ch):
        return "positional", _strip_none(ch)

    def named_args(self, meta, ch):
        items = _strip_none(ch)
        self._check_unique(items)
        return "named", items

    def named_arg(self, meta, ch):
        return _Named(str(ch[1]), ch[2], self.tsp(ch[1]))

    def _check_unique(self, items: list["_Named"]) -> None:
        seen: set[str] = set()
        for it in items:
            if it.name in seen:
                raise self.fail(f"field '{it.name}' given twice", it.span)
            seen.add(it.name)

    def body_atom(self, meta, ch):
        # `R[p]` is checked once R's record type is known (ddlog/check/rules.py whole_body)
        return [ast.BodyAtom(ch[-1], False, self.sp(meta))]

    def body_inspect(self, meta, ch):
        return [ast.BodyInspect(ch[1], self.sp(meta))]

    def body_not(self, meta, ch):
        return [ast.BodyAtom(ch[1], True, self.sp(meta))]

    def body_in(self, meta, ch):
        self._no_whole(ch[-1])
        return [ast.BodyAtom(ch[-1], False, self.sp(meta), record=str(ch[0]))]

    def _no_whole(self, atom: ast.Atom) -> None:
        if atom.whole is not None:
            raise self.fail(f"write `{atom.relation}(..)` here: `{atom.relation}[x]` binds a "
                            "record only as a term of its own", atom.span)

    # `Some{var x} = e` / `(var a, var b) = e`: one valuation when e matches, none otherwise:
    # var __b = FlatMap(match (e) { pattern -> [(a, b)], _ -> [] }), var a = __b.0, ...

    def var_decl(self, meta, ch):
        return ast.VarDecl(str(ch[0]), self.sp(meta))

    def body_match(self, meta, ch):
        """`(192, 168, _, _) = e`, `(_, var b) = e`, `Some{var x} = e`: e matches a pattern
        written as an expression (`_`, literals, tuples, constructors; `var x` binds x, any
        other part is compared)."""
        shape, expr, span = ch[0], ch[1], self.sp(meta)
        names = [v.name for v in shape.find(ast.VarDecl)]
        if len(set(names)) != len(names):
            raise self.fail("a variable is bound twice in this pattern", shape.span)
        grouping: list = []
        if names and (_is_group_by(expr) or (isinstance(expr, ast.Call) and expr.method
                                             and expr.args and _is_group_by(expr.args[0]))):
            # `Some{var x} = e.group_by(k).find(..)`: the group (and its method) first
            value = self._fresh_binding()
            grouping = self.body_var(meta, [value, None, expr])
            expr = ast.Var(value, expr.span)
        return [*grouping, *matching_items(shape, expr, span, None, self._fresh_binding)]

    def _fresh_binding(self) -> str:
        self.fresh += 1
        return f"__b{self.fresh - 1}"

    def body_flatmap(self, meta, ch):
        return [ast.BodyFlatMap(str(ch[0]), ch[2], self.sp(meta))]

    def body_cond(self, meta, ch):
        return [ast.BodyCond(ch[0], self.sp(meta))]

    def body_var(self, meta, ch):
        name, annotation, expr, span = str(ch[0]), ch[1], ch[2], self.sp(meta)
        if _is_group_by(expr):
            group = self._group_by(name, expr, span)
            group.annotation = annotation
            return [group]
        if (isinstance(expr, ast.Call) and expr.method and expr.args
                and _is_group_by(expr.args[0])):
            # `var c = e.group_by(k).m(..)`: group into a fresh variable, then apply m to it
            gname = f"__g{self.fresh}"
            self.fresh += 1
            grouping = expr.args[0]
            items: list = [self._group_by(gname, grouping, span)]
            expr.args[0] = ast.Var(gname, grouping.span)
            items.append(ast.BodyAssign(name, expr, span, annotation))
            return items
        return [ast.BodyAssign(name, expr, span, annotation)]

    def body_aggregate(self, meta, ch):
        """`var c = Aggregate((k..), f(e))`: `var c = e.group_by((k..)).f()`, as DDlog reads
        its older syntax."""
        name, func, value, span = str(ch[0]), ch[-2], ch[-1], self.sp(meta)
        keys = [k for k in ch[1:-2] if k is not None]
        for k in keys:
            if not isinstance(k, ast.Var):
                raise self.fail("Aggregate's keys must be variables", k.span)
        gname = f"__g{self.fresh}"
        self.fresh += 1
        return [ast.BodyGroupBy(gname, value, keys, span),
                ast.BodyAssign(name, ast.Call(str(func), [ast.Var(gname, span)], self.tsp(func)),
                               span)]

    def _group_by(self, var: str, call: ast.Call, span: Span) -> ast.BodyGroupBy:
        del self.stray_group_by[id(call)]
        keys = call.args[1:]
        if len(keys) == 1 and isinstance(keys[0], ast.TupleLit):
            keys = keys[0].items  # `group_by((k1, k2))` is `group_by(k1, k2)`; `(())` no key
        for k in keys:
            if not isinstance(k, ast.Var):
                raise self.fail("group_by keys must be variables", k.span)
        return ast.BodyGroupBy(var, call.args[0], list(keys), span)

    # -- expressions --

    def if_expr(self, meta, ch):
        return ast.IfExpr(ch[0], ch[1], ch[2], self.sp(meta))

    def block(self, meta, ch):
        *statements, last = ch
        statements = [d for s in statements for d in blocks.destructured(s, self._fresh_binding)]
        if isinstance(last, blocks.AssignStmt):
            statements += blocks.destructured(last, self._fresh_binding)
            last = None
        return blocks.parsed_block([*statements, last], self.sp(meta), self.fail)

    def stmt_var(self, meta, ch):
        return blocks.VarStmt(str(ch[0]), ch[1], ch[2], self.sp(meta))

    def stmt_assign(self, meta, ch):
        return blocks.AssignStmt(ch[0], ch[1], self.sp(meta))

    def stmt_expr(self, meta, ch):
        return blocks.statement(ch[0], self.sp(meta))

    def statement(self, meta, ch):
        return ch[0]  # an `if` statement without a final `else` (made by stmt_if)

    def return_expr(self, meta, ch):
        return blocks.Return(ch[0], self.sp(meta))

    def stmt_continue(self, meta, ch):
        return blocks.LoopExit("continue", self.sp(meta))

    def stmt_break(self, meta, ch):
        return blocks.LoopExit("break", self.sp(meta))

    def stmt_return(self, meta, ch):
        return blocks.ReturnStmt(None, self.sp(meta))  # `return;`: the value ()

    def stmt_if(self, meta, ch):
        # `if (c) { .. }`, or `if (c) e else <an if statement without a final else>`
        other = ch[2] if len(ch) > 2 else None
        return blocks.IfStmt(ch[0], ch[1], other, self.sp(meta))

    def stmt_for(self, meta, ch):
        var, body = blocks.loop_pattern(ch[0], ch[2], self.fail)
        return blocks.ForStmt(var, ch[1], body, self.sp(meta))

    def loop_body(self, meta, ch):
        return [d for c in ch if c is not None
                for d in blocks.destructured(c, self._fresh_binding)]

    def paren(self, meta, ch):
        return ch[0]

    def lambda_param(self, meta, ch):
        return str(ch[0]), ch[1]

    def lambda_expr(self, meta, ch):
        # `|p, ..| [: R] e` (BAR tokens around the parameters) or `function(p, ..) [: R] {..}`
        return self._closure(ch[:-2], ch[-1], ch[-2], meta)

    def lambda_assign(self, meta, ch):
        # `|k, v| v.x = e`: a closure changing its parameter v
        target, value = ch[-2], ch[-1]
        at = Span(target.span.file, target.span.line, target.span.col, value.span.end_line,
                  value.span.end_col)
        body = blocks.assigning(target, value, at, self.fail)
        return self._closure(ch[:-2], body, None, meta)

    def _closure(self, heads: list, body: ast.Expr, result, meta) -> ast.Lambda:
        sp = self.sp(meta)
        params = [c for c in heads if isinstance(c, tuple)]
        names = [n for n, _ in params]
        body, changes = blocks.changing_closure(names, body, sp, self.fail, result)
        text = " ".join(self.raw[meta.start_pos:meta.end_pos].split())  # how it prints
        return ast.Lambda(names, body, sp, annotations=[t for _, t in params], result=result,
                          changes=changes, text=text)

    def reference(self, meta, ch):
        return ch[1]  # `&e`: a reference to e's value, which is e's value here (Ref<T> is T)

    def binop(self, meta, ch):
        span = self.sp(meta)
        if ch[1].type == "IMPLIES":  # `a => b`: DDlog's implication, `not a or b`
            return ast.BinOp("or", ast.UnOp("not", ch[0], ch[0].span), ch[2], span)
        return ast.BinOp(str(ch[1]), ch[0], ch[2], span)

    def unop(self, meta, ch):
        op, operand, span = str(ch[0]), ch[1], self.sp(meta)
        if (op == "-" and isinstance(operand, ast.Lit) and operand.kind in ("int", "float")
                and operand.width is None):
            # `-5` is a negative literal, so constants (patterns, data) need no arithmetic
            return ast.Lit(-operand.value, operand.kind, span)
        return ast.UnOp(op, operand, span)

    def cast(self, meta, ch):
        return ast.Cast(ch[0], ch[1], self.sp(meta))

    def ascribe(self, meta, ch):
        return ast.Ascribe(ch[0], ch[1], self.sp(meta))

    def field_access(self, meta, ch):
        tok = ch[2]
        if tok.type == "DEC_INT" and len(str(tok)) > MAX_DIGITS:
            raise self.fail(f"tuple field .{str(tok)[:21]}... does not exist", self.sp(meta))
        name = str(int(tok)) if tok.type == "DEC_INT" else str(tok)
        return ast.FieldAccess(ch[0], name, self.sp(meta))

    def bit_slice(self, meta, ch):
        """`x[hi:lo]`, bits hi down to lo of an integer: `((x >> lo) & mask) as bit<hi-lo+1>`
        (the literals take x's type; a mask out of its range says the slice is too wide)."""
        x, hi, lo, span = ch[0], int(ch[1]), int(ch[2]), self.sp(meta)
        if hi < lo:
            raise self.fail(f"a bit slice [{hi}:{lo}] needs its high bit first", span)
        shifted = ast.BinOp(">>", x, ast.Lit(lo, "int", span), span)
        mask = ast.BinOp("&", shifted, ast.Lit((1 << (hi - lo + 1)) - 1, "int", span), span)
        return ast.Cast(mask, ast.BitsType(False, hi - lo + 1, span), span)

    def method_call(self, meta, ch):
        call = ast.Call(str(ch[2]), [ch[0], *(ch[3] or [])], self.sp(meta), method=True)
        if call.func == "group_by":
            self.stray_group_by[id(call)] = call
        return call

    def args(self, meta, ch):
        return _strip_none(ch)

    def var(self, meta, ch):
        return ast.Var(str(ch[0]), self.sp(meta))

    def wildcard(self, meta, ch):
        return ast.Wildcard(self.sp(meta))

    def bare_ctor(self, meta, ch):
        return ast.StructLit(str(ch[0]), [], self.sp(meta))

    def call(self, meta, ch):
        return ast.Call(str(ch[0]), ch[1] or [], self.sp(meta))

    def vec_lit(self, meta, ch):
        return ast.VecLit(ch[0] or [], self.sp(meta))

    def map_lit(self, meta, ch):
        # `[k -> v, ...]`: the pairs `(k, v)`, typed as a Map
        return ast.VecLit(_strip_none(ch), self.sp(meta), map=True)

    def map_entry(self, meta, ch):
        return ast.TupleLit([ch[0], ch[1]], self.sp(meta))

    def tuple_lit(self, meta, ch):
        return ast.TupleLit(_strip_none(ch), self.sp(meta))

    def struct_lit(self, meta, ch):
        return ast.StructLit(str(ch[0]), ch[1] or [], self.sp(meta))

    def positional_fields(self, meta, ch):
        return [(None, e) for e in _strip_none(ch)]

    def named_fields(self, meta, ch):
        items = _strip_none(ch)
        self._check_unique(items)
        return [(it.name, it.value) for it in items]

    named_field = named_arg

    def match_expr(self, meta, ch):
        return ast.MatchExpr(ch[0], _strip_none(ch[1:]), self.sp(meta))

    def match_arm(self, meta, ch):
        return ast.MatchArm(ch[0], ch[1], self.sp(meta))

    # -- literals --

    def int_lit(self, meta, ch):
        tok: Token = ch[0]
        span = self.tsp(tok)
        text = str(tok)
        if tok.type == "HEX_INT":
            return ast.Lit(self._integer(text[2:].replace("_", ""), 16, text, span), "int",
                           span)
        if tok.type == "DEC_INT":
            return ast.Lit(self._integer(text.replace("_", ""), 10, text, span), "int", span)
        return self._width_literal(text, span)

    def _integer(self, digits: str, radix: int, text: str, span: Span) -> int:
        """The value of a literal's digits; no integer type holds more than MAX_INT_BITS bits,
        so a longer literal is refused before Python converts it (converting thousands of
        digits is slow, and refused beyond 4300)."""
        digits = digits.lstrip("0") or "0"
        limit = {2: MAX_INT_BITS, 8: MAX_INT_BITS // 3 + 1, 10: MAX_INT_BITS * 3 // 10 + 1,
                 16: MAX_INT_BITS // 4}[radix]
        value = int(digits, radix) if len(digits) <= limit else None
        if value is None or value.bit_length() > MAX_INT_BITS:
            shown = text if len(text) <= 24 else text[:21] + "..."
            raise self.fail(f"integer literal {shown} is too large (no integer type has more "
                            f"than {MAX_INT_BITS} bits)", span)
        return value

    def _width_literal(self, text: str, span: Span) -> ast.Lit:
        m = _WIDTH.fullmatch(text)
        digits = m[5].replace("_", "")
        radix, allowed = _BASES[m[3]]
        if not m[1] and not m[2] and not m[4]:
            # `'hff`: the digits in that base; the type comes from the context, as for `255`
            if not digits or any(c not in allowed for c in digits):
                raise self.fail(f"invalid digits for a base-{radix} literal: '{m[5]}'", span)
            return ast.Lit(self._integer(digits, radix, text, span), "int", span)
        if not m[1]:
            raise self.fail("a signed literal needs its width (`8'sd-3`)", span)
        if not m[1].strip("0"):
            raise self.fail("a bit width must be at least 1", span)
        if len(m[1]) > 4 or int(m[1]) > MAX_INT_BITS:
            raise self.fail(f"a bit width must be at most {MAX_INT_BITS}, found {m[1]}", span)
        width, signed, base = int(m[1]), m[2] == "s", m[3]
        if not digits or any(c not in allowed for c in digits):
            raise self.fail(f"invalid digits for a base-{radix} literal: '{m[5]}'", span)
        value = self._integer(digits, radix, text, span)
        kind = f"{'signed' if signed else 'bit'}<{width}>"
        if m[4]:  # `8'sd-3`
            if value > 1 << (width - 1):
                raise self.fail(f"literal {text} does not fit in {kind}", span)
            value = -value
        elif signed and base == "d":
            if value >= 1 << (width - 1):
                raise self.fail(f"literal {text} does not fit in {kind}", span)
        elif value >= 1 << width:
            raise self.fail(f"literal {text} does not fit in {kind}", span)
        elif signed and value >= 1 << (width - 1):
            value -= 1 << width  # hex/binary/octal give the two's complement bit pattern
        return ast.Lit(value, "int", span, width=width, signed=signed)

    def float_lit(self, meta, ch):
        tok = ch[0]
        if tok.type == "WIDTH_FLOAT":  # `32'f0.5`: a float, `64'f0.5`: a double
            width, digits = str(tok).split("'f")
            if width not in ("32", "64"):
                raise self.fail(f"a floating-point literal is 32 or 64 bits wide, not {width}",
                                self.tsp(tok))
            return ast.Lit(float(digits), "float", self.tsp(tok), width=int(width))
        return ast.Lit(float(str(tok)), "float", self.tsp(tok))

    def bool_lit(self, meta, ch):
        return ast.Lit(str(ch[0]) == "true", "bool", self.tsp(ch[0]))

    def string_lit(self, meta, ch):
        tok: Token = ch[0]
        if tok.type == "RAW_STRING":  # `[|text|]` or `i[|text|]`: the text as it stands
            raw = self.raw[tok.start_pos:tok.end_pos]
            if raw.startswith(("$", "i$")):  # `$[|..${e}..|]`: interpolated, no escapes
                return self.decode_string(tok, raw=True)
            return ast.Lit(raw[raw.index("[|") + 2:-2], "string", self.tsp(tok))
        if tok.type == "ISTRING":  # `i"..."`: the string after the `i`
            tok = Token("STRING", str(tok)[1:], start_pos=tok.start_pos + 1, line=tok.line,
                        column=tok.column + 1, end_line=tok.end_line, end_column=tok.end_column,
                        end_pos=tok.end_pos)
        return self.decode_string(tok)

    def adjacent_strings(self, meta, ch):
        """`"a" "b${x}"`: string literals side by side are one, as DDlog reads them."""
        parts: list = []
        for tok in ch:
            s = self.string_lit(meta, [tok])
            for part in (s.parts if isinstance(s, ast.Interp) else [s.value]):
                if isinstance(part, str) and parts and isinstance(parts[-1], str):
                    parts[-1] += part
                else:
                    parts.append(part)
        span = self.sp(meta)
        if all(isinstance(p, str) for p in parts):
            return ast.Lit("".join(parts), "string", span)
        return ast.Interp(parts, span)

    def decode_string(self, tok: Token, raw: bool = False) -> ast.Lit | ast.Interp:
        """A string literal's text and interpolations; `raw`: an interpolated raw string
        (`$[|...|]`), whose text has no escapes."""
        escapes = not raw
        raw = self.raw[tok.start_pos:tok.end_pos]
        line0, col0 = self.loc.pos(tok.line, tok.column)  # absolute position of the quote
        span = self.tsp(tok)

        def at(k: int) -> tuple[int, int]:
            """Absolute line and column of raw[k]."""
            nl = raw.rfind("\n", 0, k)
            if nl < 0:
                return line0, col0 + k
            return line0 + raw.count("\n", 0, k), k - nl

        parts: list = []
        text: list[str] = []
        k, end = (1, len(raw) - 1) if escapes else (raw.index("[|") + 2, len(raw) - 2)
        while k < end:
            c = raw[k]
            if c == "\\" and escapes:
                esc = raw[k + 1]
                if esc in " \t\r\n":
                    k = gap_end(raw, k)  # `\<blanks>\` (or `\<newline><blanks>`): nothing
                    continue
                if esc not in _ESCAPES:
                    l, col = at(k)
                    raise self.fail(f"unknown escape sequence '\\{esc}'",
                                    Span(self.loc.file, l, col, l, col + 2))
                text.append(_ESCAPES[esc])
                k += 2
            elif c == "$" and raw.startswith("${", k):
                close = scan_interpolation(raw, k + 2)
                body = raw[k + 2:close]
                l, col = at(k + 2)
                if not body.strip():
                    raise self.fail("empty interpolation '${}'",
                                    Span(self.loc.file, *at(k), *at(close + 1)))
                if text:
                    parts.append("".join(text))
                    text = []
                sub = Located(self.loc.file, self.loc.source, l - 1, col - 1,
                              self.string_depth.get(tok.start_pos, self.loc.depth + 1))
                parts.append(parse_text(unescaped_quotes(body) if escapes else body,
                                        "expr_start", sub))
                k = close + 1
            else:
                text.append(c)
                k += 1
        if not parts:
            return ast.Lit("".join(text), "string", span)
        if text:
            parts.append("".join(text))
        return ast.Interp(parts, span)

    # -- patterns --

    def p_wild(self, meta, ch):
        return ast.PWild(self.sp(meta))

    def p_var(self, meta, ch):
        return ast.PVar(str(ch[0]), self.sp(meta))

    def p_typed(self, meta, ch):
        ch[0].declared = ch[1]
        return ch[0]

    def p_lit(self, meta, ch):
        lit = ch[0]
        if isinstance(lit, ast.Interp):
            raise self.fail("a pattern cannot use string interpolation", lit.span)
        return ast.PLit(lit, self.sp(meta))

    def p_neg(self, meta, ch):
        lit = self.float_lit(meta, ch[1:]) if ch[1].type in ("FLOAT", "WIDTH_FLOAT") \
            else self.int_lit(meta, ch[1:])
        span = self.sp(meta)
        width = lit.width if lit.kind == "float" else None
        return ast.PLit(ast.Lit(-lit.value, lit.kind, span, width), span)

    def p_tuple(self, meta, ch):
        return ast.PTuple(_strip_none(ch), self.sp(meta))

    def p_ctor(self, meta, ch):
        fields = ch[1] if len(ch) > 1 and ch[1] is not None else []
        return ast.PCtor(str(ch[0]), fields, self.sp(meta))

    def p_positional(self, meta, ch):
        return [(None, p) for p in _strip_none(ch)]

    def p_named_fields(self, meta, ch):
        items = _strip_none(ch)
        self._check_unique(items)
        return [(it.name, it.value) for it in items]

    p_named = named_arg


class _Named:
    """A `.name = value` item (atom argument, struct field or pattern field) before it is
    folded into its parent."""

    __slots__ = ("name", "value", "span")

    def __init__(self, name: str, value, span: Span):
        self.name, self.value, self.span = name, value, span


def _is_group_by(e: ast.Expr) -> bool:
    return isinstance(e, ast.Call) and e.method and e.func == "group_by"


# ---------------------------------------------------------------------------------------------
# Entry points


def transform(tree: Tree, builder: Builder):
    """Build bottom-up what `tree` stands for: each node becomes what the builder's method of
    its name makes of the node's `meta` and its children's results (a node without one stays
    a Tree of those results). Iterative, so a deep tree costs no stack, and calling the
    methods directly spares a generic visitor's per-node wrapping."""
    methods: dict[str, Callable] = {}
    built: list = []  # results, in the order their nodes end
    todo: list = [tree]
    while todo:
        x = todo.pop()
        if type(x) is _Ends:  # all of its children are built, last on `built`
            node = x.tree
            n = len(node.children)
            children = built[len(built) - n:] if n else []
            del built[len(built) - n:]
            method = methods.get(node.data)
            if method is None:
                method = methods[node.data] = getattr(builder, node.data, None) or partial(
                    _kept, node.data)
            built.append(method(node.meta, children))
        elif isinstance(x, Tree):
            todo.append(_Ends(x))
            todo.extend(reversed(x.children))
        else:  # a token, or None for an optional part left out
            built.append(x)
    return built[0]


class _Ends:
    __slots__ = ("tree",)

    def __init__(self, tree: Tree):
        self.tree = tree


def _kept(data: str, meta, children: list) -> Tree:
    return Tree(data, children, meta)


# Operators whose chains (`a or b or c ...`) are one level however long: they associate, so a
# chain is rebuilt as a balanced tree (_rebalanced) and no pass recurses along it.
_FLAT = {"OR": "or", "AND": "and", "CONCAT": "++", "BAR": "|", "AMP": "&", "CARET": "^"}


def check_nesting(tree: Tree, loc: Located) -> tuple[dict[int, int], bool]:
    """Nest the operator chains of `tree` by precedence (they are parsed flat), and refuse a
    tree nested deeper than MAX_NESTING (counting the levels around `loc`'s piece of text),
    before the recursive passes see it. A chain of one associative operator (_FLAT)
    counts as one level, up to MAX_CHAIN operands. Returns the depth of every string token
    that holds an interpolation, by its offset (the interpolation is parsed on its own, one
    level deeper), and whether a chain is long enough to be rebalanced."""
    strings: dict[int, int] = {}
    chained = False
    stack: list[tuple[Tree, int, int]] = [(tree, loc.depth, 0)]
    while stack:
        node, depth, run = stack.pop()
        if node.data == "chain":
            precedence.nest(node, loc)
        if depth > MAX_NESTING:
            raise loc.error(f"expression nested too deeply (more than {MAX_NESTING} levels of "
                            f"operators, parentheses, calls or blocks)", _tree_span(node, loc))
        if run > MAX_CHAIN:
            raise loc.error(f"a chain of more than {MAX_CHAIN} operators", _tree_span(node, loc))
        for k, child in enumerate(node.children):
            if isinstance(child, Tree):
                if k == 0 and _same_chain(node, child):
                    chained = chained or run >= _REBALANCE
                    stack.append((child, depth, run + 1))
                else:
                    stack.append((child, depth + 1, 0))
            elif isinstance(child, Token) and child.type == "STRING" and "${" in child:
                strings[child.start_pos] = depth + 1
    return strings, chained


# chains at least this long are rebuilt balanced; shorter ones stay as written
_REBALANCE = 32


def _same_chain(node: Tree, child: Tree) -> bool:
    """Whether `child`, the left operand of `node`, continues a chain of `node`'s operator."""
    if node.data != "binop" or child.data != "binop" or len(node.children) != 3 \
            or len(child.children) != 3:
        return False
    op, inner = node.children[1], child.children[1]
    return isinstance(op, Token) and isinstance(inner, Token) and op.type in _FLAT \
        and op.type == inner.type


def _rebalanced(x):
    """`x` (an AST, a list of them, ...) with every chain of one associative operator rebuilt
    as a balanced tree: the same value, a depth that grows with the logarithm of its length."""
    if isinstance(x, ast.BinOp) and x.op in _FLAT.values():
        leaves, todo = [], [x]
        while todo:  # the chain's operands, in order, without recursion
            e = todo.pop()
            if isinstance(e, ast.BinOp) and e.op == x.op:
                todo += [e.right, e.left]
            else:
                leaves.append(e)
        return _balanced(x.op, [_rebalanced(e) for e in leaves])
    if isinstance(x, Node):
        return dataclasses.replace(x, **{f.name: _rebalanced(getattr(x, f.name))
                                         for f in dataclasses.fields(x)})
    if isinstance(x, list):
        return [_rebalanced(y) for y in x]
    if isinstance(x, tuple):
        return tuple(_rebalanced(y) for y in x)
    return x


def _balanced(op: str, operands: list) -> "ast.Expr":
    if len(operands) == 1:
        return operands[0]
    mid = len(operands) // 2
    left, right = _balanced(op, operands[:mid]), _balanced(op, operands[mid:])
    span = Span(left.span.file, left.span.line, left.span.col, right.span.end_line,
                right.span.end_col)
    return ast.BinOp(op, left, right, span)


def _tree_span(node: Tree, loc: Located) -> Span:
    meta = node.meta
    if getattr(meta, "line", None) is None:
        tok = next((t for t in node.scan_values(lambda v: isinstance(v, Token))), None)
        if tok is None:
            return loc.span(1, 1, 1, 2)
        return loc.span(tok.line, tok.column, tok.end_line, tok.end_column)
    return loc.span(meta.line, meta.column, meta.line, meta.column + 1)


def parse_text(text: str, start: str, loc: Located,
           make_builder: Callable[[Located, str], Builder] = Builder,
           lark: Lark | None = None, hash_comments: bool = False):
    with recursion_room():
        masked = mask(text, loc, hash_comments)
        tree = run_lark(lark or program_parser(), masked, text, start, loc)
        builder = make_builder(loc, text)
        builder.string_depth, chained = check_nesting(tree, loc)
        result = transform(tree, builder)
        builder.check_no_stray_group_by()
        return _rebalanced(result) if chained else result


def parse_program(text: str, file: str = "<input>") -> ast.Program:
    """Parse a whole `.dl` program. Raises ParseError."""
    return parse_text(text, "program", Located(file, text))


def parse_expr(text: str, file: str = "<input>") -> ast.Expr:
    """Parse a single expression. Raises ParseError."""
    return parse_text(text, "expr_start", Located(file, text))
