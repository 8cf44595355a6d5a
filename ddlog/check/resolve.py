"""Declarations: resolve type syntax to semantic types and collect every named thing.

`resolve_decls(prog)` checks for duplicate declarations, resolves typedefs (aliases and
constructor types, rejecting alias cycles and recursive types), relation columns and function
signatures, and returns a `Decls` table that the expression and rule checkers consult.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ddlog.syntax import ast
from ddlog.types import RelationInfo
from ddlog.errors import Span
from ddlog.check.inline import Size
from ddlog.check.scope import error
from ddlog.types import (PRIMITIVES, TAny, TCtor, TFunc, TGroup, TInt, TMap, TOption, TSet,
                         TString, TStruct, TTuple, TVar, TVec, Type, has_vars)

# Built-in generic types and how many type arguments each takes.
GENERICS: dict[str, int] = {"Vec": 1, "Set": 1, "Option": 1, "Group": 2, "Map": 2, "Ref": 1,
                            "Intern": 1, "Set64": 1, "HashSet": 1}
OPTION_CTORS = ("Some", "None")
MAX_WIDTH = 128


@dataclass
class FuncInfo:
    decl: ast.FunctionDecl
    params: list[tuple[str, Type]]
    result: Type
    # A generic function (type variables `'A` in its signature) is checked at each call, with
    # the arguments' types, from `decl.body`, which stays as parsed.
    generic: bool = False
    # The checked body with user calls already inlined; set by the function checker, read by the
    # inliner (functions are checked callees first, so a caller always finds it set).
    body: ast.Expr | None = None
    size: Size | None = None  # measured once with `body`, for the inliner's limits


@dataclass
class Decls:
    types: dict[str, Type] = field(default_factory=dict)  # typedef name -> type
    ctors: dict[str, tuple[TStruct, TCtor]] = field(default_factory=dict)
    relations: dict[str, RelationInfo] = field(default_factory=dict)
    functions: dict[str, FuncInfo] = field(default_factory=dict)
    # a name several functions share (DDlog overloads by parameter types) -> their names
    # here, `f#0`, `f#1`, ... (ExprChecker picks one by the arguments' types)
    overloads: dict[str, list[str]] = field(default_factory=dict)

    # generic typedefs (`typedef Result<'V, 'E> = ...`), instantiated where they are used
    generics: dict[str, ast.TypeDef] = field(default_factory=dict)
    instances: dict[tuple[str, tuple[Type, ...]], Type] = field(default_factory=dict)

    def resolve(self, te: ast.TypeExpr, tvars: dict[str, Type] | None = None) -> Type:
        """Resolve type syntax once all typedefs are known (`e as T`, `var x: T`), with the
        type variables of the generic function being checked bound to `tvars`."""
        return _Resolver(self.generics, self.types, tvars, self.instances).resolve(te)


def _overloaded(functions: list[ast.FunctionDecl], decls: Decls,
                _res: "_Resolver") -> list[ast.FunctionDecl]:
    """The functions, those sharing a name renamed `f#0`, `f#1`, ... (decls.overloads); two
    of one name must differ in their parameters' types."""
    groups: dict[str, list[ast.FunctionDecl]] = {}
    for f in functions:
        groups.setdefault(f.name, []).append(f)
    for name, group in groups.items():
        if len(group) == 1:
            continue
        seen: dict[tuple, ast.FunctionDecl] = {}
        for f in group:
            key = tuple(_res.resolve(p.type) for p in f.params)
            if key in seen:
                raise error(f"duplicate function '{name}' with the same parameter types "
                            f"(first declared at {seen[key].span})", f.span)
            seen[key] = f
        decls.overloads[name] = []
        for k, f in enumerate(group):
            f.name = f"{name}#{k}"
            decls.overloads[name].append(f.name)
    return functions


def _unique(items, kind: str, owner: str = "") -> dict:
    """name -> item, failing on the second declaration of a name."""
    seen: dict = {}
    for it in items:
        if it.name in seen:
            where = f" in {owner}" if owner else ""
            raise error(f"duplicate {kind} '{it.name}'{where} "
                        f"(first declared at {seen[it.name].span})", it.span)
        seen[it.name] = it
    return seen


