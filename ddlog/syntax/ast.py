"""The abstract syntax tree of a DDlog program: plain dataclasses with source spans.

The parser (ddlog/syntax/parser.py) builds it; the type checker (ddlog/check/) fills in the `ty`
field of every expression and pattern in place; later passes only read it (the planner lowers
expressions to ddlog/plan/exprs.py's IR).

Conventions
- Every node has `span: Span` as its last field.
- Identifiers starting with an upper-case letter are relations and constructors, lower-case ones
  are variables, functions, columns and fields (as in DDlog).
- Method-call syntax `x.f(a)` is a `Call` with `method=True` and `args=[x, a]`; group methods
  (`g.count()`, `g.sum_of(|v| e)`) are such calls too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ddlog.errors import Span
from ddlog.tree import Node
from ddlog.types import Type

__all__ = ["Node"]  # and every node class below; Node (ddlog/tree.py) walks and rebuilds them


# ---------------------------------------------------------------------------------------------
# Type syntax


@dataclass
class TypeName(Node):
    """`bool`, `string`, `bigint`, `u32`, `usize`, `float`, `double`, a typedef name, or a generic
    `Vec<T>` / `Set<T>` / `Option<T>` / `Group<K, V>` (then `args` is non-empty)."""

    name: str
    args: list["TypeExpr"]
    span: Span


@dataclass
class BitsType(Node):
    """`bit<N>` (signed=False) or `signed<N>` (signed=True)."""

    signed: bool
    width: int
    span: Span


@dataclass
class TupleType(Node):
    """`(T1, T2, ...)`; `()` is the empty tuple."""

    items: list["TypeExpr"]
    span: Span


@dataclass
class FuncType(Node):
    """`|T1, T2|: R` or `function(T1, T2): R`, the type of a closure."""

    params: list["TypeExpr"]
    result: "TypeExpr"
    span: Span


TypeExpr = Union[TypeName, BitsType, TupleType, FuncType]

# ---------------------------------------------------------------------------------------------
# Expressions. `ty` is filled by the type checker.


@dataclass
class Var(Node):
    name: str
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Wildcard(Node):
    """`_`: only allowed as an argument of a body atom, or as a pattern."""

    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class VarDecl(Node):
    """`var x` as a part of a tuple or constructor in the pattern of a body item
    (`(_, var b) = e`, `Some{var x} = e`): declares x, bound to what it matches there. The
    parser makes those patterns (ddlog/syntax/bindings.py); anywhere else it is an error."""

    name: str
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Lit(Node):
    """A literal. `value` is a Python bool, int, float or str. `width`/`signed` are set for
    width literals `32'd15` (unsigned) / `8'sd-3` (signed); `kind` is 'bool' | 'int' | 'float' |
    'string'."""

    value: object
    kind: str
    span: Span
    width: int | None = None
    signed: bool = False
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Interp(Node):
    """An interpolated string `"a ${x} b"`: parts are str (literal text, escapes already
    resolved) or expressions."""

    parts: list[Union[str, "Expr"]]
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class BinOp(Node):
    """Binary operator. `op` is one of: + - * / % == != < <= > >= and or ++ & | ^ << >>"""

    op: str
    left: "Expr"
    right: "Expr"
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class UnOp(Node):
    """Unary operator: `-` (negation), `not`, `~` (bitwise not)."""

    op: str
    operand: "Expr"
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Call(Node):
    """A call of a user function or a built-in `f(a, b)`, or a method call `a.f(b)`
    (`method=True`, receiver first in `args`)."""

    func: str
    args: list["Expr"]
    span: Span
    method: bool = False
    ty: Type | None = field(default=None, compare=False)


@dataclass
class FieldAccess(Node):
    """`e.name` for a struct field, `e.0` for a tuple element (then `name` is "0")."""

    expr: "Expr"
    name: str
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class TupleLit(Node):
    """`(a, b)`; a parenthesised single expression is not a tuple."""

    items: list["Expr"]
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class VecLit(Node):
    """`[a, b, c]`: a Vec literal (also accepted where a Set is expected, and, of pairs, where
    a Map is); `[k -> v, ...]`, a Map literal, is one of pairs `(k, v)` with `map` set."""

    items: list["Expr"]
    span: Span
    ty: Type | None = field(default=None, compare=False)
    map: bool = False


@dataclass
class StructLit(Node):
    """A constructor application: `P{x, y}` (positional, names None), `P{.x = 1, .y = "a"}`
    (named), `Some{x}`, or a bare constructor without fields such as `None` or `Red`."""

    ctor: str
    fields: list[tuple[str | None, "Expr"]]
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class IfExpr(Node):
    """`if (c) a else b` (also `if c { a } else { b }`)."""

    cond: "Expr"
    then: "Expr"
    other: "Expr"
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class MatchArm(Node):
    pattern: "Pattern"
    body: "Expr"
    span: Span


@dataclass
class MatchExpr(Node):
    """`match (e) { pat -> expr, ... }`."""

    scrutinee: "Expr"
    arms: list[MatchArm]
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Ascribe(Node):
    """`e: T`: `e` typed T (a literal `2: u32`, `default(): T`); the checker keeps `e` only."""

    expr: "Expr"
    target: TypeExpr
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Cast(Node):
    """`e as T`."""

    expr: "Expr"
    target: TypeExpr
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Lambda(Node):
    """A closure `|x| e`, `|a, x: T|: R { .. }` or `function(x: T): R { .. }`: the argument of
    a built-in function or method (`v.map(|x| x + 1)`, `g.fold(|a, x| a + x, 0)`), or a value
    of a function type (ddlog/check/closures.py).
    `annotations[i]` is the declared type of `params[i]` or None; `result` the declared result
    type or None. `changes` names the parameter a closure changes (`|k, v| v.x = e`, a `mut`
    parameter in DDlog): its body then gives that parameter's new value (map_in_place).
    `text` is the closure as written, which a closure value prints."""

    params: list[str]
    body: "Expr"
    span: Span
    annotations: list["TypeExpr | None"] = field(default_factory=list)
    result: "TypeExpr | None" = None
    changes: str | None = None
    text: str = ""
    ty: Type | None = field(default=None, compare=False)


@dataclass
class Let(Node):
    """`var x = value;` (or the assignment `x = value;`, `rebind=True`) followed by the rest of
    a block, `body`. Made by ddlog/syntax/blocks.py from a block's statements; the type checker
    substitutes `value` for `x` in `body`, so later stages never see a Let."""

    var: str
    value: "Expr"
    body: "Expr"
    span: Span
    annotation: "TypeExpr | None" = None
    rebind: bool = False
    ty: Type | None = field(default=None, compare=False)


@dataclass
class With(Node):
    """`expr` with its field (or tuple element) `name` replaced by `value`: what the assignment
    `x.name = value;` makes of `x`."""

    expr: "Expr"
    name: str
    value: "Expr"
    span: Span
    ty: Type | None = field(default=None, compare=False)


Expr = Union[Var, VarDecl, Wildcard, Lit, Interp, BinOp, UnOp, Call, FieldAccess, TupleLit, VecLit,
             StructLit, IfExpr, MatchExpr, Cast, Ascribe, Lambda, Let, With]

# ---------------------------------------------------------------------------------------------
# Patterns (in `match` arms)


@dataclass
class PWild(Node):
    span: Span
    ty: Type | None = field(default=None, compare=False)
    declared: "TypeExpr | None" = field(default=None, compare=False)  # `p: T`


@dataclass
class PVar(Node):
    """Binds the matched value to a variable (`x`, `var x`; `var x: T` says its type)."""

    name: str
    span: Span
    ty: Type | None = field(default=None, compare=False)
    declared: "TypeExpr | None" = field(default=None, compare=False)  # `p: T`


@dataclass
class PLit(Node):
    """Matches a constant (a `Lit`, possibly negative)."""

    lit: Lit
    span: Span
    ty: Type | None = field(default=None, compare=False)
    declared: "TypeExpr | None" = field(default=None, compare=False)  # `p: T`


@dataclass
class PTuple(Node):
    items: list["Pattern"]
    span: Span
    ty: Type | None = field(default=None, compare=False)
    declared: "TypeExpr | None" = field(default=None, compare=False)  # `p: T`


@dataclass
class PCtor(Node):
    """`Some{x}`, `None`, `P{.x = p, .y = _}`, `Circle{r}`: names are None for positional."""

    ctor: str
    fields: list[tuple[str | None, "Pattern"]]
    span: Span
    ty: Type | None = field(default=None, compare=False)
    declared: "TypeExpr | None" = field(default=None, compare=False)  # `p: T`


Pattern = Union[PWild, PVar, PLit, PTuple, PCtor]

# ---------------------------------------------------------------------------------------------
# Rules


@dataclass
class Atom(Node):
    """`R(e1, e2)` or `R(.col = e, ...)` (named: `names[i]` is the column name of `args[i]`;
    positional: `names` is None). In a body an argument is a fresh variable (binds), a bound
    variable (joins), `_`, or an expression over bound variables (filters)."""

    relation: str
    args: list[Expr]
    span: Span
    names: list[str] | None = None
    whole: "Expr | None" = None  # `R[e]`: the whole record e (args are then empty)
    delay: int = 0  # `R-1(..)`: R as it was that many transactions ago (ddlog/check/rules.py)
    # `H(..) @e :- ..`: D3log's location of a head's records (ddlog/syntax/d3log.py)
    location: "Expr | None" = None
    diff: bool = False  # `S'(..)`: the stream S read as a relation (differentiation)


@dataclass
class AtBinding(Node):
    """`b@p` as an atom's argument: b is the column's value, which must match the pattern p."""

    var: str
    pattern: Expr
    span: Span
    ty: Type | None = field(default=None, compare=False)


@dataclass
class BodyAtom(Node):
    """A positive (`negated=False`) or negated (`not R(..)`) relation term in a body;
    `d in R(..)` also binds `record`, d, to the whole record (a value of the relation's
    type `R`)."""

    atom: Atom
    negated: bool
    span: Span
    record: str | None = None


@dataclass
class BodyCond(Node):
    """A predicate: a Boolean expression over bound variables."""

    expr: Expr
    span: Span


@dataclass
class BodyAssign(Node):
    """`var v = expr` / `var v: T = expr`."""

    var: str
    expr: Expr
    span: Span
    annotation: TypeExpr | None = None


@dataclass
class BodyFlatMap(Node):
    """`var v = FlatMap(expr)`: one valuation per element of the collection `expr`."""

    var: str
    expr: Expr
    span: Span


@dataclass
class BodyGroupBy(Node):
    """`var g = expr.group_by(k1, k2)`: afterwards only k1, k2 and g are bound.

    A chained group method `var c = e.group_by(k).count()` is desugared by the parser into a
    BodyGroupBy binding a fresh variable (named `__g<N>`) followed by a BodyAssign of `c`."""

    var: str
    expr: Expr
    keys: list[Var]
    span: Span
    annotation: TypeExpr | None = None  # `var g: Group<K, V> = ...`


@dataclass
class BodyInspect(Node):
    """`Inspect f(args)`: f, a function run for its effect on the driver (ddlog/builtins/
    inspect.py), is called for every change of the rule's valuations at this point, with
    `ddlog_timestamp` and `ddlog_weight` bound too. It binds nothing and filters nothing. The
    checker fills `vars`: the variables bound at this point, with their types."""

    expr: Expr
    span: Span
    vars: list[tuple[str, Type]] = field(default_factory=list)


BodyItem = Union[BodyAtom, BodyCond, BodyAssign, BodyFlatMap, BodyGroupBy, BodyInspect]


@dataclass
class Rule(Node):
    """`Head :- body.`; a fact `R(1, "a").` has an empty body."""

    head: Atom
    body: list[BodyItem]
    span: Span


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass
class Field(Node):
    """A column of a relation, a field of a constructor, or a parameter of a function."""

    name: str
    type: TypeExpr
    span: Span


@dataclass
class Constructor(Node):
    name: str
    fields: list[Field]
    span: Span


@dataclass
class TypeDef(Node):
    """`typedef Name = T` (alias: `ctors` is None, `alias` set) or
    `typedef Name = C1{..} | C2{..}` (`ctors` set, `alias` None); a generic one,
    `typedef Name<'A, 'B> = ...`, has its type variables in `params`. `extern type Name`
    (neither alias nor ctors) is a type whose values are their text; `extern type Name =
    "text"` gives the text of its default value."""

    name: str
    alias: TypeExpr | None
    ctors: list[Constructor] | None
    span: Span
    params: list[str] = field(default_factory=list)
    extern_default: str | None = None  # set for an `extern type`


@dataclass
class RelationDecl(Node):
    """`input relation R(a: T, ...)`; role is 'input', 'output' or 'internal' (no role);
    `input multiset`, `output stream`, ... give its kind."""

    role: str
    name: str
    columns: list[Field]
    span: Span
    # `relation R[T]`: its records are T's (a struct type of one constructor), whose fields
    # the checker makes its columns
    record: "TypeExpr | None" = None
    key: "PrimaryKey | None" = None
    # 'relation' (a set), 'multiset' (multiplicities kept) or 'stream' (only the current
    # transaction's records)
    kind: str = "relation"


@dataclass
class PrimaryKey(Node):
    """`primary key (x) e`: the key of the record x is e."""

    var: str
    expr: Expr
    span: Span


@dataclass
class FunctionDecl(Node):
    """`function f(x: T, ...): R { expr }` or `function f(x: T): R = expr`; `body` is None
    for an `extern function` whose body was not given (ddlog/syntax/modules.py)."""

    name: str
    params: list[Field]
    result: TypeExpr
    body: Expr | None
    span: Span


@dataclass
class Import(Node):
    """`import module` / `import module as alias` (ddlog/syntax/modules.py resolves them)."""

    module: str
    alias: str | None
    span: Span


@dataclass
class NameRef(Node):
    """A relation or function named as itself: an argument or output of `apply`."""

    name: str
    span: Span


@dataclass
class TransformerDecl(Node):
    """`extern transformer T(R: relation['A], f: function(x: 'A): 'B) -> (O: relation[..])`:
    `inputs` and `outputs` name the parameters, each 'relation' or 'function'."""

    name: str
    inputs: list[tuple[str, str]]
    outputs: list[tuple[str, str]]
    span: Span


@dataclass
class Apply(Node):
    """`apply T(R, f, ..) -> (O, ..)`: transformer T over relations and functions, deriving
    the relations O (ddlog/syntax/transformers.py writes its rules)."""

    transformer: str
    args: list[NameRef]
    outputs: list[NameRef]
    span: Span


@dataclass
class IndexDecl(Node):
    """`index I(x: T, ..) on R(x, _)`: an index of R's records by the fields' variables."""

    name: str
    fields: list[Field]
    atom: Atom
    span: Span


Decl = Union[Import, TypeDef, RelationDecl, FunctionDecl, Rule, TransformerDecl, Apply,
             IndexDecl]


@dataclass
class Program(Node):
    """A parsed program: its declarations in source order, and the text they came from (for
    error messages)."""

    decls: list[Decl]
    file: str
    source: str
    # the text of every imported user module, by file name (error messages quote it)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def typedefs(self) -> list[TypeDef]:
        return [d for d in self.decls if isinstance(d, TypeDef)]

    @property
    def relations(self) -> list[RelationDecl]:
        return [d for d in self.decls if isinstance(d, RelationDecl)]

    @property
    def functions(self) -> list[FunctionDecl]:
        return [d for d in self.decls if isinstance(d, FunctionDecl)]

    @property
    def indexes(self) -> list[IndexDecl]:
        return [d for d in self.decls if isinstance(d, IndexDecl)]

    @property
    def rules(self) -> list[Rule]:
        return [d for d in self.decls if isinstance(d, Rule)]
