"""Integers wider than 64 bits without a JVM: their stored form (two Longs whose Spark order is
the numbers' order), what the checker lets them into, and the meanings of the uuid and net
libraries' built-ins and of ddlog_std's hashes."""
from __future__ import annotations

import ipaddress
import uuid

import pytest

from ddlog.builtins.codecs import CODECS
from ddlog.builtins.hashes import HASHES, SEED1, SEED2, xxh64
from ddlog.builtins.nets import NETS
from ddlog.builtins.uuids import UUIDS
from ddlog.runtime import wide
from ddlog.types import TInt
from tests.unit.test_typecheck import fails

U128, S128, U100, S100 = TInt(False, 128), TInt(True, 128), TInt(False, 100), TInt(True, 100)
EDGES = {U128: [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, 1 << 64, (1 << 127) + 5,
                (1 << 128) - 1],
         S128: [-(1 << 127), -(1 << 64), -1, 0, 1, (1 << 64) + 1, (1 << 127) - 1],
         U100: [0, (1 << 64) + 3, (1 << 100) - 1],
         S100: [-(1 << 99), -1, 0, (1 << 99) - 1]}


@pytest.mark.parametrize("t", list(EDGES), ids=str)
def test_stored_words_give_the_value_back_and_sort_as_the_values(t):
    values = EDGES[t]
    stored = [wide.stored(v, t) for v in values]
    assert [wide.value_of(hi, lo, t) for hi, lo in stored] == values
    assert all(-(1 << 63) <= w < 1 << 63 for pair in stored for w in pair)  # Longs
    assert sorted(stored) == stored  # Spark compares the struct field by field, as tuples


def test_what_does_not_take_wider_integers_refuses_them_where_they_are_written():
    base = "input relation I(x: u128, v: Vec<u8>)\noutput relation O(y: u8)\n"
    fails(base + "O(y) :- I(x, v), Some{var y} = v.nth(x).",
          "function 'nth' takes integers of up to 64 bits here, found bit<128>", "x).")
    fails(base + "O(0) :- I(x, v), var r = range_vec(x, x, 1).",
          "function 'range_vec' takes integers of up to 64 bits here", "x, x, 1")
    fails(base + "O(0) :- I(x, v), var y = 1.5 as u128.",
          "cannot cast double to bit<128>: a float converts to integers of up to 64 bits",
          "1.5 as")


def _call(name: str, *args):
    return UUIDS[name].python(list(args), [], None)


def test_uuid_meanings_are_the_uuid_modules():
    ns = uuid.NAMESPACE_URL.int
    for name in ("", "https://example.org/", "é"):
        expected = uuid.uuid5(uuid.NAMESPACE_URL, name)
        assert _call("uuid_v5", ns, tuple(name.encode())) == expected.int
        assert _call("uuid_hyphenated", expected.int) == str(expected)
        assert _call("uuid_swap_bytes", expected.int) == int.from_bytes(expected.bytes, "little")
    u = uuid.UUID("936DA01F-9ABD-4D9D-80C7-02AF85C822A8")
    for text in (str(u), str(u).upper(), u.hex, "urn:uuid:" + str(u)):
        assert _call("uuid_parse", text).values == (u.int,), text
    assert _call("uuid_parse", "936da01f").values == \
        ("invalid length: expected one of [36, 32], found 8",)
    assert _call("uuid_from_bytes", tuple(range(16))).values == (int(bytes(range(16)).hex(), 16),)
    assert _call("uuid_from_bytes", (1, 2)).values == \
        ("invalid bytes length: expected 16, found 2",)
    assert CODECS["string_to_bytes"].python(["aé"], [], None) == (97, 0xC3, 0xA9)


def _net(name: str, *args):
    return NETS[name].python(list(args), [], None)


def test_ipv6_text_and_parse_are_rusts():
    """Rust writes IPv6 as RFC 5952 does (Python's ipaddress too), except its IPv4-compatible
    and -mapped forms; it reads groups, one `::` standing for at least one group, and a final
    IPv4 address."""
    for text in ("2001:db8::1", "1:0:0:2:0:0:0:3", "1:0:0:2::3:4:5", "fe80::",
                 "1:2:3:4:5:6:7:8", "ff01::ffff:c00a:2ff", "0:1::"):
        value = int(ipaddress.IPv6Address(text))
        assert _net("ipv6_text", value) == str(ipaddress.IPv6Address(value)), text
        assert _net("ipv6_parse", text) == value
    for text, shown in (("::", "::"), ("::1", "::1"),
                        ("::ffff:192.10.2.255", "::ffff:192.10.2.255"),
                        ("::c000:20a", "::192.0.2.10"),
                        ("0:0:0:0:0:ffff:c0a8:a0c", "::ffff:192.168.10.12")):
        assert _net("ipv6_text", _net("ipv6_parse", text)) == shown
    for bad in ("ffff:192.10.2.255", "1:2:3:4:5:6:7:8::", "1::2::3", "12345::", "::1.2.3",
                ":1::", "1:2:3:4:5:6:7", "::1.2.3.4:5", "g::"):
        assert _net("ipv6_parse", bad) is None, bad
    assert _net("ipv4_parse", "10.10.10.101") == 0x0A0A0A65
    assert [_net("ipv4_parse", s) for s in ("10.10.10.10.1", "256.1.1.1", "1.2.3", "01.2.3.4")] \
        == [None] * 4
    assert _net("ipv4_text", 0xC0A80001) == "192.168.0.1"
    assert _net("u128_segments", 0xFFFF_C00A_02FF) == (0, 0, 0, 0, 0, 0xFFFF, 0xC00A, 0x2FF)


def test_hashes_are_xxh64_of_the_bytes_rust_hashes():
    """XXH64's published vectors; and ddlog_std's hash64 of a usize, which DDlog's lb test
    spreads over two workers as 100 -> 1, 200 -> 1, 300 -> 0."""
    assert xxh64(b"", 0) == 0xEF46DB3751D8E999
    assert xxh64(b"a", 0) == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc", 0) == 0x44BC2CF5AD770999
    usize = TInt(False, 64)
    assert [HASHES["hash64"].python([v], [usize], None) % 2 for v in (100, 200, 300)] == [1, 1, 0]
    # a u16 hashes its two bytes, a s8 its one (two's complement), a u128 its sixteen
    assert HASHES["hash64"].python([-1], [TInt(True, 8)], None) == xxh64(b"\xff", SEED1)
    assert HASHES["hash64"].python([258], [TInt(False, 16)], None) == xxh64(b"\x02\x01", SEED1)
    wide_value = (1 << 127) | 5
    assert HASHES["hash128"].python([wide_value], [U128], None) == \
        (xxh64(wide_value.to_bytes(16, "little"), SEED1) << 64) | \
        xxh64(wide_value.to_bytes(16, "little"), SEED2)
    fails("input relation I(s: string)\noutput relation O(h: u64)\nO(hash64(s)) :- I(s).",
          "function 'hash64' expects a bool or an integer of a fixed width", "s)")
