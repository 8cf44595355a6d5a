"""Typing of expressions: fills `ty` on every node and inlines user function calls.

Every method returns the node that takes the place of its argument: usually the same node, but
an inlined body for a user call, a folded literal for `-1`, or a `key()` call for `g.key`.
Callers store what they get back (`b.left = self.infer(b.left, ...)`).

Typing is bidirectional in a small way: `hint` is the type the context expects; it only
decides the type of flexible expressions (untyped numeric literals, `None`, `[]`, see
tcutil.flexible) and is otherwise ignored; `check` compares the result with what is expected.
"""
from __future__ import annotations

import copy
import os
from typing import Callable

from ddlog.syntax import ast
from ddlog.syntax.blocks import PendingBlock, Return, assignment_span, written_value
from ddlog.builtins import lookup
from ddlog.check.calls import type_call
from ddlog.errors import Span, TypeCheckError
from ddlog.limits import MAX_INT_BITS
from ddlog.check.closures import Closures
from ddlog.check.inline import Inliner
from ddlog.check.patterns import (check_exhaustive, check_pattern, lookup_ctor, normalize_fields,
                            option_ctor)
from ddlog.check.resolve import Decls
from ddlog.check.scope import (ARITH_OPS, BIT_OPS, BOOL_OPS, CMP_OPS, SHIFT_OPS, Retype, Scope,
                               can_take, error, flexible, mismatch, replace_int, type_literal)
from ddlog.types import (BIGINT, BOOL, STRING, TFloat, TFunc, TGroup, TInt, TMap, TOption, TSet,
                         TStruct, TTuple, TVar, TVec, Type, has_vars, is_numeric, is_scalar,
                         is_wide, substitute, unify)

Validate = Callable[[Type, Span], None]

SHIFT_AMOUNT = TInt(False, 32)


