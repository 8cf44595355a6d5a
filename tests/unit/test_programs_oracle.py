"""The oracle on every example program in programs/, against results worked out by hand.

For each `programs/X.dl` with its data `programs/X.dat`, EXPECTED["X"] lists the value of some
relations (every output, and internal relations where they are instructive). The comments show
the reasoning; none of these sets was produced by running code.
"""
from __future__ import annotations

import os

import pytest

from ddlog.plan import load
from ddlog.values import Record
from tests.oracle.data import load_dat
from tests.oracle.evaluate import evaluate

from tests.support import PROGRAMS


def pairs(src: int | str, dsts) -> set[tuple]:
    return {(src, d) for d in dsts}


# tc: chain 1->2->3->4, 4->5, cycle 5->6->7->5, self-loop 8->8.
TC = {
    "Path": (pairs(1, [2, 3, 4, 5, 6, 7]) | pairs(2, [3, 4, 5, 6, 7]) | pairs(3, [4, 5, 6, 7])
             | pairs(4, [5, 6, 7]) | pairs(5, [5, 6, 7]) | pairs(6, [5, 6, 7])
             | pairs(7, [5, 6, 7]) | {(8, 8)}),
}

# reach: roots 1 and 9; 1->2->3->1 and 3->4 reach {1,2,3,4}; 9 reaches only itself;
# 5<->6 and 7->4 are not reached from any root.
REACH = {
    "Node": {(n,) for n in (1, 2, 3, 4, 5, 6, 7, 9)},
    "Reach": {(1,), (2,), (3,), (4,), (9,)},
    "Unreachable": {(5,), (6,), (7,)},
}

# evenodd: on the chain 1->2->3->4->5 the only walk from i to j has length j - i; on the cycle
# 10->11->12->10 (length 3) every pair has walks of lengths d, d+3, d+6, ... so both parities
# (for a node to itself: 3 and 6).
CHAIN_ODD = {(1, 2), (1, 4), (2, 3), (2, 5), (3, 4), (4, 5)}
CHAIN_EVEN = {(1, 3), (1, 5), (2, 4), (3, 5)}
CYCLE = {(a, b) for a in (10, 11, 12) for b in (10, 11, 12)}
EVENODD = {
    "Odd": CHAIN_ODD | CYCLE,
    "Even": CHAIN_EVEN | CYCLE,
    "EvenFromOne": {(3,), (5,)},
    "OnlyOdd": CHAIN_ODD,
}

# pointsto: a=&x, b=&y, p=&a, q=&b, c=b, *p=c, d=*p, e=*q, f=e.
#   c -> y (copy of b); *p = c makes a -> y; d = *p gives d -> x, y; e = *q gives e -> y;
#   f = e gives f -> y. Object y is pointed to by a, b, c, d, e, f; x by a, d.
Y_POINTERS = ["a", "b", "c", "d", "e", "f"]
POINTSTO = {
    "PointsTo": {("a", "x"), ("a", "y"), ("b", "y"), ("p", "a"), ("q", "b"), ("c", "y"),
                 ("d", "x"), ("d", "y"), ("e", "y"), ("f", "y")},
    # pairs p < q sharing y (15), and (a, d) sharing x (already among them)
    "Alias": {(p, q) for p in Y_POINTERS for q in Y_POINTERS if p < q},
}

# samegen: ann's children bob, carl; carl's children ed, fay; bob->dora->gus; ed->hal.
#   siblings: bob~carl, ed~fay; cousins via bob~carl: dora~ed, dora~fay; via dora~ed: gus~hal.
SAMEGEN_PAIRS = [("bob", "carl"), ("ed", "fay"), ("dora", "ed"), ("dora", "fay"),
                 ("gus", "hal")]
SAMEGEN = {"SameGen": {p for a, b in SAMEGEN_PAIRS for p in ((a, b), (b, a))}}

