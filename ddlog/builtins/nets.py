"""The built-ins under DDlog's `net` library (ddlog/builtins/lib/net/): IPv4 and IPv6
addresses read and written as Rust's std::net reads and writes them. An Ipv4Addr is its u32 and
an Ipv6Addr its u128 (as DDlog prints and stores them); these functions only parse and print.

On Spark an IPv6 address's eight 16-bit segments are an array of Longs, read from or written
to the u128's 32 hexadecimal digits.
"""
from __future__ import annotations

import re

from ddlog.builtins.base import Builtin, fixed
from ddlog.types import STRING, TInt, TOption, TTuple, TVec

U32, U128 = TInt(False, 32), TInt(False, 128)
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}"
_GROUP = r"[0-9a-fA-F]{1,4}"


# -- Python ----------------------------------------------------------------------------------

def _ipv4_python(s: str) -> int | None:
    if not re.fullmatch(_IPV4, s):
        return None
    a, b, c, d = (int(x) for x in s.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def _groups_python(part: str, last: bool) -> list[int] | None:
    """The segments a run of `:`-separated groups writes (an IPv4 address ends it when it is
    the address's last part), None when it is not one."""
    if part == "":
        return []
    tokens = part.split(":")
    tail: list[int] = []
    v4 = _ipv4_python(tokens[-1]) if last else None
    if v4 is not None:
        tokens, tail = tokens[:-1], [v4 >> 16, v4 & 0xFFFF]
    if not all(re.fullmatch(_GROUP, t) for t in tokens):
        return None
    return [int(t, 16) for t in tokens] + tail


def _ipv6_python(s: str) -> int | None:
    halves = s.split("::")
    if len(halves) > 2:
        return None
    if len(halves) == 1:
        segs = _groups_python(s, True)
        if segs is None or len(segs) != 8:
            return None
    else:
        head, tail = _groups_python(halves[0], False), _groups_python(halves[1], True)
        if head is None or tail is None or len(head) + len(tail) > 7:
            return None
        segs = head + [0] * (8 - len(head) - len(tail)) + tail
    return int("".join(f"{x:04x}" for x in segs), 16)


def _dotted(hi: int, lo: int) -> str:
    return f"{hi >> 8}.{hi & 255}.{lo >> 8}.{lo & 255}"


def _ipv6_text_python(u: int) -> str:
    """Rust's Display of an Ipv6Addr: `::`, `::1`, an IPv4-compatible `::a.b.c.d` or mapped
    `::ffff:a.b.c.d` address, else hexadecimal segments with the first longest run of zeros
    (two or more) written `::`."""
    segs = [(u >> (16 * (7 - k))) & 0xFFFF for k in range(8)]
    if segs == [0] * 8:
        return "::"
    if segs == [0] * 7 + [1]:
        return "::1"
    if segs[:6] == [0] * 6:
        return "::" + _dotted(segs[6], segs[7])
    if segs[:5] == [0] * 5 and segs[5] == 0xFFFF:
        return "::ffff:" + _dotted(segs[6], segs[7])
    start, length = _zero_run(segs)
    text = [format(x, "x") for x in segs]
    if length < 2:
        return ":".join(text)
    return ":".join(text[:start]) + "::" + ":".join(text[start + length:])


def _zero_run(segs: list[int]) -> tuple[int, int]:
    best, cur = (0, 0), (0, 0)
    for k, x in enumerate(segs):
        cur = (cur[0], cur[1] + 1) if x == 0 else (k + 1, 0)
        if cur[1] > best[1]:
            best = cur
    return best


# -- Spark -----------------------------------------------------------------------------------

def _ipv4_spark(sx, args, types, ty):
    F = sx.F
    s = args[0]
    parts = F.split(s, r"\.")
    value = F.aggregate(parts, F.lit(0).cast("long"),
                        lambda acc, p: acc * 256 + p.cast("long"))
    return F.when(s.rlike(f"^{_IPV4}$"), value)


def _segments_spark(sx, part, last: bool):
    """(the segments of a run of groups, whether it is one), as _groups_python."""
    F = sx.F
    tokens = F.when(part == "", F.array().cast("array<string>")).otherwise(F.split(part, ":"))
    v4 = F.try_element_at(tokens, F.lit(-1)).rlike(f"^{_IPV4}$") if last else F.lit(False)
    v4 = F.coalesce(v4 & (F.size(tokens) > 0), F.lit(False))
    groups = F.when(v4, F.slice(tokens, 1, F.size(tokens) - 1)).otherwise(tokens)
    ok = F.forall(groups, lambda t: t.rlike(f"^{_GROUP}$"))
    octets = F.split(F.try_element_at(tokens, F.lit(-1)), r"\.")

    def octet(k: int):
        return F.try_element_at(octets, F.lit(k)).cast("long")
    tail = F.when(v4, F.array(octet(1) * 256 + octet(2), octet(3) * 256 + octet(4))) \
        .otherwise(F.array().cast("array<bigint>"))
    return F.concat(F.transform(groups, lambda t: F.conv(t, 16, 10).cast("long")), tail), ok


def _ipv6_spark(sx, args, types, ty):
    F = sx.F

    def parsed(s):
        halves = F.split(s, "::", -1)
        whole, whole_ok = _segments_spark(sx, s, True)
        head, head_ok = _segments_spark(sx, F.element_at(halves, 1), False)
        tail, tail_ok = _segments_spark(sx, F.element_at(halves, -1), True)
        n = F.size(head) + F.size(tail)
        filled = F.concat(head, F.array_repeat(F.lit(0).cast("long"), (8 - n).cast("int")),
                          tail)
        segs = F.when(F.size(halves) == 1, F.when(whole_ok & (F.size(whole) == 8), whole)) \
            .when((F.size(halves) == 2) & head_ok & tail_ok & (n <= 7), filled)
        return sx.let(segs, lambda g: F.when(g.isNotNull(), sx.int_from_words(
            _word(F, g, 0), _word(F, g, 4), U128)))
    return sx.let(args[0], parsed)


def _word(F, segs, first: int):
    """The Long whose 64 bits four segments are, from segment `first`."""
    out = F.lit(0).cast("long")
    for k in range(4):
        out = out.bitwiseOR(F.shiftleft(F.element_at(segs, first + k + 1), 48 - 16 * k))
    return out


def _ipv6_text_spark(sx, args, types, ty):
    F = sx.F
    digits = F.lpad(sx.hex(args[0], U128), 32, "0")

    def text(d):
        segs = F.transform(F.sequence(F.lit(0), F.lit(7)),
                           lambda k: F.conv(F.substring(d, k * 4 + 1, 4), 16, 10).cast("long"))
        return sx.let(segs, written)

    def written(g):
        def at(k: int):
            return F.element_at(g, k + 1)
        zeros = [at(k) == 0 for k in range(8)]
        first = zeros[0]
        for z in zeros[1:6]:
            first = first & z
        dotted = F.format_string("%d.%d.%d.%d", F.shiftright(at(6), 8), at(6).bitwiseAND(255),
                                 F.shiftright(at(7), 8), at(7).bitwiseAND(255))
        hexes = F.transform(g, lambda x: F.lower(F.hex(x)))
        return (F.when(first & zeros[6] & zeros[7], F.lit("::"))
                .when(first & zeros[6] & (at(7) == 1), F.lit("::1"))
                .when(first, F.concat(F.lit("::"), dotted))
                .when(zeros[0] & zeros[1] & zeros[2] & zeros[3] & zeros[4] & (at(5) == 0xFFFF),
                      F.concat(F.lit("::ffff:"), dotted))
                .otherwise(_compressed(F, g, hexes)))
    return sx.let(digits, text)


def _compressed(F, segs, hexes):
    """The segments with the first longest run of two or more zeros written `::`."""
    start = F.struct(F.lit(0).alias("bs"), F.lit(0).alias("bl"), F.lit(0).alias("cs"),
                     F.lit(0).alias("cl"), F.lit(0).alias("k"))

    def step(acc, x):
        cs = F.when(x == 0, acc["cs"]).otherwise(acc["k"] + 1)
        cl = F.when(x == 0, acc["cl"] + 1).otherwise(F.lit(0))
        better = cl > acc["bl"]
        return F.struct(F.when(better, cs).otherwise(acc["bs"]).alias("bs"),
                        F.when(better, cl).otherwise(acc["bl"]).alias("bl"), cs.alias("cs"),
                        cl.alias("cl"), (acc["k"] + 1).alias("k"))
    run = F.aggregate(segs, start, step)
    head = F.array_join(F.slice(hexes, 1, run["bs"]), ":")
    rest = F.array_join(F.slice(hexes, run["bs"] + run["bl"] + 1, 8), ":")
    return F.when(run["bl"] < 2, F.array_join(hexes, ":")) \
        .otherwise(F.concat(head, F.lit("::"), rest))


def _ipv4_text_spark(sx, args, types, ty):
    F = sx.F
    return sx.let(args[0], lambda x: F.format_string(
        "%d.%d.%d.%d", *[F.shiftright(x, 8 * k).bitwiseAND(255) for k in (3, 2, 1, 0)]))


def _parts_spark(bits: int, as_tuple: bool):
    """A u128's 16-bit segments or 8-bit octets, most significant first, as a Vec or a tuple."""
    width = bits // 4  # hexadecimal digits each

    def lower(sx, args, types, ty):
        F = sx.F

        def split(d):
            parts = [F.conv(F.substring(d, k * width + 1, width), 16, 10).cast("long")
                     for k in range(128 // bits)]
            if as_tuple:
                return F.struct(*[p.alias(f"_{k}") for k, p in enumerate(parts)])
            return F.array(*parts)
        return sx.let(F.lpad(sx.hex(args[0], U128), 32, "0"), split)
    return lower


def _parts_python(bits: int, u: int) -> tuple[int, ...]:
    n = 128 // bits
    return tuple((u >> (bits * (n - 1 - k))) & ((1 << bits) - 1) for k in range(n))


def _parts(name: str, bits: int, as_tuple: bool) -> Builtin:
    part = TInt(False, bits)
    n = 128 // bits
    result = TTuple((part,) * n) if as_tuple else TVec(part)
    shown = f"({part}, ..., {part})" if as_tuple else f"Vec<{part}>"
    return Builtin(name, 1, f"{name}(u128) -> {shown}",
                   f"a u128's {n} {bits}-bit parts, most significant first",
                   fixed(U128, result=result), _parts_spark(bits, as_tuple),
                   lambda a, ts, t: _parts_python(bits, a[0]))


NETS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("ipv4_text", 1, "ipv4_text(u32) -> string",
            "an IPv4 address written as four decimal octets", fixed(U32, result=STRING),
            _ipv4_text_spark,
            lambda a, ts, t: _dotted(a[0] >> 16, a[0] & 0xFFFF)),
    *[_parts(name, bits, as_tuple) for name, bits, as_tuple in (
        ("u128_segments", 16, True), ("u128_segment_vec", 16, False),
        ("u128_octets", 8, True), ("u128_octet_vec", 8, False))],
    Builtin("ipv4_parse", 1, "ipv4_parse(string) -> Option<u32>",
            "an IPv4 address written as four decimal octets, as Rust reads one",
            fixed(STRING, result=TOption(U32)), _ipv4_spark,
            lambda a, ts, t: _ipv4_python(a[0])),
    Builtin("ipv6_parse", 1, "ipv6_parse(string) -> Option<u128>",
            "an IPv6 address (groups, one `::`, a final IPv4 address), as Rust reads one",
            fixed(STRING, result=TOption(U128)), _ipv6_spark,
            lambda a, ts, t: _ipv6_python(a[0])),
    Builtin("ipv6_text", 1, "ipv6_text(u128) -> string",
            "an IPv6 address written as Rust writes one (`::1`, `::ffff:192.0.2.1`, `a::b`)",
            fixed(U128, result=STRING), _ipv6_text_spark,
            lambda a, ts, t: _ipv6_text_python(a[0])),
]}