class ExprChecker:
    def __init__(self, decls: Decls, inliner: Inliner):
        self.decls = decls
        self.inliner = inliner
        self.closures = Closures()  # the closures that are values (ddlog/check/closures.py)
        self.tvars: dict[str, Type] = {}  # type variables of the generic call being checked
        self.guessing = False  # in infer_same's look at other branches for a type

    def resolve(self, te: ast.TypeExpr) -> Type:
        return self.decls.resolve(te, self.tvars)

    # -- entry points ---------------------------------------------------------------------------

    def infer(self, e: ast.Expr, sc: Scope, hint: Type | None = None) -> ast.Expr:
        out = getattr(self, "_" + type(e).__name__)(e, sc, hint)
        assert out.ty is not None, out
        return out

    def check(self, e: ast.Expr, sc: Scope, expected: Type, what: str | None = None) -> ast.Expr:
        span = e.span  # the call site, even when the call is replaced by an inlined body
        out = self.infer(e, sc, expected)
        if out.ty != expected:
            raise mismatch(expected, out.ty, span, what)
        return out

    def infer_same(self, items: list[tuple[ast.Expr, Scope]], hint: Type | None,
                   validate: Validate | None = None, what: str | None = None,
                   branches: bool = False) -> list[ast.Expr]:
        """Type expressions that must share one type; non-flexible ones first, so that the
        others (literals) take their type. `validate` vets the first type found. `branches`:
        they are the branches of an `if` or `match`, whose first may be a generic
        constructor that says only part of its type (`Ok{v}`), the others the rest."""
        order = sorted(range(len(items)), key=lambda i: flexible(items[i][0], items[i][1].flex))
        out: list[ast.Expr] = [None] * len(items)  # type: ignore[list-item]
        first = order[0]
        spans = [e.span for e, _ in items]
        if branches and hint is None and not self.guessing and \
                self._generic_value(items[first][0]):
            # (not inside another's guess: nested guesses would take time exponential in
            # their depth)
            self.guessing = True
            try:
                hint = self._told_by_another(items, order)
            finally:
                self.guessing = False
        for i in order:
            e, sc = items[i]
            out[i] = self.infer(e, sc, hint if i == first else out[first].ty)
            if i == first:
                if validate:
                    validate(out[i].ty, spans[i])
            elif out[i].ty != out[first].ty:
                # Blame the later one in source order, as a reader goes left to right.
                if i < first:
                    raise mismatch(out[i].ty, out[first].ty, spans[first], what)
                raise mismatch(out[first].ty, out[i].ty, spans[i], what)
        return out

    def _generic_value(self, e: ast.Expr) -> bool:
        """Whether `e`'s value is written as a constructor of a generic type (`Ok{..}`)."""
        v = written_value(e)
        owner = self.decls.ctors.get(v.ctor, (None, None))[0] \
            if isinstance(v, ast.StructLit) else None
        return owner is not None and bool(owner.args)

    def _told_by_another(self, items: list[tuple[ast.Expr, Scope]],
                         order: list[int]) -> Type | None:
        """Where the first of expressions sharing a type has none of its own (`Ok{v}` in one
        branch, `Err{e}` in the other: each gives one type argument of Result), the type of
        the first of the others that has one; None when the first has its own."""
        e, sc = items[order[0]]
        try:
            self.infer(copy.deepcopy(e), sc)
            return None
        except TypeCheckError:
            pass
        found: Type | None = None
        for i in order[1:] + order[:1]:
            t = self._partly(*items[i])
            if t is not None and not has_vars(t):
                return t
            found = t if found is None else _merge(found, t) if t is not None else found
        return found if found is not None and not has_vars(found) else None

    def _partly(self, e: ast.Expr, sc: Scope) -> Type | None:
        """The type of `e` as far as it says (checked on a copy): a generic constructor's
        with the type variables its fields leave open; None when it says none."""
        e = copy.deepcopy(e)
        try:
            return self.infer(e, sc).ty
        except TypeCheckError:
            pass
        if not isinstance(e, ast.StructLit) or e.ctor in ("Some", "None"):
            return None
        try:
            owner, ctor = lookup_ctor(self.decls, e.ctor, e.span)
            if not has_vars(owner):
                return None
            bound: dict[str, Type] = {}
            fields = normalize_fields(ctor, e.fields, e.span, None, "constructor")
            for (_, x), (_, ft) in zip(fields, ctor.fields):
                if not unify(ft, self.infer(x, sc).ty, bound):
                    return None
            return substitute(owner, bound)
        except TypeCheckError:
            return None

    def is_function(self, name: str, argc: int) -> bool:
        """Whether `name` is a user function or a built-in taking `argc` arguments."""
        f = self.decls.functions.get(name)
        if f is not None:
            return len(f.params) == argc
        if name in self.decls.overloads:
            return any(len(self.decls.functions[n].params) == argc
                       for n in self.decls.overloads[name])
        b = lookup(name, argc)
        return b is not None and argc in b.arities

    # -- leaves ---------------------------------------------------------------------------------

    def _Var(self, e: ast.Var, sc: Scope, hint):
        if e.name not in sc.vars:
            raise error(sc.unbound(e.name), e.span)
        e.ty = sc.vars[e.name]
        if e.name in sc.flex and hint is not None and hint != e.ty and can_take(e.ty, hint):
            raise Retype(e.name, hint)
        return e

    def _AtBinding(self, e: ast.AtBinding, sc, hint):
        raise error(f"`{e.var}@..` binds a variable only as an argument of an atom in a rule's "
                    "body", e.span)

    def _VarDecl(self, e: ast.VarDecl, sc, hint):
        raise error(f"`var {e.name}` declares a variable only in the pattern of a rule's body "
                    f"item, as in `(_, var {e.name}) = e`", e.span)

    def _Wildcard(self, e: ast.Wildcard, sc, hint):
        raise error("'_' is only allowed as an argument of a body atom or in a pattern", e.span)

    def _Lit(self, e: ast.Lit, sc, hint):
        type_literal(e, hint)
        return e

    def _Lambda(self, e: ast.Lambda, sc, hint):
        return self.closures.make(self, e, sc, hint)  # a closure as a value

    def _Interp(self, e: ast.Interp, sc, hint):
        for i, part in enumerate(e.parts):
            if not isinstance(part, str):
                e.parts[i] = self.stringable(part, sc)
        e.ty = STRING
        return e

    def stringable(self, part: ast.Expr, sc: Scope) -> ast.Expr:
        """`part` typed, where a string is made of it: a bool, number or string, or a value
        of a type the program's `function to_string(x: T): string` converts (as DDlog
        does)."""
        span = part.span
        # the program's to_string functions (a module's is named `m::to_string`)
        users = [f for name, f in self.decls.functions.items()
                 if name.rsplit("::", 1)[-1].split("#")[0] == "to_string"
                 and len(f.params) == 1]
        original = copy.deepcopy(part) if users else None
        part = self.infer(part, sc)
        if is_scalar(part.ty):
            return part
        if isinstance(part.ty, TFunc):
            return ast.Call("closure#show", [part], span, ty=STRING)
        for f in users:
            if f.params[0][1] == part.ty:
                return self.infer(ast.Call(f.decl.name, [original], span), sc)
        raise error(f"cannot convert a value of type {part.ty} to a string: expected bool, an "
                    f"integer, a float or string, or a type with a `function to_string(x: "
                    f"{part.ty}): string`", span)

    # -- operators ------------------------------------------------------------------------------

    def _UnOp(self, e: ast.UnOp, sc: Scope, hint):
        opnd = e.operand
        if e.op == "-" and isinstance(opnd, ast.Lit) and opnd.kind in ("int", "float") \
                and opnd.width is None:
            # Fold `-5` into one literal so the range check sees the negative value.
            lit = ast.Lit(-opnd.value, opnd.kind, e.span)
            type_literal(lit, hint)
            return lit
        if e.op == "not":
            e.operand = self.check(opnd, sc, BOOL, "operand of 'not'")
        else:
            e.operand = self.infer(opnd, sc, hint)
            t = e.operand.ty
            ok = is_numeric(t) if e.op == "-" else isinstance(t, TInt)
            if not ok:
                want = "a number" if e.op == "-" else "an integer"
                raise error(f"operator '{e.op}' expects {want}, found {t}", opnd.span)
        e.ty = e.operand.ty
        return e

    def _BinOp(self, e: ast.BinOp, sc: Scope, hint):
        op = e.op
        what = f"operands of '{op}'"
        if op in BOOL_OPS:
            e.left = self.check(e.left, sc, BOOL, what)
            e.right = self.check(e.right, sc, BOOL, what)
            e.ty = BOOL
            return e
        if op in SHIFT_OPS:
            lspan, rspan = e.left.span, e.right.span
            e.left = self.infer(e.left, sc, hint if isinstance(hint, TInt) else None)
            _want(op, "an integer", isinstance(e.left.ty, TInt), e.left.ty, lspan)
            # DDlog's shift amount is a bit<32> (a literal becomes one; `-1` is out of range)
            e.right = self.infer(e.right, sc, SHIFT_AMOUNT)
            _want(op, "a bit<32> (u32) shift amount", e.right.ty == SHIFT_AMOUNT, e.right.ty,
                  rspan, "; convert it with `as u32`" if isinstance(e.right.ty, TInt) else "")
            e.ty = e.left.ty
            return e
        if op in CMP_OPS:
            # every value compares, closures too (by which closure and what it captured)
            e.left, e.right = self.infer_same([(e.left, sc), (e.right, sc)], None, None, what)
            e.ty = BOOL
            return e
        if op in ARITH_OPS:
            def validate(t: Type, span: Span) -> None:
                extra = " (use ++ to concatenate strings)" if t == STRING and op == "+" else ""
                _want(op, "numbers", is_numeric(t), t, span, extra)
            h = hint if is_numeric(hint) else None
        elif op in BIT_OPS:
            def validate(t: Type, span: Span) -> None:
                _want(op, "integers", isinstance(t, TInt), t, span)
            h = hint if isinstance(hint, TInt) else None
        elif op == "++":
            def validate(t: Type, span: Span) -> None:
                bits = isinstance(t, TInt) and not t.signed and t.width is not None
                _want(op, "strings, Vecs or bit<N>s", t == STRING or isinstance(t, TVec) or bits,
                      t, span)
            h = hint
            if not flexible(e.left, sc.flex):
                return self._concat(e, sc, hint, validate, what)
        else:
            raise error(f"unknown operator '{op}'", e.span)
        e.left, e.right = self.infer_same([(e.left, sc), (e.right, sc)], h, validate, what)
        e.ty = e.left.ty
        return e

    def _concat(self, e: ast.BinOp, sc: Scope, hint, validate, what: str) -> ast.Expr:
        """`a ++ b` with `a` typed first: strings (a bool, number or string after a string is
        converted, as DDlog does: `s ++ n` is `"${s}${n}"`) or Vecs of one type."""
        lspan = e.left.span
        e.left = self.infer(e.left, sc, hint)
        validate(e.left.ty, lspan)
        if e.left.ty == STRING:
            e.right = self.stringable(e.right, sc)
            if e.right.ty != STRING:
                return ast.Interp([e.left, e.right], e.span, ty=STRING)
        elif isinstance(e.left.ty, TInt):
            # bit vectors: `a ++ b` is a's bits then b's, a bit<N + M>
            rspan = e.right.span
            e.right = self.infer(e.right, sc)
            validate(e.right.ty, rspan)
            if not isinstance(e.right.ty, TInt):
                raise mismatch(e.left.ty, e.right.ty, rspan, what)
            width = e.left.ty.width + e.right.ty.width
            if width > MAX_INT_BITS:
                raise error(f"`++` of {e.left.ty} and {e.right.ty} makes a bit<{width}>, wider "
                            f"than the widest integer, bit<{MAX_INT_BITS}>", e.span)
            e.ty = TInt(False, width)
            return e
        else:
            e.right = self.check(e.right, sc, e.left.ty, what)
        e.ty = e.left.ty
        return e

    def _Ascribe(self, e: ast.Ascribe, sc: Scope, hint):
        return self.check(e.expr, sc, self.resolve(e.target), "the type it is given")

    def _Cast(self, e: ast.Cast, sc: Scope, hint):
        target = self.resolve(e.target)
        e.expr = self.infer(e.expr, sc)
        src = e.expr.ty
        if src != target and not (is_numeric(src) and is_numeric(target)):
            raise error(f"cannot cast {src} to {target}: casts are only between numeric types",
                        e.span)
        if is_wide(target) and isinstance(src, TFloat):
            raise error(f"cannot cast {src} to {target}: a float converts to integers of up to "
                        f"64 bits here (cast it to s64 first)", e.span)
        e.ty = target
        return e

    # -- calls ----------------------------------------------------------------------------------

    def _Call(self, e: ast.Call, sc: Scope, hint):
        if isinstance(sc.vars.get(e.func), TFunc) and not e.method:
            return self._closure_call(e, sc)
        # a module's function used unqualified (`import url`, then `b.to_string()`) is
        # qualified by then (ddlog/syntax/modules.py): the built-in of its name is still a
        # candidate, as DDlog overloads across modules
        builtin = lookup(e.func, len(e.args))
        module_name = builtin is None and "::" in e.func and (
            e.func in self.decls.functions or e.func in self.decls.overloads)
        if module_name:
            builtin = lookup(e.func.rsplit("::", 1)[-1], len(e.args))
        if e.func in self.decls.overloads and e.func not in self.decls.functions:
            chosen = self._overload(e, sc, builtin is not None)
            if chosen is not None:
                e.func = chosen
        f = self.decls.functions.get(e.func)
        if f is not None and (builtin is None or self._fits_first(e, f, sc)):
            return self._user_call(e, f, sc)
        if builtin is None:
            raise error(f"unknown function '{e.func}'", e.span)
        if module_name:
            e.func = e.func.rsplit("::", 1)[-1]  # the built-in of the module function's name
        e.ty = type_call(self, e, sc, builtin, hint)
        return e

    def _type_or_none(self, a: ast.Expr, sc: Scope) -> Type | None:
        """The type of `a` (checked on a copy), or None when it has none of its own."""
        try:
            return self.infer(copy.deepcopy(a), sc).ty
        except TypeCheckError:
            return None

    def _fits_first(self, e: ast.Call, f, sc: Scope) -> bool:
        """Whether the user function `f`, which shares its name with a built-in one, is what
        the call means: DDlog tells functions of one name apart by their parameters' types,
        so `r.map(f)` of a Result is ddlog_std's function and `v.map(f)` of a Vec the
        built-in one."""
        if not e.args or not f.params:
            return True
        first = self._type_or_none(e.args[0], sc)  # None: a `None` or `[]`, not of f's
        return first is not None and unify(f.params[0][1], first, {})

    def _overload(self, e: ast.Call, sc: Scope, builtin: bool = False) -> str | None:
        """Which of the functions named `e.func` the call means: the one whose parameters'
        types the arguments have (or, for untyped literals, can take; a generic one's, whose
        variables they bind; a closure fits any). None when none does and a built-in function
        has the name (the call is then the built-in's)."""
        types = [None if isinstance(a, ast.Lambda) else self._type_or_none(a, sc)
                 for a in e.args]
        fits = []
        for name in self.decls.overloads[e.func]:
            params = [t for _, t in self.decls.functions[name].params]
            bound: dict[str, Type] = {}
            if len(params) == len(types) and all(
                    t is None or p == t or (flexible(a, sc.flex) and can_take(t, p))
                    or (has_vars(p) and unify(p, t, bound))
                    for p, t, a in zip(params, types, e.args)):
                fits.append(name)
        exact = [n for n in fits if [t for _, t in self.decls.functions[n].params] == types]
        if len(exact) == 1 or len(fits) == 1:
            return (exact or fits)[0]
        unsaid = any(t is None and not isinstance(a, ast.Lambda) for t, a in zip(types, e.args))
        if builtin and (not fits or unsaid):
            return None  # the built-in's, or a call whose arguments do not say which
        shown = ", ".join("?" if t is None else str(t) for t in types)
        raise error(f"{'several' if fits else 'none'} of the functions '{e.func}' take"
                    f"{'' if fits else 's'} arguments of types ({shown})", e.span)

    def _closure_call(self, e: ast.Call, sc: Scope) -> ast.Expr:
        """`f(x)` where the variable f holds a closure (ddlog/check/closures.py)."""
        t: TFunc = sc.vars[e.func]
        if len(e.args) != len(t.params):
            raise error(f"'{e.func}' is a closure of type {t}: it takes {len(t.params)} "
                        f"argument{'' if len(t.params) == 1 else 's'}, found {len(e.args)}",
                        e.span)
        args = [self.check(a, sc, pt, f"argument {i + 1} of the closure '{e.func}'")
                for i, (a, pt) in enumerate(zip(e.args, t.params))]
        fn = ast.Var(e.func, e.span, t)
        return self.closures.call(fn, args, e.span, t.result)

    def _user_call(self, e: ast.Call, f, sc: Scope) -> ast.Expr:
        sig = ", ".join(f"{n}: {t}" for n, t in f.params)
        if f.decl.body is None:
            file = os.path.splitext(f.decl.span.file)[0]
            own = f.decl.name.rsplit("::", 1)[-1]
            raise error(f"extern function '{e.func}' has no body: DDlog runs it as Rust, which "
                        f"the engine cannot run on Spark; write its body in DDlog, as "
                        f"`function {own}({sig}): {f.result} {{ ... }}` in {file}.extern.dl",
                        e.span)
        if len(e.args) != len(f.params):
            raise error(f"function '{e.func}' expects {len(f.params)} argument"
                        f"{'' if len(f.params) == 1 else 's'} ({sig}), found {len(e.args)}",
                        e.span)
        if f.generic:
            return self._generic_call(e, f, sc)
        args = [self.check(a, sc, t, f"argument '{n}' of function '{e.func}'")
                for a, (n, t) in zip(e.args, f.params)]
        assert f.body is not None, f"function {e.func} used before it was checked"
        return self.inliner.inline(f.body, [n for n, _ in f.params], args, e, f.size)

    def _generic_call(self, e: ast.Call, f, sc: Scope) -> ast.Expr:
        """A generic function: its type variables take the arguments' types, and its body is
        checked with them (from the parsed body: each call checks its own copy)."""
        bound: dict[str, Type] = {}
        args: list[ast.Expr] = list(e.args)
        # arguments whose type is their own first (`None`, `[]` and literals take theirs from
        # the type variables the others bind)
        # and closures last, their parameters' types bound by the others
        for i in sorted(range(len(args)), key=lambda i: (isinstance(args[i], ast.Lambda),
                                                         flexible(args[i], sc.flex))):
            n, t = f.params[i]
            what = f"argument '{n}' of function '{e.func}'"
            span, known = args[i].span, substitute(t, bound)
            if not has_vars(known):
                args[i] = self.check(args[i], sc, known, what)
                continue
            closure = isinstance(known, TFunc) and not any(map(has_vars, known.params))
            args[i] = self.infer(args[i], sc, known if closure else None)
            if not unify(t, args[i].ty, bound):
                raise mismatch(known, args[i].ty, span, what)
        params = [(n, substitute(t, bound)) for n, t in f.params]
        result = substitute(f.result, bound)
        outer, self.tvars = self.tvars, bound
        try:
            sc_f = Scope(dict(params), lambda v: f"unknown variable '{v}' in function "
                                                 f"'{e.func}'")
            body = self.check(copy.deepcopy(f.decl.body), sc_f, result,
                              f"result of function '{e.func}'")
        finally:
            self.tvars = outer
        return self.inliner.inline(body, [n for n, _ in params], args, e)

    def _FieldAccess(self, e: ast.FieldAccess, sc: Scope, hint):
        e.expr = self.infer(e.expr, sc)
        t = e.expr.ty
        if isinstance(t, TGroup) and e.name == "key":
            # `g.key` reads like a field; it is the group method `key()`.
            return self._Call(ast.Call("key", [e.expr], e.span, method=True), sc, hint)
        e.ty = self.field_type(t, e.name, e.span)
        return e

    def field_type(self, t: Type, name: str, span: Span) -> Type:
        """The type of field `name` (a tuple index "0", "1", ...) of a value of type `t`."""
        if isinstance(t, TTuple) and name.isdigit():
            i = int(name)
            if i >= len(t.items):
                raise error(f"tuple index {i} out of range for {t} "
                            f"({len(t.items)} elements)", span)
            return t.items[i]
        if isinstance(t, TStruct):
            types = [c.field_type(name) for c in t.ctors]
            if all(ft is None for ft in types):
                raise error(f"type '{t}' has no field '{name}'", span)
            for c, ft in zip(t.ctors, types):
                if ft is None:
                    raise error(f"field '{name}' is not in every constructor of '{t}' "
                                f"(constructor '{c.name}' lacks it); use match", span)
                if ft != types[0]:
                    raise error(f"field '{name}' has different types in the constructors "
                                f"of '{t}'; use match", span)
            return types[0]
        raise error(f"type {t} has no field '{name}'", span)

    # -- blocks ---------------------------------------------------------------------------------

    def _PendingBlock(self, e: PendingBlock, sc: Scope, hint):
        if e.returns and not e.assigns:
            self._Return(e, sc, hint)
        for m in e.assigns:
            if m not in sc.vars:
                raise error(f"assignment to unknown variable '{m}' (declare it with "
                            f"`var {m} = ...`)", assignment_span(e.statements, m))
        names = ", ".join(f"'{m}'" for m in e.assigns)
        raise error(f"this block assigns {names}, declared outside it: such a block is a "
                    f"branch of an `if` statement in the block that declares "
                    f"{'it' if len(e.assigns) == 1 else 'them'}, and has no value", e.span)

    def _Return(self, e: PendingBlock | Return, sc: Scope, hint):
        raise error("`return` is allowed in a function's or closure's body, not in a rule or "
                    "another expression outside a function", e.span)

    def _Let(self, e: ast.Let, sc: Scope, hint):
        """`var x = v; body`: checked, then `v` is substituted for `x` in `body`. A variable
        bound to untyped literals takes the type of its first use (as in rules, Scope.flex)."""
        if e.rebind:
            if e.var not in sc.vars:
                raise error(f"assignment to unknown variable '{e.var}' (declare it with "
                            f"`var {e.var} = ...`)", e.span)
            want: Type | None = sc.vars[e.var]
            if e.var in sc.flex and not flexible(e.value, sc.flex):
                # `var y = 0; y = x + 1;`: y takes the type of what it is assigned
                ty = self.infer(copy.deepcopy(e.value), sc).ty
                if ty != want and can_take(want, ty):
                    raise Retype(e.var, ty)
        else:
            want = self.resolve(e.annotation) if e.annotation is not None else None
        if want is None and flexible(e.value, sc.flex):
            pristine = copy.deepcopy(e)
            try:
                return self._let(e, sc, hint, None, flex=True)
            except Retype as r:
                if r.var != e.var:
                    raise
                return self._let(pristine, sc, hint, r.ty, flex=False)
            except TypeCheckError as err:
                # `var v = [-5, 0]; .. v.find(|y| y == x)` with x: s64: the literals' default
                # bigint was wrong where a use wants another integer type for the elements
                retyped = self.defaulted(pristine.value, sc, err) or \
                    self.first_use(pristine, sc, hint) or \
                    (self.empty_use(pristine, sc, hint) if _empty_kind(pristine.value) else None)
                if retyped is None:
                    raise
                return self._let(pristine, sc, hint, retyped, flex=False)
        if want is None and _empty_kind(e.value) is not None:
            pristine = copy.deepcopy(e)
            try:
                return self._let(e, sc, hint, None, flex=False)
            except TypeCheckError:
                want = self.empty_use(pristine, sc, hint)
                if want is None:
                    raise
                return self._let(pristine, sc, hint, want, flex=False)
        return self._let(e, sc, hint, want, flex=False)

    def empty_use(self, e: ast.Let, sc: Scope, hint) -> Type | None:
        """`var s = set_empty(); for (x in xs) { s.insert(x) }; s`: an empty collection whose
        elements' type nothing around it says takes the type its uses need, found by checking
        the same code with a guess (elements of bigint) and taking what a mismatch wanted."""
        kind = _empty_kind(e.value)
        guess: Type = TMap(BIGINT, BIGINT) if kind is TMap else kind(BIGINT)
        for _ in range(3):  # a Map's key, then its value
            try:
                self._let(copy.deepcopy(e), sc, hint, guess, flex=False)
                return guess
            except TypeCheckError as err:
                if err.types is None:
                    return None
                whole = [t for t in err.types if isinstance(t, kind) and t != guess]
                if whole:
                    new = whole[0]
                elif BIGINT in err.types:
                    new = replace_int(guess, BIGINT, next(t for t in err.types if t != BIGINT))
                else:
                    return None
                if new == guess:
                    return None
                guess = new
        return None

    def first_use(self, e: ast.Let, sc: Scope, hint) -> Type | None:
        """`var low = 'hffffffffffffffff; .. low = price` with price: u64: a literal beyond
        bigint's range (where its default type fails) takes the type of the variable's first
        use, found by checking the same code with the literal as 0."""
        if not (isinstance(e.value, ast.Lit) and e.value.kind == "int" and e.value.width is None):
            return None
        trial = copy.deepcopy(e)
        trial.value.value = 0
        try:
            self._let(trial, sc, hint, None, flex=True)
        except Retype as r:
            return r.ty if r.var == e.var else None
        except TypeCheckError:
            return None
        return None

    def defaulted(self, value: ast.Expr, sc: Scope, err: TypeCheckError) -> Type | None:
        """The type `value`'s untyped literals take when a mismatch between bigint (their
        default) and another integer type arose from them: that other type."""
        pair = err.types
        if pair is None or BIGINT not in pair:
            return None
        other = pair[1] if pair[0] == BIGINT else pair[0]
        if not isinstance(other, TInt):
            return None
        default = self.infer(copy.deepcopy(value), sc).ty
        retyped = replace_int(default, BIGINT, other)
        return retyped if retyped != default and can_take(default, retyped) else None

    def _let(self, e: ast.Let, sc: Scope, hint, want: Type | None, flex: bool) -> ast.Expr:
        what = f"assignment to '{e.var}'" if e.rebind else f"variable '{e.var}'"
        value = self.check(e.value, sc, want, what) if want is not None \
            else self.infer(e.value, sc)
        inner = sc.extend({e.var: value.ty})
        if flex:
            inner.flex = inner.flex | {e.var}
        body = self.infer(e.body, inner, hint)
        return self.inliner.inline(body, [e.var], [value])

    def _With(self, e: ast.With, sc: Scope, hint):
        e.expr = self.infer(e.expr, sc)
        ft = self.field_type(e.expr.ty, e.name, e.span)
        e.value = self.check(e.value, sc, ft, f"field '{e.name}'")
        e.ty = e.expr.ty
        return e

    # -- constructions --------------------------------------------------------------------------

    def _TupleLit(self, e: ast.TupleLit, sc: Scope, hint):
        hints = hint.items if isinstance(hint, TTuple) and len(hint.items) == len(e.items) \
            else [None] * len(e.items)
        e.items = [self.infer(i, sc, h) for i, h in zip(e.items, hints)]
        e.ty = TTuple(tuple(i.ty for i in e.items))
        return e

    def _VecLit(self, e: ast.VecLit, sc: Scope, hint):
        elem = hint.elem if isinstance(hint, (TVec, TSet, TMap)) else None
        if not e.items:
            if elem is None:
                raise error("cannot infer the type of an empty vector `[]`", e.span)
        else:
            what = "map entries" if e.map else "vector elements"
            e.items = self.infer_same([(i, sc) for i in e.items], elem, None, what)
            elem = e.items[0].ty
        if isinstance(hint, TMap) or e.map:
            if not (isinstance(elem, TTuple) and len(elem.items) == 2):
                raise mismatch(hint, TVec(elem), e.span)
            e.ty = TMap(*elem.items)
        else:
            e.ty = TSet(elem) if isinstance(hint, TSet) else TVec(elem)
        return e

    def _StructLit(self, e: ast.StructLit, sc: Scope, hint):
        owner, ctor = lookup_ctor(self.decls, e.ctor, e.span)
        if owner is None:  # Some / None
            if e.ctor == "None":
                if e.fields:
                    raise error("constructor 'None' has no fields", e.span)
                if hint is None:
                    raise error("cannot infer the type of None", e.span)
                if not isinstance(hint, TOption):
                    raise error(f"type mismatch: expected {hint}, found None", e.span)
                e.ty = hint
                return e
            inner = hint.elem if isinstance(hint, TOption) else None
            e.fields = normalize_fields(option_ctor(TOption(BOOL), "Some"), e.fields, e.span,
                                        None, "constructor")
            e.fields = [("x", self.infer(e.fields[0][1], sc, inner))]
            e.ty = TOption(e.fields[0][1].ty)
            return e
        if owner.args and isinstance(hint, TStruct) and hint.name == owner.name:
            owner, ctor = hint, hint.ctor(ctor.name)  # `Ok{x}` where a Result<A, B> is due
        e.fields = normalize_fields(ctor, e.fields, e.span, None, "constructor")
        if has_vars(owner):
            return self._generic_ctor(e, owner, ctor, sc)
        e.fields = [(n, self.check(x, sc, ft, f"field '{n}' of '{ctor.name}'"))
                    for (n, x), (_, ft) in zip(e.fields, ctor.fields)]
        e.ty = owner
        return e

    def _generic_ctor(self, e: ast.StructLit, template: TStruct, ctor, sc: Scope) -> ast.Expr:
        """A constructor of a generic type where the context says no type: its type arguments
        are what its fields' values bind the type's variables to."""
        bound: dict[str, Type] = {}
        fields = []
        for (n, x), (_, ft) in zip(e.fields, ctor.fields):
            want = substitute(ft, bound)
            x = self.infer(x, sc, None if has_vars(want) else want)
            if not unify(ft, x.ty, bound):
                raise mismatch(want, x.ty, x.span, f"field '{n}' of '{ctor.name}'")
            fields.append((n, x))
        unbound = [str(v) for v in template.args if has_vars(substitute(v, bound))]
        if unbound:
            raise error(f"cannot infer the type of '{ctor.name}{{..}}' ({template}): nothing "
                        f"gives {', '.join(unbound)}; say it with `: {template.name}<..>` or "
                        "where the value goes", e.span)
        e.fields, e.ty = fields, substitute(template, bound)
        return e

    def _IfExpr(self, e: ast.IfExpr, sc: Scope, hint):
        e.cond = self.check(e.cond, sc, BOOL, "condition of 'if'")
        e.then, e.other = self.infer_same([(e.then, sc), (e.other, sc)], hint, None,
                                          "both branches of 'if' must have the same type",
                                          branches=True)
        e.ty = e.then.ty
        return e

    def _MatchExpr(self, e: ast.MatchExpr, sc: Scope, hint):
        e.scrutinee = self.infer(e.scrutinee, sc)
        t = e.scrutinee.ty
        if not e.arms:
            raise error("a match needs at least one arm", e.span)
        scopes = []
        for arm in e.arms:
            bound: dict[str, Type] = {}
            check_pattern(arm.pattern, t, self.decls, bound)
            scopes.append(sc.extend(bound))
        bodies = self.infer_same([(a.body, s) for a, s in zip(e.arms, scopes)], hint, None,
                                 "all arms of 'match' must have the same type", branches=True)
        for arm, body in zip(e.arms, bodies):
            arm.body = body
        check_exhaustive(e, t)
        e.ty = bodies[0].ty
        return e