# bom: routes from each assembly; quantities multiply along a route.
BOM = {
    "IsAssembly": {("bike",), ("wheel",), ("hub",), ("frame",), ("seat",)},
    "Uses": {
        ("hub", "bolt", "hub/bolt", 2),
        ("frame", "bolt", "frame/bolt", 4), ("frame", "tube", "frame/tube", 3),
        ("seat", "cushion", "seat/cushion", 1), ("seat", "bolt", "seat/bolt", 2),
        ("wheel", "spoke", "wheel/spoke", 3), ("wheel", "rim", "wheel/rim", 1),
        ("wheel", "hub", "wheel/hub", 1), ("wheel", "bolt", "wheel/hub/bolt", 2),
        ("bike", "frame", "bike/frame", 1), ("bike", "wheel", "bike/wheel", 2),
        ("bike", "seat", "bike/seat", 1),
        ("bike", "bolt", "bike/frame/bolt", 4), ("bike", "tube", "bike/frame/tube", 3),
        ("bike", "spoke", "bike/wheel/spoke", 6), ("bike", "rim", "bike/wheel/rim", 2),
        ("bike", "hub", "bike/wheel/hub", 2), ("bike", "bolt", "bike/wheel/hub/bolt", 4),
        ("bike", "cushion", "bike/seat/cushion", 1), ("bike", "bolt", "bike/seat/bolt", 2),
    },
    # bike needs bolts along three routes: 4 (frame) + 4 (wheel/hub) + 2 (seat) = 10; the two
    # routes of 4 are different valuations, so both count.
    "TotalQty": {
        ("hub", "bolt", 2),
        ("frame", "bolt", 4), ("frame", "tube", 3),
        ("seat", "cushion", 1), ("seat", "bolt", 2),
        ("wheel", "spoke", 3), ("wheel", "rim", 1), ("wheel", "hub", 1), ("wheel", "bolt", 2),
        ("bike", "frame", 1), ("bike", "wheel", 2), ("bike", "seat", 1), ("bike", "bolt", 10),
        ("bike", "tube", 3), ("bike", "spoke", 6), ("bike", "rim", 2), ("bike", "hub", 2),
        ("bike", "cushion", 1),
    },
    # distinct leaf kinds: bike {bolt, tube, spoke, rim, cushion}, wheel {spoke, rim, bolt}
    "Kinds": {("hub", 1), ("frame", 2), ("seat", 2), ("wheel", 3), ("bike", 5)},
    # (routes, pieces, cost, dearest) over leaf routes with (part, qty, qty * price):
    #   frame: (bolt,4,4) (tube,3,15)                       -> 2, 7, 19, tube
    #   seat: (cushion,1,20) (bolt,2,2)                     -> 2, 3, 22, cushion
    #   wheel: (spoke,3,6) (rim,1,10) (bolt,2,2)             -> 3, 6, 18, rim
    #   bike: (bolt,4,4) x2, (tube,3,15) (spoke,6,12) (rim,2,20) (cushion,1,20) (bolt,2,2)
    #         -> 7 routes, 22 pieces, 77 cost; rim and cushion tie at 20: the smaller element
    #         ("cushion", ...) wins
    "Summary": {("hub", 1, 2, 2, "bolt"), ("frame", 2, 7, 19, "tube"),
                ("seat", 2, 3, 22, "cushion"), ("wheel", 3, 6, 18, "rim"),
                ("bike", 7, 22, 77, "cushion")},
}

# groups: alice {devs, admins} -> staff, ops -> everyone; bob ops -> staff -> everyone;
# carol none; dave guests <-> visitors -> everyone; erin devs (twice) -> staff -> everyone.
MEMBERSHIP = {
    "alice": ["devs", "admins", "staff", "ops", "everyone"],
    "bob": ["ops", "staff", "everyone"],
    "dave": ["guests", "visitors", "everyone"],
    "erin": ["devs", "staff", "everyone"],
}
GROUPS = {
    "Member": {(u, g) for u, gs in MEMBERSHIP.items() for g in gs},
    "GroupSize": {("devs", 2, ("alice", "erin")), ("admins", 1, ("alice",)),
                  ("staff", 3, ("alice", "bob", "erin")), ("ops", 2, ("alice", "bob")),
                  ("everyone", 4, ("alice", "bob", "dave", "erin")),
                  ("guests", 1, ("dave",)), ("visitors", 1, ("dave",))},
    "Admin": {("alice",)},
    "NotAdmin": {("bob",), ("carol",), ("dave",), ("erin",)},
}

# policy: zones dmz, internal, office are connected (links both ways, transitively); lab only
# to itself. Open ports (allowed, not denied): dmz tcp/443 and tcp/80 (22 is denied), internal
# tcp/5432, office udp/53, lab tcp/9100. The printer is alone in lab, so it has no access rows.
OPEN = {"web1": ["tcp/443", "tcp/80"], "web2": ["tcp/443", "tcp/80"], "db": ["tcp/5432"],
        "laptop": ["udp/53"]}
ZONES3 = ["dmz", "internal", "office"]


def port(proto: str, number: int) -> Record:
    return Record("Port", (proto, number))


