"""Every mapping of types (ddlog.types.TypeMapping: to Spark types, to and from Spark values,
to DDlog's text, JSON, constants, value checks, test data) decides about every kind of type:
it has a method for it or lists it as unsupported. A new kind of type (Map, say) makes this
fail until each mapping says what it means for it."""
from __future__ import annotations

import importlib

import pytest

from ddlog.types import KIND_METHODS, TypeMapping

# the modules that define mappings (importing them registers the subclasses)
MODULES = ["ddlog.values", "ddlog.values.render", "ddlog.values.literals", "ddlog.runtime.schema",
           "ddlog.check.closure_text", "tests.differential.harness"]


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


@pytest.fixture(scope="module")
def mappings():
    for m in MODULES:
        importlib.import_module(m)
    found = sorted(set(_subclasses(TypeMapping)), key=lambda c: c.__qualname__)
    assert len(found) >= 8, found
    return found


def test_every_mapping_decides_about_every_kind(mappings):
    undecided = []
    for cls in mappings:
        for method in KIND_METHODS.values():
            defined = any(method in vars(c) for c in cls.__mro__ if c is not TypeMapping)
            if not defined and method not in cls.UNSUPPORTED:
                undecided.append(f"{cls.__module__}.{cls.__qualname__}.{method}")
    assert not undecided, undecided


def test_unsupported_kinds_say_so():
    from ddlog.types import TGroup, BIGINT
    from ddlog.runtime.schema import invalid_value

    with pytest.raises(TypeError, match="no meaning for values of type"):
        invalid_value(None, TGroup(BIGINT, BIGINT))
