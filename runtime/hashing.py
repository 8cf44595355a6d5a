"""DDlog's `hash64` and `hash128` (ddlog/builtins/hashes.py) as Spark Columns: XXH64, as
Rust's twox_hash computes it, of the bytes Rust's `Hash` writes for the value, its
little-endian bytes in its Rust width (u8, u16, u32, u64, u128).

A round reads its state several times, so each is bound once (`wide.bind`): nested rounds
would otherwise repeat their whole expression.
"""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from ddlog.builtins.hashes import P1, P2, P3, P4, P5
from ddlog.values.rusthash import rust_bytes
from ddlog.runtime import wide
from ddlog.types import TBool, Type


def _long(v: int) -> Column:
    v %= 1 << 64
    return F.lit(v - (1 << 64) if v >= 1 << 63 else v).cast("long")


def _times(x: Column, prime: int) -> Column:
    return wide.low_product(x, _long(prime))


def _plus(x: Column, prime: int) -> Column:
    return wide.add64(x, _long(prime), F.lit(0).cast("long"))[0]


def _rotl(x: Column, r: int) -> Column:
    return F.shiftleft(x, r).bitwiseOR(F.call_function("shiftrightunsigned", x, F.lit(64 - r)))


def _lanes(c: Column, t: Type) -> list[tuple[Column, int]]:
    """The value's bytes as XXH64 reads them: 8-byte lanes, then a 4-byte one, then bytes."""
    n = rust_bytes(t)
    if isinstance(t, TBool):
        return [(F.when(c, F.lit(1)).otherwise(F.lit(0)).cast("long"), 1)]
    if n == 16:
        hi, lo = wide.words(c, t)
        return [(lo, 8), (hi, 8)]
    if n == 8:
        return [(c, 8)]
    if n == 4:
        return [(c.bitwiseAND(F.lit((1 << 32) - 1)), 4)]
    return [(F.shiftright(c, 8 * k).bitwiseAND(F.lit(255)), 1) for k in range(n)]


def xxhash64(c: Column, t: Type, seed: int) -> Column:
    """XXH64 of the value's bytes, as a Long holding the u64's bits."""
    lanes = _lanes(c, t)
    h = _long(seed + P5 + sum(size for _, size in lanes))
    for lane, size in lanes:
        if size == 8:
            k = _times(_rotl(_times(lane, P2), 31), P1)
            h = wide.bind(h.bitwiseXOR(k), lambda x: _plus(_times(_rotl(x, 27), P1), P4))
        elif size == 4:
            h = wide.bind(h.bitwiseXOR(_times(lane, P1)),
                          lambda x: _plus(_times(_rotl(x, 23), P2), P3))
        else:
            h = wide.bind(h.bitwiseXOR(_times(lane, P5)), lambda x: _times(_rotl(x, 11), P1))

    def shifted_xor(x: Column, r: int) -> Column:
        return x.bitwiseXOR(F.call_function("shiftrightunsigned", x, F.lit(r)))
    h = wide.bind(h, lambda x: _times(shifted_xor(x, 33), P2))
    h = wide.bind(h, lambda x: _times(shifted_xor(x, 29), P3))
    return wide.bind(h, lambda x: shifted_xor(x, 32))
