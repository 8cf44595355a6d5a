"""`import`: DDlog's standard modules, and user modules read from files.

DDlog's standard library (`ddlog_std`, `vec`, `set`, `map`, `group`, `string`, ...) is built
into the dialect (ddlog/builtins/): importing one of its modules is accepted and changes
nothing, and a name qualified by one (`vec::len`, `ddlog_std::Some`) is the built-in name.

A user module `import a::b` is the file `a/b.dl` under one of the library roots, as DDlog's
compiler finds it: the main program's directory, then each root given (`-L DIR`, in order),
and last, the importing file's own directory (so that a module may import its neighbours
by their own names). Its declarations
join the program under names qualified by the module path (`a::b::Edge`, `a::b::Shape`,
`a::b::f`); inside the module they are written unqualified, and the importing file writes
them qualified, or through an alias (`import a::b as c` lets it write `c::Edge`). This is
DDlog's scheme, and what `dump` prints: `a::b::Edge{...}`.

DDlog runs an `extern function` as Rust code from `X.rs` beside `X.dl`; Spark cannot, so here
the body of each comes from a function of the same name and parameters written in DDlog in
`X.extern.dl` beside `X.dl` (`extern_bodies`), whose other declarations join module X. An
extern function without one is refused where it is called.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Callable

from ddlog.errors import ParseError
from ddlog.syntax import ast

STD_MODULES = frozenset({
    "ddlog_std", "std", "vec", "set", "map", "group", "string", "internment", "intern",
    "hashset", "tinyset", "fp", "debug", "log", "base64",
})

# A library module's function that has another name among the built-ins: tinyset's Set64 is a
# Set, so `TS::empty()` is `set_empty()` and `s1.TS::intersection(s2)` `set_intersection`;
# hashset's HashSet is a Set too
STD_NAMES: dict[str, dict[str, str]] = {
    "tinyset": {"empty": "set_empty", "singleton": "set_singleton", "union": "set_union",
                "intersection": "set_intersection", "difference": "set_difference",
                "unions": "set_unions", "group_to_set": "to_set"},
    "base64": {"encode": "base64_encode", "decode": "base64_decode"},
    "hashset": {"hashset_singleton": "set_singleton", "hashset_empty": "set_empty",
                "hashset_union": "set_union", "hashset_intersection": "set_intersection",
                "hashset_difference": "set_difference", "hashset_unions": "set_unions",
                "group_hashset_unions": "union", "to_hashset": "to_set", "hashset_size": "size",
                "hashset_contains": "contains", "hashset_is_empty": "is_empty",
                "hashset_nth": "nth", "hashset_to_vec": "to_vec", "hashset_insert": "insert",
                "hashset_remove": "remove", "hashset_insert_imm": "insert_imm",
                "hashset_arg_min": "arg_min", "hashset_arg_max": "arg_max"},
}

Parse = Callable[[str, str], ast.Program]  # (text, file) -> program
Read = Callable[[str], str]


def resolve_imports(prog: ast.Program, parse: Parse, read: Read,
                    roots: tuple[str, ...] = ()) -> ast.Program:
    """The program with its user modules' declarations added (qualified), `import`
    declarations dropped and standard-library qualifiers removed. `roots`: the library
    directories given besides the main program's."""
    read_in: dict[str, tuple[ast.Program, dict[str, str]]] = {}  # path -> module, aliases
    order: list[str] = []
    sources: dict[str, str] = {}
    prog = extern_bodies(prog, parse, read, sources)
    search = (os.path.dirname(prog.file), *roots)
    aliases = _imports(prog, parse, read, read_in, order, sources, [], search)
    # every module read first, so that two modules importing each other see each other's names
    names = {path: _declared(module, path + "::") for path, (module, _) in read_in.items()}
    loaded = {path: _qualify(module, path + "::", inner, _visible(module, names))
              for path, (module, inner) in read_in.items()}
    if aliases or _renames(prog) or any("::" in text for text in [prog.source,
                                                                   *sources.values()]):
        main = _qualify(prog, "", aliases, _visible(prog, names))
    else:  # no name to expand or qualify: spare a large program the walk over every rule
        main = dataclasses.replace(prog, decls=[d for d in prog.decls
                                                if not isinstance(d, ast.Import)])
    decls = [d for m in order for d in loaded[m].decls] + main.decls
    return ast.Program(decls, prog.file, prog.source, sources)


