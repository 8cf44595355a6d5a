"""Every example program in programs/ on the Spark engine, against the oracle after every epoch
of seeded random insertions and deletions (see tests/differential/harness.py).

Workloads use tiny domains so that graphs are dense and cyclic; the overrides below keep the data
meaningful for each program (and finite where generic data would not be: bom builds route
strings along paths, so its part graph must stay acyclic).
"""
from __future__ import annotations

import glob
import os

import pytest

from ddlog.runtime.config import Config
from ddlog.values import Record
from tests.differential.harness import (INCREMENTAL, Differential, ValueGen, Workload,
                                         acyclic_pairs)
from tests.support import PROGRAMS, seed_for



def _bom() -> Workload:
    parts = ("bike", "frame", "wheel", "spoke", "bolt")
    pair = acyclic_pairs(parts)

    def sub_part(rng, state):
        a, p = pair(rng)
        return (a, p, rng.randint(1, 3))

    return Workload(rows={"SubPart": sub_part,
                          "Price": lambda rng, s: (rng.choice(parts), rng.randint(1, 9))},
                    initial_for={"Price": 5})


def _policy() -> Workload:
    zones = ("z1", "z2", "z3", "z4")

    def port(rng):
        return Record("Port", (rng.choice(("tcp", "udp")), rng.choice((22, 80, 443))))

    return Workload(rows={
        "Host": lambda rng, s: (rng.choice(("h1", "h2", "h3", "h4")), rng.choice(zones)),
        "Link": lambda rng, s: (rng.choice(zones), rng.choice(zones)),
        "Firewall": lambda rng, s: (rng.choice(zones), port(rng),
                                    Record(rng.choice(("Allow", "Allow", "Deny")), ())),
    }, initial=5)


def _groups() -> Workload:
    groups = ("admins", "dev", "ops", "qa")
    users = ("ann", "bob", "cy", "dee")
    return Workload(rows={
        "UserGroups": lambda rng, s: (rng.choice(users),
                                      tuple(rng.choice(groups) for _ in range(rng.randint(0, 2)))),
        "Nested": lambda rng, s: (rng.choice(groups), rng.choice(groups)),
    }, initial=5)


def _strings() -> Workload:
    # ages around the age-group boundaries, beyond 127/255 (the casts to signed<8>/bit<8> wrap)
    # and negative
    ages = (-3, 0, 17, 18, 42, 64, 65, 100, 130, 300)
    return Workload(rows={
        "Person": lambda rng, s: (rng.choice(("ann", "bob", "cy", "dee")), rng.choice(ages),
                                  rng.choice(("", "x@y.org", "bob@example.com"))),
    }, initial=5)


def _stdlib() -> Workload:
    tags = ("old", "wood", "soft", "band-red", "band-blue", "metal")

    def stock(rng, state):
        return (rng.choice(("north", "south")),
                Record("Item", (rng.choice(("desk", "lamp", "mug", "sofa")),
                                tuple(rng.choice(tags) for _ in range(rng.randint(0, 3))),
                                rng.choice((5, 40, 100, 300)))))

    return Workload(rows={
        "Stock": stock,
        "Wanted": lambda rng, s: (rng.choice(("ann", "bob", "cy")),
                                  tuple(sorted({rng.choice(tags) for _ in range(2)}))),
    }, initial=5)


WORKLOADS: dict[str, Workload] = {
    "bom": _bom(),
    "evenodd": Workload(initial=7),
    "groups": _groups(),
    "pointsto": Workload(values=ValueGen(strings=("a", "b", "c", "d")), initial=4),
    "policy": _policy(),
    "reach": Workload(initial_for={"Root": 2}),
    "samegen": Workload(values=ValueGen(strings=("a", "b", "c", "d", "e", "f")), initial=7),
    "strings": _strings(),
    "stdlib": _stdlib(),
    "tc": Workload(initial=7),
}

NAMES = sorted(os.path.splitext(os.path.basename(p))[0]
               for p in glob.glob(os.path.join(PROGRAMS, "*.dl")))


def test_every_program_has_a_workload():
    # a new example program must get a (possibly default) workload here, and so a test
    assert set(NAMES) == set(WORKLOADS)


@pytest.mark.parametrize("name", NAMES)
def test_program_against_oracle(spark, name):
    from ddlog.api import Program

    p = Program.load(os.path.join(PROGRAMS, f"{name}.dl"), spark, config=INCREMENTAL)
    d = Differential(p, name, seed_for(f"programs/{name}"))
    d.run(WORKLOADS[name], epochs=10)


@pytest.mark.parametrize("name", NAMES)
def test_program_under_drawn_decisions(spark, name):
    """The same, with each of the fallback's decisions (recompute at an epoch's start, give
    up before an iteration, remember a give-up) drawn from a source seeded per program
    (Config.decisions): whichever path each epoch takes, the answer is the oracle's. The
    assertion message names the decisions' seed."""
    from ddlog.api import Program

    seed = seed_for(f"decisions/{name}")
    p = Program.load(os.path.join(PROGRAMS, f"{name}.dl"), spark,
                     config=Config(decisions=f"random:{seed}"))
    d = Differential(p, f"{name} decisions=random:{seed}", seed)
    d.run(WORKLOADS[name], epochs=8)