class _Resolver:
    """Resolves type syntax; typedefs on demand, with a stack to detect cycles."""

    def __init__(self, defs: dict[str, ast.TypeDef], done: dict[str, Type],
                 tvars: dict[str, Type] | None = None,
                 instances: dict[tuple[str, tuple[Type, ...]], Type] | None = None):
        self.defs = defs
        self.done = done
        self.tvars = tvars or {}
        self.instances = {} if instances is None else instances
        self.stack: list[str] = []
        self.generic: ast.TypeDef | None = None  # the generic typedef being instantiated

    def typedef(self, name: str, use: Span) -> Type:
        if name in self.done:
            return self.done[name]
        if self.defs[name].params:  # checked once with its variables as the arguments
            return self.instance(name, [TVar(p) for p in self.defs[name].params], use)
        if name in self.stack:
            cycle = self.stack[self.stack.index(name):] + [name]
            path = " -> ".join(cycle)
            if any(self.defs[n].ctors is not None for n in cycle[:-1]):
                raise error(f"recursive type '{name}' is not supported ({path})", use)
            raise error(f"cyclic type alias: {path}", use)
        self.stack.append(name)
        d = self.defs[name]
        if d.extern_default is not None:
            t = TString(name, d.extern_default)
        elif d.ctors is None:
            t = self.resolve(d.alias)
        else:
            t = TStruct(name, tuple(
                TCtor(c.name, tuple((f.name, self.resolve(f.type)) for f in c.fields))
                for c in d.ctors))
        self.stack.pop()
        self.done[name] = t
        return t

    def instance(self, name: str, args: list[Type], use: Span) -> Type:
        """`Name<A, B>` of `typedef Name<'V, 'E> = ...`: the typedef with 'V = A, 'E = B (for
        constructors, a TStruct of those arguments; for an alias, the aliased type)."""
        d = self.defs[name]
        if len(args) != len(d.params):
            n = len(d.params)
            raise error(f"type '{name}' expects {n} type argument{'s' if n > 1 else ''}, "
                        f"found {len(args)}", use)
        key = (name, tuple(args))
        if key in self.instances:
            return self.instances[key]
        if name in self.stack:
            path = " -> ".join(self.stack[self.stack.index(name):] + [name])
            raise error(f"recursive type '{name}' is not supported ({path})", use)
        inner = _Resolver(self.defs, self.done, dict(zip(d.params, args)), self.instances)
        inner.stack, inner.generic = self.stack + [name], d
        if d.ctors is None:
            t = inner.resolve(d.alias)
        else:
            t = TStruct(name, tuple(
                TCtor(c.name, tuple((f.name, inner.resolve(f.type)) for f in c.fields))
                for c in d.ctors), tuple(args))
        self.instances[key] = t
        return t

    def resolve(self, te: ast.TypeExpr) -> Type:
        if isinstance(te, ast.BitsType):
            if not 1 <= te.width <= MAX_WIDTH:
                kind = "signed" if te.signed else "bit"
                raise error(f"{kind}<N> width must be between 1 and {MAX_WIDTH}, "
                            f"found {te.width}", te.span)
            return TInt(te.signed, te.width)
        if isinstance(te, ast.TupleType):
            return TTuple(tuple(self.resolve(t) for t in te.items))
        if isinstance(te, ast.FuncType):
            return TFunc(tuple(self.resolve(t) for t in te.params), self.resolve(te.result))
        name, args = te.name, te.args
        if name.startswith("'"):
            if self.generic is not None and name not in self.tvars:
                raise error(f"type variable {name} is not a parameter of type "
                            f"'{self.generic.name}'", te.span)
            return self.tvars.get(name, TVar(name))
        if name in GENERICS:
            n = GENERICS[name]
            if len(args) != n:
                plural = "s" if n > 1 else ""
                raise error(f"type '{name}' expects {n} type argument{plural}, "
                            f"found {len(args)}", te.span)
            ts = [self.resolve(a) for a in args]
            if name == "Vec":
                return TVec(ts[0])
            if name in ("Set", "Set64", "HashSet"):
                # tinyset's Set64 and hashset's HashSet: Sets, as compact as Spark keeps them
                # (a HashSet prints its elements in Rust's hash order, see TSet)
                return TSet(ts[0], hashed=name == "HashSet")
            if name == "Option":
                return TOption(ts[0])
            if name == "Map":
                return TMap(ts[0], ts[1])
            if name in ("Ref", "Intern"):
                # DDlog's shared immutable reference and interned value: each compares and
                # prints as the value, which is all it is here (ref_new, deref, intern and
                # ival give it back)
                return ts[0]
            return TGroup(ts[0], ts[1])
        if name in self.defs and self.defs[name].params:
            if not args:
                raise error(f"type '{name}' needs its type arguments "
                            f"({name}<{', '.join(self.defs[name].params)}>)", te.span)
            return self.instance(name, [self.resolve(a) for a in args], te.span)
        if name in PRIMITIVES or name in self.defs or name in self.done:
            if args:
                raise error(f"type '{name}' takes no type arguments, found {len(args)}", te.span)
            if name in PRIMITIVES:
                return PRIMITIVES[name]
            return self.typedef(name, te.span)
        raise error(f"unknown type '{name}'", te.span)


