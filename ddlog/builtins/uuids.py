"""The built-ins under DDlog's `uuid` library (ddlog/builtins/lib/uuid.dl), where a Uuid is its
u128 (as DDlog prints and stores one).

On Spark a u128's 32 hexadecimal digits are the bridge: bytes become digits, digits become
the two words of a u128 (`Lowering.int_from_words`), a version-5 UUID is Spark's sha1 of the
namespace's and the name's bytes.
"""
from __future__ import annotations

import hashlib
import re

from ddlog.builtins.base import Builtin, fixed, result_column
from ddlog.builtins.codecs import bytes_hex
from ddlog.types import STRING, TInt, TVec, result_type
from ddlog.values import Record

U128 = TInt(False, 128)
U8 = TInt(False, 8)
BYTES = TVec(U8)
_HYPHENATED = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                         r"[0-9a-fA-F]{12}")
_SIMPLE = re.compile(r"[0-9a-fA-F]{32}")


# -- Python ----------------------------------------------------------------------------------

def _v5(namespace: int, name: tuple[int, ...]) -> int:
    digest = bytearray(hashlib.sha1(namespace.to_bytes(16, "big") + bytes(name)).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    return int.from_bytes(digest, "big")


def _hyphenated_python(u: int) -> str:
    d = format(u, "032x")
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:]}"


def _parse_python(s: str) -> Record:
    text = s[len("urn:uuid:"):] if s.startswith("urn:uuid:") else s
    if _SIMPLE.fullmatch(text) or _HYPHENATED.fullmatch(text):
        return Record("Ok", (int(text.replace("-", ""), 16),))
    return Record("Err", (_parse_error(text),))


def _parse_error(text: str) -> str:
    if len(text) not in (32, 36):
        return f"invalid length: expected one of [36, 32], found {len(text)}"
    bad = re.search(r"[^0-9a-fA-F-]", text)
    if bad:
        return (f"invalid character: expected an optional prefix of `urn:uuid:` followed by "
                f"[0-9a-fA-F-], found `{bad.group()}` at {bad.start() + 1}")
    return "invalid group: expected groups of 8-4-4-4-12 hexadecimal digits"


def _from_bytes_python(b: tuple[int, ...]) -> Record:
    if len(b) != 16:
        return Record("Err", (f"invalid bytes length: expected 16, found {len(b)}",))
    return Record("Ok", (int.from_bytes(bytes(b), "big"),))


# -- Spark -----------------------------------------------------------------------------------

def _digits(sx, u):
    """The u128's 32 lower-case hexadecimal digits."""
    return sx.F.lpad(sx.hex(u, U128), 32, "0")


def _from_digits(sx, digits):
    """The u128 that 32 hexadecimal digits write."""
    F = sx.F

    def word(d, k: int):
        return sx.u64_from_decimal(F.conv(F.substring(d, k, 16), 16, 10)
                                   .cast("decimal(20,0)"))
    return sx.let(digits, lambda d: sx.int_from_words(word(d, 1), word(d, 17), U128))


def _hyphenated_spark(sx, args, types, ty):
    F = sx.F
    return F.regexp_replace(_digits(sx, args[0]), "^(.{8})(.{4})(.{4})(.{4})(.{12})$",
                            "$1-$2-$3-$4-$5")


def _swap_spark(sx, args, types, ty):
    F = sx.F
    pairs = F.regexp_extract_all(_digits(sx, args[0]), F.lit("(..)"), 1)
    return _from_digits(sx, F.concat_ws("", F.reverse(pairs)))


def _v5_spark(sx, args, types, ty):
    F = sx.F

    def digits(h):
        variant = F.lower(F.hex(F.conv(F.substring(h, 17, 1), 16, 10).cast("int")
                                .bitwiseAND(F.lit(3)).bitwiseOR(F.lit(8))))
        return F.concat(F.substring(h, 1, 12), F.lit("5"), F.substring(h, 14, 3), variant,
                        F.substring(h, 18, 15))
    h = F.sha1(F.unhex(F.concat(_digits(sx, args[0]), bytes_hex(sx, args[1]))))
    return _from_digits(sx, sx.let(h, digits))


def _parse_spark(sx, args, types, ty):
    F = sx.F
    s = args[0]
    return sx.let(F.when(s.startswith("urn:uuid:"), F.substring(s, 10, 1 << 20)).otherwise(s),
                  lambda text: _parsed(sx, text, ty))


def _parsed(sx, text, ty):
    F = sx.F
    n = F.length(text)
    ok = text.rlike(f"^({_SIMPLE.pattern}|{_HYPHENATED.pattern})$")
    bad = F.call_function("regexp_instr", text, F.lit("[^0-9a-fA-F-]"))  # 1-based, 0: none
    err = (F.when(~n.isin(32, 36), F.format_string(
        "invalid length: expected one of [36, 32], found %d", n))
        .when(bad > 0, F.format_string(
            "invalid character: expected an optional prefix of `urn:uuid:` followed by "
            "[0-9a-fA-F-], found `%s` at %d", F.substring(text, bad, 1), bad))
        .otherwise(F.lit("invalid group: expected groups of 8-4-4-4-12 hexadecimal digits")))
    value = _from_digits(sx, F.lower(F.regexp_replace(text, "-", "")))
    return result_column(sx, ok, value, err, ty)


def _from_bytes_spark(sx, args, types, ty):
    F = sx.F

    def parsed(b):
        n = F.size(b)
        err = F.format_string("invalid bytes length: expected 16, found %d", n)
        return result_column(sx, n == 16, _from_digits(sx, bytes_hex(sx, b)), err, ty)
    return sx.let(args[0], parsed)


UUIDS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("uuid_digits", 1, "uuid_digits(u128) -> string",
            "the 32 lower-case hexadecimal digits of a u128", fixed(U128, result=STRING),
            lambda sx, a, ts, t: _digits(sx, a[0]), lambda a, ts, t: format(a[0], "032x")),
    Builtin("uuid_hyphenated", 1, "uuid_hyphenated(u128) -> string",
            "the 32 lower-case hexadecimal digits of a u128 as 8-4-4-4-12, with hyphens",
            fixed(U128, result=STRING), _hyphenated_spark,
            lambda a, ts, t: _hyphenated_python(a[0])),
    Builtin("uuid_swap_bytes", 1, "uuid_swap_bytes(u128) -> u128",
            "the u128 whose bytes are its argument's in the other order",
            fixed(U128, result=U128), _swap_spark,
            lambda a, ts, t: int.from_bytes(a[0].to_bytes(16, "big"), "little")),
    Builtin("uuid_v5", 2, "uuid_v5(u128, Vec<u8>) -> u128",
            "the version-5 UUID (SHA-1) of a name in a namespace",
            fixed(U128, BYTES, result=U128), _v5_spark, lambda a, ts, t: _v5(a[0], a[1])),
    Builtin("uuid_parse", 1, "uuid_parse(string) -> Result<u128, string>",
            "a UUID written simple, hyphenated or as a `urn:uuid:` URN",
            fixed(STRING, result=result_type(U128, STRING)), _parse_spark,
            lambda a, ts, t: _parse_python(a[0])),
    Builtin("uuid_from_bytes", 1, "uuid_from_bytes(Vec<u8>) -> Result<u128, string>",
            "the UUID of 16 bytes, most significant first",
            fixed(BYTES, result=result_type(U128, STRING)), _from_bytes_spark,
            lambda a, ts, t: _from_bytes_python(a[0])),
]}
