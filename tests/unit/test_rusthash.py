"""A HashSet prints in Rust's hash order (ddlog/values/rusthash.py): SipHash-1-3 against the
reference implementation's published outputs, and the orders DDlog's hashset_test prints."""
from __future__ import annotations

from ddlog.types import BIGINT, USIZE, TInt, TSet, TTuple, TVec
from ddlog.values import dump_key, format_value
from ddlog.values.rusthash import hash_bytes, siphash13

S64 = TInt(True, 64)


def test_siphash13_gives_the_reference_outputs():
    # the reference SipHash-1-3 with the key 0, over "" and over the byte 0
    assert siphash13(b"") == 0xD1FBA762150C532C
    assert siphash13(bytes([0])) == 0x68A914128E01E473


def test_rust_hash_bytes():
    assert hash_bytes(5, USIZE) == (5).to_bytes(8, "little")
    assert hash_bytes(-1, TInt(True, 16)) == b"\xff\xff"
    assert hash_bytes(3, TInt(False, 12)) == b"\x03\x00"  # bit<12> is a u16
    assert hash_bytes((1, (2,)), TTuple((S64, TVec(S64)))) == b"".join(
        n.to_bytes(8, "little") for n in (1, 1, 2))  # the Vec's length before its elements
    assert hash_bytes(7, BIGINT) is None  # num's BigInt: not modelled


def test_a_hashset_prints_in_the_order_ddlog_prints_it():
    hashed = TSet(USIZE, hashed=True)
    assert format_value(tuple(range(1, 6)), hashed) == "[4, 2, 1, 3, 5]"
    assert format_value(tuple(range(1, 11)), hashed) == "[10, 6, 8, 9, 4, 2, 1, 3, 7, 5]"
    assert format_value(tuple(range(1, 6)), TSet(USIZE)) == "[1, 2, 3, 4, 5]"
    pairs = TSet(TTuple((S64, TVec(S64))), hashed=True)
    value = tuple((k, (2 * k, 2 * k + 1, 2 * k + 2)) for k in range(5))
    assert format_value(value, pairs) == ("[(2, [4, 5, 6]), (4, [8, 9, 10]), (3, [6, 7, 8]), "
                                          "(1, [2, 3, 4]), (0, [0, 1, 2])]")
    # a type whose hash is not modelled keeps the value order
    assert format_value((3, 1, 2), TSet(BIGINT, hashed=True)) == "[3, 1, 2]"


def test_hashsets_compare_by_size_then_in_their_order():
    hashed = TSet(USIZE, hashed=True)
    rows = [((4, 5),), ((1, 2, 3, 4, 5),), ((1, 2),)]
    assert sorted(rows, key=lambda r: dump_key(r, [hashed])) == [((1, 2),), ((4, 5),),
                                                                   ((1, 2, 3, 4, 5),)]
    # as Sets: element by element
    assert sorted(rows, key=lambda r: dump_key(r, [TSet(USIZE)])) == [
        ((1, 2),), ((1, 2, 3, 4, 5),), ((4, 5),)]
    assert TSet(USIZE, hashed=True) == TSet(USIZE)  # one type to the checker


def test_a_generic_hashset_stays_one():
    from ddlog.types import TVar, substitute

    assert substitute(TSet(TVar("A"), hashed=True), {"A": USIZE}).hashed
