"""Match patterns: typing against the scrutinee, and the exhaustiveness check.

Constructor patterns are normalised: after checking, `PCtor.fields` lists every field of the
constructor in declaration order, named (`("x", p)`), a missing named field as `_`; a tuple
pattern has one item per element. Exhaustiveness uses the usefulness algorithm (Maranget,
"Warnings for pattern matching"): a match is exhaustive when a wildcard row would be useless
after its arms; otherwise a witness of a value no arm matches is shown.
"""
from __future__ import annotations

from dataclasses import dataclass

from ddlog.syntax import ast
from ddlog.errors import Span
from ddlog.check.resolve import Decls
from ddlog.check.scope import error, mismatch, type_literal
from ddlog.types import TBool, TCtor, TOption, TStruct, TTuple, Type


def option_ctor(t: TOption, name: str) -> TCtor:
    """Some{x: T} and None, as the constructors of Option<T>."""
    return TCtor("Some", (("x", t.elem),)) if name == "Some" else TCtor("None", ())


def lookup_ctor(decls: Decls, name: str, span: Span) -> tuple[Type | None, TCtor | None]:
    """(owning type, ctor) for a user constructor; (None, None) for Some/None (their type comes
    from context); an error for an unknown name."""
    if name in ("Some", "None"):
        return None, None
    if name not in decls.ctors:
        raise error(f"unknown constructor '{name}'", span)
    return decls.ctors[name]


def normalize_fields(ctor: TCtor, fields: list, span: Span, fill, kind: str) -> list:
    """Fields of a constructor literal/pattern as (name, item) in declaration order.

    Positional: the count must match. Named: names must exist, at most once; a missing one is
    `fill(name)` or, when `fill` is None, an error."""
    names = [n for n, _ in ctor.fields]
    if fields and all(n is None for n, _ in fields):
        if len(fields) != len(names):
            raise error(f"constructor '{ctor.name}' expects {len(names)} field"
                        f"{'' if len(names) == 1 else 's'}, found {len(fields)}", span)
        return list(zip(names, [f for _, f in fields]))
    if any(n is None for n, _ in fields):
        raise error(f"constructor '{ctor.name}': cannot mix named and positional fields", span)
    given: dict[str, object] = {}
    for n, item in fields:
        if n not in names:
            raise error(f"constructor '{ctor.name}' has no field '{n}'", item.span)
        if n in given:
            raise error(f"field '{n}' given twice in {kind} '{ctor.name}'", item.span)
        given[n] = item
    out = []
    for n in names:
        if n in given:
            out.append((n, given[n]))
        elif fill is None:
            raise error(f"missing field '{n}' in constructor '{ctor.name}'", span)
        else:
            out.append((n, fill(n)))
    return out


def check_pattern(p: ast.Pattern, t: Type, decls: Decls, bound: dict[str, Type]) -> None:
    """Type `p` against the scrutinee type `t` in place; add its variables to `bound`."""
    p.ty = t
    if p.declared is not None and decls.resolve(p.declared) != t:
        raise mismatch(t, decls.resolve(p.declared), p.span)
    if isinstance(p, ast.PWild):
        return
    if isinstance(p, ast.PVar):
        if p.name in bound:
            raise error(f"variable '{p.name}' is bound twice in the pattern", p.span)
        bound[p.name] = t
        return
    if isinstance(p, ast.PLit):
        found = type_literal(p.lit, t, p.span)
        if found != t:
            raise mismatch(t, found, p.span)
        return
    if isinstance(p, ast.PTuple):
        if not isinstance(t, TTuple):
            raise error(f"type mismatch: expected {t}, found a tuple pattern", p.span)
        if len(p.items) != len(t.items):
            raise error(f"type mismatch: expected {t}, found a tuple pattern of "
                        f"{len(p.items)} elements", p.span)
        for item, it in zip(p.items, t.items):
            check_pattern(item, it, decls, bound)
        return
    assert isinstance(p, ast.PCtor)
    owner, ctor = lookup_ctor(decls, p.ctor, p.span)
    if owner is None:
        if not isinstance(t, TOption):
            raise error(f"type mismatch: expected {t}, found Option constructor '{p.ctor}'",
                        p.span)
        ctor = option_ctor(t, p.ctor)
    elif owner.args and isinstance(t, TStruct) and t.name == owner.name:
        ctor = t.ctor(p.ctor)  # of the generic type's instance matched
    elif owner != t:
        raise error(f"type mismatch: expected {t}, found constructor '{p.ctor}' of type "
                    f"'{owner}'", p.span)
    p.fields = normalize_fields(ctor, p.fields, p.span, lambda n: ast.PWild(p.span), "pattern")
    for (_, sub), (_, ft) in zip(p.fields, ctor.fields):
        check_pattern(sub, ft, decls, bound)