def _merge(a: Type | None, b: Type | None) -> Type | None:
    """What two types known in part (type variables where nothing said) say together:
    `Result<u8, 'E>` and `Result<'V, string>` are `Result<u8, string>`; None if they differ."""
    if a is None or b is None:
        return None
    if isinstance(a, TVar):
        return b
    if isinstance(b, TVar):
        return a
    if isinstance(a, TStruct) and isinstance(b, TStruct) and a.name == b.name and a.args:
        args = [_merge(x, y) for x, y in zip(a.args, b.args)]
        if any(x is None for x in args):
            return None
        return substitute(a, {v.name: x for v, x in zip(a.args, args) if isinstance(v, TVar)})
    return a if a == b else None


# the functions that make an empty collection of the type the context gives
_EMPTY = {"vec_empty": TVec, "vec_with_capacity": TVec, "set_empty": TSet, "map_empty": TMap}


def _empty_kind(e: ast.Expr) -> type | None:
    """TVec, TSet or TMap for `[]`, `vec_empty()`, `set_empty()`, `map_empty()`."""
    if isinstance(e, ast.VecLit) and not e.items:
        return TMap if e.map else TVec
    if isinstance(e, ast.Call) and e.func in _EMPTY:
        return _EMPTY[e.func]
    return None


def _want(op: str, what: str, ok: bool, t: Type, span: Span, extra: str = "") -> None:
    if not ok:
        raise error(f"operator '{op}' expects {what}, found {t}{extra}", span)