def _imports(prog: ast.Program, parse: Parse, read: Read,
             read_in: dict[str, tuple[ast.Program, dict[str, str]]], order: list[str],
             sources: dict[str, str], active: list[str],
             search: tuple[str, ...]) -> dict[str, str]:
    """Read what `prog` imports (depth first, each module once, a module importing one that
    is being read, as DDlog's may, reads nothing more), each from the first of the `search`
    directories (then `prog`'s own) that holds it; returns the aliases it may use: alias ->
    module path."""
    aliases: dict[str, str] = {}
    for imp in (d for d in prog.decls if isinstance(d, ast.Import)):
        path = imp.module
        if path.split("::")[0] in STD_MODULES:
            if imp.alias:  # `import tinyset as TS`: `TS::Set64` is the built-in Set64
                aliases[imp.alias] = path
            continue
        aliases[imp.alias or path] = path
        if path in read_in or path in active:
            continue
        file, text = _module_file(path, (*search, os.path.dirname(prog.file)), read, imp,
                                  prog.source)
        sources[file] = text
        module = extern_bodies(parse(text, file), parse, read, sources)
        inner = _imports(module, parse, read, read_in, order, sources, active + [path], search)
        read_in[path] = (module, inner)
        order.append(path)
    return aliases


def _module_file(path: str, dirs: tuple[str, ...], read: Read, imp: ast.Import,
                 source: str) -> tuple[str, str]:
    """The file of module `path` in the first of `dirs` that holds it, and its text."""
    tried: list[str] = []
    for d in dict.fromkeys(dirs):  # each directory once, in order
        file = os.path.join(d, *path.split("::")) + ".dl"
        try:
            return file, read(file)
        except FileNotFoundError:
            tried.append(file)
        except OSError as err:
            raise ParseError(f"module '{path}': cannot read {file} ({err.strerror or err})",
                             imp.span, source) from None
    raise ParseError(f"module '{path}' not found: no {' nor '.join(tried)} (the library "
                     f"roots are the main program's directory, those given with -L and the "
                     f"libraries that come with ddlog)",
                     imp.span, source)


def extern_bodies(prog: ast.Program, parse: Parse, read: Read,
                  sources: dict[str, str]) -> ast.Program:
    """`prog` with its extern functions' bodies taken from `X.extern.dl` beside its file."""
    externs = {d.name: d for d in prog.decls
               if isinstance(d, ast.FunctionDecl) and d.body is None}
    file = os.path.splitext(prog.file)[0] + ".extern.dl"
    if not externs or not os.path.exists(file):
        return prog
    try:
        text = read(file)
    except OSError as err:
        raise ParseError(f"cannot read {file} ({err.strerror or err})",
                         next(iter(externs.values())).span, prog.source) from None
    sources[file] = text
    extra = parse(text, file)
    bodies = {d.name: d for d in extra.decls
              if isinstance(d, ast.FunctionDecl) and d.name in externs and d.body is not None}
    for name, f in bodies.items():
        want = [p.name for p in externs[name].params]
        if [p.name for p in f.params] != want:
            raise ParseError(f"the body of extern function '{name}' must take the parameters "
                             f"of its declaration ({', '.join(want)})", f.span, text)
    decls = [dataclasses.replace(d, body=bodies[d.name].body) if d in externs.values() and
             d.name in bodies else d for d in prog.decls]
    decls += [d for d in extra.decls if not (isinstance(d, ast.FunctionDecl) and d.name in bodies)]
    return dataclasses.replace(prog, decls=decls)


def _declared(module: ast.Program, prefix: str) -> list[str]:
    """The names a module declares (relations, types, constructors, functions), qualified."""
    out = []
    for d in module.decls:
        if isinstance(d, (ast.RelationDecl, ast.TypeDef, ast.FunctionDecl, ast.TransformerDecl,
                          ast.IndexDecl)):
            out.append(d.name)
        if isinstance(d, ast.TypeDef) and d.ctors:
            out += [c.name for c in d.ctors]
    return [prefix + n for n in out if "::" not in n]


