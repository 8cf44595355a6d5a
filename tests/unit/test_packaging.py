"""What the distribution installs, checked on the source: the packages pyproject.toml lists are
exactly the source folders' (each under the one import package `ddlog`), and the public API
says what it does and takes (docstrings, type hints). tests/e2e/test_wheel.py builds the wheel
and installs it in a fresh venv."""
from __future__ import annotations

import inspect
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setuptools() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]


def test_the_listed_packages_are_the_source_folders():
    conf = _setuptools()
    dirs = conf["package-dir"]
    assert all(name == "ddlog" or name.startswith("ddlog.") for name in dirs)
    found = set()
    for package, folder in dirs.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([package, *rel.parts]))
    # a folder mapped by one entry is not listed again under another's
    assert set(conf["packages"]) == found


def test_package_data_is_there():
    data = _setuptools()["package-data"]
    dirs = _setuptools()["package-dir"]
    for package, patterns in data.items():
        folder = ROOT / dirs[package]
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: nothing matches {pattern}"


def test_the_public_api_has_docstrings_and_type_hints():
    from ddlog.api import Program

    public = ["load", "insert", "delete", "insert_graph", "delete_graph", "commit",
              "rollback", "relation", "relations", "info", "last_commit", "spark", "epoch"]
    missing = [name for name in public if not (inspect.getdoc(getattr(Program, name)) or "")]
    assert not missing, f"no docstring: {missing}"
    assert inspect.getdoc(Program)
    for name in ("load", "insert", "delete", "insert_graph", "commit", "relation", "info",
                 "__init__"):
        sig = inspect.signature(getattr(Program, name))
        bare = [p.name for p in sig.parameters.values()
                if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
        assert not bare, f"{name}: no type hint for {bare}"
        assert sig.return_annotation is not inspect.Signature.empty, f"{name}: no return type"
