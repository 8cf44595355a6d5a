"""ddlog_std's `hash64` and `hash128`: XXH64 (Rust's twox_hash) with ddlog_std's seeds, of the
bytes Rust's `Hash` writes for the value. Done for integers and bools, whose bytes are their
little-endian bits in their Rust width; other types (strings, bigint, collections, structs)
are hashed by Rust in ways not reproduced here and are refused.
"""
from __future__ import annotations

from ddlog.builtins.base import Args, Builtin
from ddlog.types import TInt, Type
from ddlog.values.rusthash import hash_bytes, rotl64, rust_bytes

# ddlog_std's seeds: hash64 is XXH64 with the first; hash128 puts the second's below it
SEED1, SEED2 = 0x23B691A751D0E108, 0x20B09801DCE5FF84
U64, U128 = TInt(False, 64), TInt(False, 128)
_M = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
P4, P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def xxh64(data: bytes, seed: int) -> int:
    """XXH64 of fewer than 32 bytes (the widest value hashed here has 16)."""
    h = (seed + P5 + len(data)) & _M
    i = 0
    while i + 8 <= len(data):
        k = (rotl64((int.from_bytes(data[i:i + 8], "little") * P2) & _M, 31) * P1) & _M
        h = (rotl64(h ^ k, 27) * P1 + P4) & _M
        i += 8
    if i + 4 <= len(data):
        h ^= (int.from_bytes(data[i:i + 4], "little") * P1) & _M
        h = (rotl64(h, 23) * P2 + P3) & _M
        i += 4
    for b in data[i:]:
        h = (rotl64(h ^ ((b * P5) & _M), 11) * P1) & _M
    h = ((h ^ (h >> 33)) * P2) & _M
    h = ((h ^ (h >> 29)) * P3) & _M
    return h ^ (h >> 32)


def _hash_type(result: Type):
    def rule(a: Args, hint) -> Type:
        t = a.infer(0)
        a.want(0, rust_bytes(t) is not None,
               "a bool or an integer of a fixed width (strings, bigint, collections and structs "
               "are hashed by Rust in ways not reproduced here)")
        return result
    return rule


HASHES: dict[str, Builtin] = {b.name: b for b in [
    Builtin("hash64", 1, "hash64(T) -> bit<64>, T a bool or fixed-width integer",
            "ddlog_std's hash (XXH64 of the bytes Rust hashes)", _hash_type(U64),
            lambda sx, a, ts, t: sx.xxhash64(a[0], ts[0], SEED1),
            lambda a, ts, t: xxh64(hash_bytes(a[0], ts[0]), SEED1), wide_integers=True),
    Builtin("hash128", 1, "hash128(T) -> bit<128>, T a bool or fixed-width integer",
            "ddlog_std's 128-bit hash (two XXH64 of the bytes Rust hashes)", _hash_type(U128),
            lambda sx, a, ts, t: sx.int_from_words(sx.xxhash64(a[0], ts[0], SEED1),
                                                   sx.xxhash64(a[0], ts[0], SEED2), U128),
            lambda a, ts, t: (xxh64(hash_bytes(a[0], ts[0]), SEED1) << 64)
            | xxh64(hash_bytes(a[0], ts[0]), SEED2), wide_integers=True),
]}