def _visible(prog: ast.Program, names: dict[str, list[str]]) -> dict[str, str]:
    """The names `prog` may use unqualified from the modules it imports without an alias
    (`import regex`, then `regex_match(..)`): name -> qualified name. A name two of them
    declare stays unqualified (and is reported unknown unless it is the program's own).
    `names`: each module's declared names, qualified."""
    seen: dict[str, list[str]] = {}
    for imp in (d for d in prog.decls if isinstance(d, ast.Import)):
        if imp.alias or imp.module not in names:
            continue
        prefix = imp.module + "::"
        for q in names[imp.module]:
            seen.setdefault(q[len(prefix):], []).append(q)
    return {n: qs[0] for n, qs in seen.items() if len(set(qs)) == 1}


def _qualify(prog: ast.Program, prefix: str, aliases: dict[str, str],
             visible: dict[str, str]) -> ast.Program:
    """`prog`'s declarations with its own names qualified by `prefix`, aliases expanded,
    names of imported modules used unqualified (`visible`) qualified, and standard-library
    qualifiers removed."""
    own: set[str] = set()
    for d in prog.decls:
        if isinstance(d, (ast.RelationDecl, ast.TypeDef, ast.FunctionDecl, ast.TransformerDecl,
                          ast.IndexDecl)):
            own.add(d.name)
        if isinstance(d, ast.TypeDef) and d.ctors:
            own.update(c.name for c in d.ctors)
    functions = {d.name for d in prog.decls if isinstance(d, ast.FunctionDecl)}
    renames = _renames(prog)

    def name(n: str) -> str:
        if "::" in n:
            head, rest = n.split("::", 1)
            if head in aliases:
                n = aliases[head] + "::" + rest
                head = n.split("::", 1)[0]
            if head in STD_MODULES:
                last = n.rsplit("::", 1)[1]
                return STD_NAMES.get(head, {}).get(last, last)
            return n
        if n in own:
            return prefix + n
        if n in visible:
            return visible[n]
        return renames.get(n, n)

    def renamer(local: set[str]) -> Callable[[ast.Node], ast.Node]:
        def rename(node: ast.Node) -> ast.Node:
            for attr in _NAMES.get(type(node), ()):
                node = dataclasses.replace(node, **{attr: name(getattr(node, attr))})
            if isinstance(node, ast.Var) and node.name not in local and (
                    node.name in functions or node.name in visible or "::" in node.name):
                node = dataclasses.replace(node, name=name(node.name))  # a function as a value
            return node
        return rename

    decls = [d.transform(renamer(bound_variables(d))) for d in prog.decls
             if not isinstance(d, ast.Import)]
    return dataclasses.replace(prog, decls=decls)


def _renames(prog: ast.Program) -> dict[str, str]:
    """The names a program's imports of library modules give it unqualified (`import base64`,
    then `decode(s)`) that are other names among the built-ins."""
    out: dict[str, str] = {}
    for imp in (d for d in prog.decls if isinstance(d, ast.Import)):
        out.update(STD_NAMES.get(imp.module, {}))
    return out


def bound_variables(decl: ast.Node) -> set[str]:
    """The variables a declaration binds (parameters, `var`s, closure parameters, pattern
    and rule variables): a function's name among them is the variable there."""
    out: set[str] = set()
    for n in decl.walk():
        if isinstance(n, ast.FunctionDecl):
            out.update(p.name for p in n.params)
        elif isinstance(n, ast.Lambda):
            out.update(n.params)
        elif isinstance(n, (ast.Let, ast.BodyAssign, ast.BodyFlatMap, ast.BodyGroupBy)):
            out.add(n.var)
        elif isinstance(n, ast.PVar):
            out.add(n.name)
        elif isinstance(n, ast.BodyAtom):
            whole = n.atom.whole
            parts = whole.items if isinstance(whole, ast.TupleLit) else [whole]
            out.update(a.name for a in [*n.atom.args, *parts] if isinstance(a, ast.Var))
            if n.record is not None:
                out.add(n.record)
    return out


# the attributes of each node that hold a declared name
_NAMES: dict[type, tuple[str, ...]] = {
    ast.RelationDecl: ("name",), ast.TypeDef: ("name",), ast.Constructor: ("name",),
    ast.FunctionDecl: ("name",), ast.Atom: ("relation",), ast.TypeName: ("name",),
    ast.StructLit: ("ctor",), ast.PCtor: ("ctor",), ast.Call: ("func",),
    ast.TransformerDecl: ("name",), ast.Apply: ("transformer",), ast.NameRef: ("name",),
    ast.IndexDecl: ("name",),
}
