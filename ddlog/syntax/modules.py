"""`import`: DDlog's standard modules, and user modules read from files.

DDlog's standard library (`ddlog_std`, `vec`, `set`, `map`, `group`, `string`, ...) is built
into the dialect (ddlog/builtins/): importing one of its modules is accepted and changes
nothing, and a name qualified by one (`vec::len`, `ddlog_std::Some`) is the built-in name.

A user module `import a::b` is the file `a/b.dl` beside the importing file. Its declarations
join the program under names qualified by the module path (`a::b::Edge`, `a::b::Shape`,
`a::b::f`); inside the module they are written unqualified, and the importing file writes
them qualified, or through an alias (`import a::b as c` lets it write `c::Edge`). This is
DDlog's scheme, and what `dump` prints: `a::b::Edge{...}`.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Callable

from ddlog.errors import ParseError
from ddlog.syntax import ast

STD_MODULES = frozenset({
    "ddlog_std", "std", "vec", "set", "map", "group", "string", "internment", "intern",
    "hashset", "tinyset", "fp", "debug", "log",
})

Parse = Callable[[str, str], ast.Program]  # (text, file) -> program
Read = Callable[[str], str]


def resolve_imports(prog: ast.Program, parse: Parse, read: Read) -> ast.Program:
    """The program with its user modules' declarations added (qualified), `import`
    declarations dropped and standard-library qualifiers removed."""
    loaded: dict[str, ast.Program] = {}  # module path -> its program, qualified
    order: list[str] = []
    sources: dict[str, str] = {}
    main = _qualify(prog, "", _imports(prog, parse, read, loaded, order, sources, []))
    decls = [d for m in order for d in loaded[m].decls] + main.decls
    return ast.Program(decls, prog.file, prog.source, sources)


def _imports(prog: ast.Program, parse: Parse, read: Read, loaded: dict[str, ast.Program],
             order: list[str], sources: dict[str, str], active: list[str]) -> dict[str, str]:
    """Load what `prog` imports (depth first, each module once); returns the aliases it may
    use: alias -> module path."""
    aliases: dict[str, str] = {}
    for imp in (d for d in prog.decls if isinstance(d, ast.Import)):
        path = imp.module
        if path.split("::")[0] in STD_MODULES:
            continue
        aliases[imp.alias or path] = path
        if path in loaded:
            continue
        if path in active:
            cycle = " -> ".join(active[active.index(path):] + [path])
            raise ParseError(f"modules import each other in a cycle ({cycle})", imp.span,
                             prog.source)
        file = os.path.join(os.path.dirname(prog.file), *path.split("::")) + ".dl"
        try:
            text = read(file)
        except OSError as err:
            raise ParseError(f"module '{path}' not found: cannot read {file} "
                             f"({err.strerror or err})", imp.span, prog.source) from None
        module = parse(text, file)
        sources[file] = text
        inner = _imports(module, parse, read, loaded, order, sources, active + [path])
        loaded[path] = _qualify(module, path + "::", inner)
        order.append(path)
    return aliases


def _qualify(prog: ast.Program, prefix: str, aliases: dict[str, str]) -> ast.Program:
    """`prog`'s declarations with its own names qualified by `prefix`, aliases expanded and
    standard-library qualifiers removed."""
    own: set[str] = set()
    for d in prog.decls:
        if isinstance(d, (ast.RelationDecl, ast.TypeDef, ast.FunctionDecl)):
            own.add(d.name)
        if isinstance(d, ast.TypeDef) and d.ctors:
            own.update(c.name for c in d.ctors)
    functions = {d.name for d in prog.decls if isinstance(d, ast.FunctionDecl)}

    def name(n: str) -> str:
        if "::" in n:
            head, rest = n.split("::", 1)
            if head in aliases:
                return aliases[head] + "::" + rest
            if head in STD_MODULES:
                return n.rsplit("::", 1)[1]
            return n
        return prefix + n if n in own else n

    def rename(node: ast.Node) -> ast.Node:
        for attr in _NAMES.get(type(node), ()):
            node = dataclasses.replace(node, **{attr: name(getattr(node, attr))})
        if isinstance(node, ast.Var) and (node.name in functions or "::" in node.name):
            node = dataclasses.replace(node, name=name(node.name))  # a function as a closure
        return node

    decls = [d.transform(rename) for d in prog.decls if not isinstance(d, ast.Import)]
    return dataclasses.replace(prog, decls=decls)


# the attributes of each node that hold a declared name
_NAMES: dict[type, tuple[str, ...]] = {
    ast.RelationDecl: ("name",), ast.TypeDef: ("name",), ast.Constructor: ("name",),
    ast.FunctionDecl: ("name",), ast.Atom: ("relation",), ast.TypeName: ("name",),
    ast.StructLit: ("ctor",), ast.PCtor: ("ctor",), ast.Call: ("func",),
}