# ---------------------------------------------------------------------------------------------
# Exhaustiveness


@dataclass(frozen=True)
class _Pat:
    """A pattern reduced to what exhaustiveness needs: a wildcard (ctor None) or a constructor
    (a user/Option constructor, "true"/"false", a tuple "()", or a literal) with sub-patterns."""

    ctor: str | None
    args: tuple["_Pat", ...] = ()


_WILD = _Pat(None)


def _reduce(p: ast.Pattern) -> _Pat:
    if isinstance(p, (ast.PWild, ast.PVar)):
        return _WILD
    if isinstance(p, ast.PLit):
        return _Pat(repr(p.lit.value) if p.lit.kind != "bool" else str(p.lit.value).lower())
    if isinstance(p, ast.PTuple):
        return _Pat("()", tuple(_reduce(i) for i in p.items))
    return _Pat(p.ctor, tuple(_reduce(f) for _, f in p.fields))


def _ctors(t: Type) -> list[tuple[str, tuple[Type, ...]]] | None:
    """All constructors of `t` with their argument types; None when infinitely many."""
    if isinstance(t, TBool):
        return [("false", ()), ("true", ())]
    if isinstance(t, TOption):
        return [("None", ()), ("Some", (t.elem,))]
    if isinstance(t, TStruct):
        return [(c.name, tuple(ft for _, ft in c.fields)) for c in t.ctors]
    if isinstance(t, TTuple):
        return [("()", t.items)]
    return None


def _missing(rows: list[tuple[_Pat, ...]], tys: list[Type]) -> tuple[_Pat, ...] | None:
    """A vector of values (as patterns) that no row matches, or None if the rows cover all."""
    if not tys:
        return None if rows else ()
    t, rest = tys[0], tys[1:]
    ctors = _ctors(t)
    used = {r[0].ctor for r in rows if r[0].ctor is not None}
    if ctors is not None and all(name in used for name, _ in ctors):
        for name, arg_tys in ctors:
            n = len(arg_tys)
            sub = [(r[0].args if r[0].ctor == name else (_WILD,) * n) + r[1:]
                   for r in rows if r[0].ctor in (name, None)]
            w = _missing(sub, list(arg_tys) + rest)
            if w is not None:
                return (_Pat(name, w[:n]),) + w[n:]
        return None
    w = _missing([r[1:] for r in rows if r[0].ctor is None], rest)
    if w is None:
        return None
    if ctors is None or not used:
        return (_WILD,) + w
    name, arg_tys = next(c for c in ctors if c[0] not in used)
    return (_Pat(name, (_WILD,) * len(arg_tys)),) + w


def _show(p: _Pat) -> str:
    if p.ctor is None:
        return "_"
    if p.ctor == "()":
        return "(" + ", ".join(_show(a) for a in p.args) + ")"
    if not p.args:
        return p.ctor
    return p.ctor + "{" + ", ".join(_show(a) for a in p.args) + "}"


def check_exhaustive(m: ast.MatchExpr, t: Type) -> None:
    rows = [(_reduce(a.pattern),) for a in m.arms]
    w = _missing(rows, [t])
    if w is not None:
        raise error(f"non-exhaustive match: pattern `{_show(w[0])}` is not covered "
                    f"(add its arm or a final `_ -> ...` arm)", m.span)