def _check_typedefs(prog: ast.Program) -> dict[str, ast.TypeDef]:
    defs = _unique(prog.typedefs, "type")
    # As in DDlog, a relation R is also a type R, with one constructor R{columns} (what
    # `r in R(..)` binds); a typedef or constructor of that name takes precedence.
    taken = set(defs) | {c.name for d in defs.values() for c in d.ctors or []}
    for r in prog.relations:
        distinct = len({c.name for c in r.columns}) == len(r.columns)  # else reported below
        reserved = r.name in GENERICS or r.name in OPTION_CTORS or r.record is not None
        if r.name not in taken and distinct and not reserved:
            defs[r.name] = ast.TypeDef(r.name, None, [ast.Constructor(r.name, r.columns,
                                                                      r.span)], r.span)
            taken.add(r.name)
    for d in defs.values():
        if d.name in PRIMITIVES or d.name in GENERICS:
            raise error(f"cannot redefine built-in type '{d.name}'", d.span)
        if len(set(d.params)) != len(d.params):
            raise error(f"type '{d.name}' names a type variable twice", d.span)
    ctors: dict[str, ast.Constructor] = {}
    for d in defs.values():
        for c in d.ctors or []:
            if c.name in OPTION_CTORS:
                raise error(f"constructor '{c.name}' is built in (it belongs to Option)", c.span)
            if c.name in ctors:
                raise error(f"duplicate constructor '{c.name}' "
                            f"(first declared at {ctors[c.name].span})", c.span)
            ctors[c.name] = c
            _unique(c.fields, "field", f"constructor '{c.name}'")
    return defs


def resolve_decls(prog: ast.Program) -> Decls:
    defs = _check_typedefs(prog)
    decls = Decls(generics={n: d for n, d in defs.items() if d.params})
    if "Any" not in defs:  # the program's one Any, which learns the types made Any
        decls.types["Any"] = TAny()
    res = _Resolver(defs, decls.types, instances=decls.instances)
    templates = [res.typedef(name, d.span) for name, d in defs.items()]
    for t in templates:
        if isinstance(t, TStruct):
            for c in t.ctors:
                decls.ctors.setdefault(c.name, (t, c))

    for r in _unique(prog.relations, "relation").values():
        if r.record is not None:
            decls.relations[r.name] = _of_type(r, res.resolve(r.record))
            continue
        _unique(r.columns, "column", f"relation '{r.name}'")
        cols = tuple((c.name, res.resolve(c.type)) for c in r.columns)
        decls.relations[r.name] = RelationInfo(r.name, r.role, cols, r.span, kind=r.kind)

    for f in _overloaded(prog.functions, decls, res):
        _unique(f.params, "parameter", f"function '{f.name}'")
        params = [(p.name, res.resolve(p.type)) for p in f.params]
        result = res.resolve(f.result)
        generic = any(has_vars(t) for _, t in params)
        if has_vars(result) and not generic:
            raise error(f"the result type {result} of function '{f.name}' has a type variable "
                        "that no parameter has", f.result.span)
        decls.functions[f.name] = FuncInfo(f, params, result, generic)
    return decls


def _of_type(r: ast.RelationDecl, t: Type) -> RelationInfo:
    """`relation R[T]`: the columns are the fields of T's constructor when T has one, the
    elements of T when it is a tuple, else one column holding T."""
    if isinstance(t, TStruct) and len(t.ctors) == 1:
        c = t.ctors[0]
        return RelationInfo(r.name, r.role, c.fields, r.span, ctor=c.name, kind=r.kind)
    if isinstance(t, TTuple) and t.items:
        cols = tuple((f"_{k}", item) for k, item in enumerate(t.items))
        return RelationInfo(r.name, r.role, cols, r.span, kind=r.kind, shape="tuple")
    return RelationInfo(r.name, r.role, (("_0", t),), r.span, kind=r.kind, shape="value")