POLICY = {
    "Connected": {(a, b) for a in ZONES3 for b in ZONES3} | {("lab", "lab")},
    "Allowed": {("dmz", port("tcp", 443)), ("dmz", port("tcp", 80)), ("dmz", port("tcp", 22)),
                ("internal", port("tcp", 5432)), ("office", port("udp", 53)),
                ("lab", port("tcp", 9100))},
    "Denied": {("dmz", port("tcp", 22))},
    "Access": {(s, d, p) for d, ports in OPEN.items() for p in ports for s in OPEN if s != d},
    "OpenPorts": {("dmz", 2), ("internal", 1), ("office", 1), ("lab", 1)},
}

# strings: ages 7, 30, 45, 70, 100.
#   byte = a * 3 mod 256: 21, 90, 135, 210, 300-256 = 44
#   small = a + 100 in signed<8>: 107, 130-256 = -126, 145-256 = -111, -86, -56
#   code = a << 4 | 15: 127, 495, 735, 1135, 1615;  decade = a / 10 * 10
STRINGS = {
    "Label": {("ann", "ann is a child."), ("bo", "bo is an adult for 12 years."),
              ("cy", "cy is an adult for 27 years."), ("di", "di is a senior."),
              ("ed", "ed is a senior.")},
    "Contacts": {(Record("Contact", ("ann", None)),), (Record("Contact", ("bo", "bo@example.com")),),
                 (Record("Contact", ("cy", None)),), (Record("Contact", ("di", "di@mail.org")),),
                 (Record("Contact", ("ed", "e@x.io")),)},
    "HowToReach": {("ann", "no e-mail for ANN"),
                   ("bo", "write to <bo@example.com> (14 characters)"),
                   ("cy", "no e-mail for CY"),
                   ("di", "write to <di@mail.org> (11 characters)"),
                   ("ed", "write to <e@x.io> (6 characters)")},
    "Numbers": {("ann", 21, 107, 3.5, 127, 0), ("bo", 90, -126, 15.0, 495, 30),
                ("cy", 135, -111, 22.5, 735, 40), ("di", 210, -86, 35.0, 1135, 70),
                ("ed", 44, -56, 50.0, 1615, 100)},
}


# stdlib: north has desk (wood, 100), lamp (old, band-blue, 40), mug (old, 5); south has desk
# (metal, band-red, 100), sofa (soft, 300). Groups list items by name (records sort by field).
#   Sale: the "old" items, 10% off (40 - 4 = 36; 5 - 50/100 = 5), tagged "sale"
#   Matches: ann wants old (lamp, mug in north), bob soft or wood (desk north, sofa south)
#   Summary: north 3 items, 145, cheapest mug; south 2, 400, cheapest desk
#   Tagged: tags longer than 3 characters ("old" is not); Band: the text after "band-"
#   Prices: the sorted distinct prices; top: the tags of the dearest item


def item(name: str, tags: tuple, price: int) -> Record:
    return Record("Item", (name, tags, price))


STDLIB = {
    "Sale": {("north", item("lamp", ("old", "band-blue", "sale"), 36)),
             ("north", item("mug", ("old", "sale"), 5))},
    "Matches": {("ann", "north", ("lamp", "mug")), ("bob", "north", ("desk",)),
                ("bob", "south", ("sofa",))},
    "Summary": {("north", 3, 145, "desk,lamp,mug", "mug"), ("south", 2, 400, "desk,sofa", "desk")},
    "Tagged": {("band-blue", "north"), ("wood", "north"), ("metal", "south"),
               ("band-red", "south"), ("soft", "south")},
    "Band": {("north", "lamp", "blue"), ("south", "desk", "red")},
    "Prices": {("north", (5, 40, 100), ("wood",)), ("south", (100, 300), ("soft",))},
}

EXPECTED: dict[str, dict[str, set[tuple]]] = {
    "tc": TC, "reach": REACH, "evenodd": EVENODD, "pointsto": POINTSTO, "samegen": SAMEGEN,
    "bom": BOM, "groups": GROUPS, "policy": POLICY, "strings": STRINGS, "stdlib": STDLIB,
}


def program_names() -> list[str]:
    return sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".dl"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_program_on_its_data(name: str):
    program = load(os.path.join(PROGRAMS, name + ".dl")).program
    inputs = load_dat(os.path.join(PROGRAMS, name + ".dat"), program)
    result = evaluate(program, inputs)
    for relation, expected in EXPECTED[name].items():
        assert result[relation] == expected, relation
    # every output relation has a hand-computed value
    outputs = {r.name for r in program.outputs()}
    assert outputs <= set(EXPECTED[name]), outputs - set(EXPECTED[name])


def test_every_program_has_expected_results():
    """A new example program needs hand-computed results here too."""
    missing = [n for n in program_names() if n not in EXPECTED]
    assert not missing, f"add expected oracle results for: {missing}"
