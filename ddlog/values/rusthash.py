"""The order in which DDlog's `hashset` library prints a HashSet: Rust's hash order.

DDlog's HashSet is an `im` hash trie over Rust's default hasher with fixed keys (SipHash-1-3,
keys 0 and 0). Its ordered iterator walks the trie: by the low 32 bits of an element's hash,
five bits at a time from the lowest, elements of one hash by value. Two HashSets compare by
size, then element by element in that order. The hash is of the bytes Rust's `Hash` feeds the
hasher: an integer's little-endian bytes at its Rust width (`bit<N>` the least of 8, 16, 32,
64, 128 bits holding N; `usize` 64), a bool's byte, a string's UTF-8 bytes and 0xff, a tuple's
or a struct's fields in order (after its constructor's index as 8 bytes when it has several),
a Vec's, Set's or Map's length as 8 bytes then its elements, an Option as an enum of None and
Some. A `bigint`, a float and the types built from them hash as Rust's crates do, which this
does not model: their HashSets print in value order (`hash_bytes` gives None).
"""
from __future__ import annotations

from typing import Any

from ddlog.types import (TBool, TInt, TMap, TOption, TSet, TString, TStruct, TTuple, TVec,
                         Type)

_MASK = (1 << 64) - 1


def rotl64(x: int, b: int) -> int:
    """A 64-bit word rotated left by b bits."""
    return ((x << b) | (x >> (64 - b))) & _MASK


def rust_bytes(t: Type) -> int | None:
    """How many bytes Rust's `Hash` writes for a value of `t` when it is a bool or a
    fixed-width integer (its width rounded up to u8, u16, u32, u64 or u128); None otherwise."""
    if isinstance(t, TBool):
        return 1
    if isinstance(t, TInt) and t.width is not None:
        return next(n for n in (1, 2, 4, 8, 16) if t.width <= 8 * n)
    return None


def _round(v: list[int]) -> None:
    v[0] = (v[0] + v[1]) & _MASK
    v[1] = rotl64(v[1], 13) ^ v[0]
    v[0] = rotl64(v[0], 32)
    v[2] = (v[2] + v[3]) & _MASK
    v[3] = rotl64(v[3], 16) ^ v[2]
    v[0] = (v[0] + v[3]) & _MASK
    v[3] = rotl64(v[3], 21) ^ v[0]
    v[2] = (v[2] + v[1]) & _MASK
    v[1] = rotl64(v[1], 17) ^ v[2]
    v[2] = rotl64(v[2], 32)


def siphash13(data: bytes, k0: int = 0, k1: int = 0) -> int:
    """SipHash-1-3 (one compression round per word, three finalisation rounds), as Rust's
    `DefaultHasher` computes it."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    whole = len(data) - len(data) % 8
    for i in range(0, whole, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v[3] ^= m
        _round(v)
        v[0] ^= m
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v[3] ^= last
    _round(v)
    v[0] ^= last
    v[2] ^= 0xFF
    for _ in range(3):
        _round(v)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _length(n: int) -> bytes:
    return n.to_bytes(8, "little")


def hash_bytes(v: Any, t: Type) -> bytes | None:
    """The bytes Rust's `Hash` of the value gives the hasher (None: not modelled)."""
    n = rust_bytes(t)
    if n is not None:  # its little-endian bits
        return (int(v) % (1 << (8 * n))).to_bytes(n, "little")
    if isinstance(t, TString):
        return v.encode("utf-8") + b"\xff"
    if isinstance(t, TTuple):
        return _concat(hash_bytes(x, it) for x, it in zip(v, t.items))
    if isinstance(t, (TVec, TSet, TMap)):  # a Map's elements: its (key, value) pairs
        return _concat([_length(len(v)), *(hash_bytes(x, t.elem) for x in v)])
    if isinstance(t, TOption):
        if v is None:
            return _length(0)
        return _concat([_length(1), hash_bytes(v, t.elem)])
    if isinstance(t, TStruct):
        ctor = t.ctor(v.ctor)
        tag = [_length(t.ctors.index(ctor))] if len(t.ctors) > 1 else []
        return _concat([*tag, *(hash_bytes(x, ft) for (_, ft), x in zip(ctor.fields,
                                                                         v.values))])
    return None


def _concat(parts) -> bytes | None:
    parts = list(parts)
    return None if any(p is None for p in parts) else b"".join(parts)


def trie_key(h: int) -> tuple[int, ...]:
    """Where a hash puts an element in the trie: its low 32 bits five at a time, lowest
    first."""
    h &= 0xFFFFFFFF
    return tuple((h >> shift) & 31 for shift in range(0, 32, 5))


def hash_order(items: tuple, t: TSet, value_key) -> tuple:
    """A HashSet's elements (`items`, in value order) in the order DDlog's iterator gives
    them; `value_key` orders the elements of one hash. Unchanged when the element type's
    hash is not modelled."""
    keyed = []
    for x in items:
        b = hash_bytes(x, t.elem)
        if b is None:
            return items
        keyed.append((trie_key(siphash13(b)), value_key(x), x))
    return tuple(x for _, _, x in sorted(keyed, key=lambda e: (e[0], e[1])))
