"""Generic traversal of the dataclass trees the layers build (the syntax tree in
ddlog/syntax/ast.py, the IR expressions in ddlog/plan/exprs.py): a node's children are the
nodes in its fields, through lists, tuples and `(name, node)` pairs, so that passes never
spell out each kind of node to walk, search or rebuild a tree."""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator


class Node:
    def children(self) -> list["Node"]:
        out: list[Node] = []
        stack = [getattr(self, f.name) for f in dataclasses.fields(self)]
        stack.reverse()
        while stack:
            x = stack.pop()
            if isinstance(x, (list, tuple)):
                stack.extend(reversed(x))
            elif isinstance(x, Node):
                out.append(x)
        return out

    def walk(self) -> Iterator["Node"]:
        """This node and every node under it, in source order (iteratively: depth costs no
        stack)."""
        stack: list[Node] = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children()))

    def find(self, kind: type) -> list:
        return [n for n in self.walk() if isinstance(n, kind)]

    def transform(self, fn: Callable[["Node"], "Node"]) -> "Node":
        """A copy rebuilt bottom-up: every node's children transformed first, then `fn` of the
        node with its new children (return the node itself to keep it)."""
        changes = {f.name: _transform(getattr(self, f.name), fn)
                   for f in dataclasses.fields(self)}
        return fn(dataclasses.replace(self, **changes))


def _transform(x, fn):
    if isinstance(x, Node):
        return x.transform(fn)
    if isinstance(x, list):
        return [_transform(y, fn) for y in x]
    if isinstance(x, tuple):
        return tuple(_transform(y, fn) for y in x)
    return x
