"""The layout's promises, checked on the source: every module imports only its own layer and
the layers below it (lazy imports inside functions included), no two modules import each
other in a loop (lazily or not), and nothing before the runtime imports Spark.

    base      ddlog.cache, ddlog.environment, ddlog.errors, ddlog.limits, ddlog.tree,
              ddlog.types
    ddlog.grammar, ddlog.strata   (the folders grammar/, strata/)
    ddlog.syntax -> ddlog.values -> ddlog.builtins -> ddlog.check -> ddlog.plan
    ddlog.runtime   (the folder runtime/: reads the plan's circuit IR, values and built-ins;
                     never the syntax or checker)
    ddlog.app, ddlog.api   (the surfaces: the only place that knows both)
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
# source folder -> the package it installs as (pyproject.toml's package-dir)
PACKAGES = {"ddlog": "ddlog", "grammar": "ddlog.grammar", "strata": "ddlog.strata",
            "runtime": "ddlog.runtime"}

LAYERS: list[tuple[str, ...]] = [
    ("ddlog", "ddlog.cache", "ddlog.environment", "ddlog.errors", "ddlog.limits", "ddlog.tree",
     "ddlog.types"),
    ("ddlog.grammar", "ddlog.strata"),
    ("ddlog.syntax",),
    ("ddlog.values",),
    ("ddlog.builtins",),
    ("ddlog.check",),
    ("ddlog.plan",),
    ("ddlog.runtime",),
    ("ddlog.app", "ddlog.api", "ddlog.__main__"),
]
# layers that must not touch Spark, even lazily: they run without a JVM
NO_SPARK = {"ddlog", "ddlog.cache", "ddlog.environment", "ddlog.errors", "ddlog.limits",
            "ddlog.tree", "ddlog.types", "ddlog.grammar", "ddlog.strata", "ddlog.syntax", "ddlog.values", "ddlog.builtins",
            "ddlog.check", "ddlog.plan"}
# what the runtime may read of the language
RUNTIME_READS = ("ddlog.cache", "ddlog.environment", "ddlog.errors", "ddlog.limits",
                 "ddlog.tree", "ddlog.types", "ddlog.values", "ddlog.builtins", "ddlog.plan")


def modules() -> dict[str, Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [package, *rel.parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def owner(name: str, layers=LAYERS) -> str:
    """The layer entry (prefix) a module belongs to: the longest that matches."""
    best = ""
    for layer in layers:
        for prefix in layer:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
                best = prefix
    return best


def rank(name: str) -> int:
    prefix = owner(name)
    return next(k for k, layer in enumerate(LAYERS) if prefix in layer)


def _in_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports(path: Path, known: set[str]) -> list[tuple[str, bool]]:
    """(imported module, at module level) for every import statement outside
    `if TYPE_CHECKING:` blocks; `from x import y` counts as importing x.y when that is a
    module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, bool]] = []

    def visit(node, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _in_type_checking(child):
                continue
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                   ast.Lambda, ast.ClassDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, top) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                out.append((child.module, top))
                for a in child.names:
                    sub = f"{child.module}.{a.name}"
                    if sub in known:
                        out.append((sub, top))
            visit(child, inner)

    visit(tree, True)
    return out


@pytest.fixture(scope="module")
def graph():
    mods = modules()
    known = set(mods)
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_node(name)
        for target, top in imports(path, known):
            g.add_edge(name, target, top=g.get_edge_data(name, target, {}).get("top") or top)
    return g, known


def test_imports_only_go_down(graph):
    g, known = graph
    wrong = []
    for a, b in g.edges:
        if b in known and rank(b) > rank(a):
            wrong.append(f"{a} imports {b}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles(graph):
    """No two modules import each other in a loop, lazy imports inside functions counted: a
    loop that is only lazy still means neither module can be read without the other."""
    g, known = graph
    modules_only = nx.DiGraph([(a, b) for a, b in g.edges if b in known and a != b])
    cycles = [sorted(c) for c in nx.strongly_connected_components(modules_only) if len(c) > 1]
    assert not cycles, cycles
    # nor between the layers' packages, counting lazy imports too
    packages = nx.DiGraph((owner(a), owner(b)) for a, b in g.edges if b in known
                          and owner(a) != owner(b))
    assert nx.is_directed_acyclic_graph(packages), list(nx.simple_cycles(packages))


def test_the_runtime_reads_only_the_plan_values_and_builtins(graph):
    g, known = graph
    wrong = [f"{a} imports {b}" for a, b in g.edges
             if owner(a) == "ddlog.runtime" and b.startswith("ddlog")
             and owner(b) not in (*RUNTIME_READS, "ddlog.runtime") and b != "ddlog"]
    assert not wrong, wrong


def test_nothing_before_the_runtime_imports_spark(graph):
    g, known = graph
    wrong = [f"{a} imports {b}" for a, b in g.edges
             if owner(a) in NO_SPARK and b.split(".")[0] in ("pyspark", "py4j")]
    assert not wrong, wrong


def test_every_module_is_in_a_layer():
    assert all(owner(m) for m in modules()), [m for m in modules() if not owner(m)]


# The modules that reach Spark below PySpark's public API (py4j, the JVM side of a session or
# DataFrame): the classic backend and the making of sessions. The rest of the runtime goes
# through runtime/backend's interface, which is what lets it run on Spark Connect.
BELOW_THE_API = {"ddlog.runtime.backend.classic", "ddlog.runtime.spark"}
CHOOSES_THE_BACKEND = "ddlog.runtime.backend"
_INTERNALS = ("_jdf", "_jvm", "_jsc", "_jsparkSession", "_jc", "jvm(")


def test_only_the_classic_backend_reaches_below_pysparks_api(graph):
    g, known = graph
    wrong = [f"{a} imports {b}" for a, b in g.edges
             if a.startswith("ddlog.") and a not in (*BELOW_THE_API, CHOOSES_THE_BACKEND)
             and (b.startswith("py4j.java_gateway") or b.startswith("pyspark.sql.classic")
                  or b == "ddlog.runtime.backend.classic")]
    for name, path in modules().items():
        if name in BELOW_THE_API:
            continue
        code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                         if not line.lstrip().startswith("#"))
        wrong += [f"{name} uses {word}" for word in _INTERNALS if f".{word}" in code]
    assert not wrong, "\n".join(sorted(wrong))


def test_the_environment_is_read_in_one_place():
    """ddlog/environment.py names every environment variable ddlog reads; no other module
    reads the process's environment."""
    readers = [str(path) for path in modules().values()
               if path.name != "environment.py"
               and re.search(r"os\.environ|os\.getenv", path.read_text())]
    assert not readers, readers
