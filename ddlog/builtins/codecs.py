"""DDlog's `base64` library: `encode(Vec<u8>): string` and `decode(string): Result<Vec<u8>,
string>`, the standard alphabet with `=` padding, and the error texts of DDlog's library
(`Invalid byte 32 at position 5`, `Invalid length`, `Invalid last byte 85 at position 3`).

They are `base64_encode` and `base64_decode` here (ddlog/syntax/modules.py maps the module's
names to them). On Spark: the bytes as hex digits to Spark's binary and back; the first byte
outside the alphabet found by a regular expression. Positions count characters, which are
DDlog's bytes for ASCII text. Also ddlog_std's `string_to_bytes`, and the bytes <-> hex digits
helpers the uuid built-ins share.
"""
from __future__ import annotations

import base64
import re

from ddlog.builtins.base import Args, Builtin, fixed, result_column
from ddlog.types import STRING, TInt, TVec, Type, result_type
from ddlog.values import Record

U8 = TInt(False, 8)
BYTES = TVec(U8)
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_OUTSIDE = "[^A-Za-z0-9+/]"


def _encode_type(a: Args, hint) -> Type:
    a.check(0, BYTES)
    return STRING


def _decode_type(a: Args, hint) -> Type:
    a.check(0, STRING)
    return result_type(BYTES, STRING)


def _decode_python(s: str) -> Record:
    body = s.rstrip("=")
    pad = len(s) - len(body)
    bad = re.search(_OUTSIDE, body)
    if bad is not None:
        return Record("Err", (f"Invalid byte {ord(bad.group())} at position {bad.start()}",))
    if pad > 2 or len(body) % 4 == 1:
        return Record("Err", ("Invalid length",))
    spare = {2: 0b1111, 3: 0b11}.get(len(body) % 4, 0)
    if spare and ALPHABET.index(body[-1]) & spare:
        return Record("Err", (f"Invalid last byte {ord(body[-1])} at position "
                              f"{len(body) - 1}",))
    return Record("Ok", (tuple(base64.b64decode(body + "=" * (-len(body) % 4))),))


def bytes_hex(sx, b):
    """A Vec<u8> as hexadecimal digits, two a byte (Spark's way to binary: `unhex`)."""
    F = sx.F
    return F.concat_ws("", F.transform(b, lambda x: F.lpad(F.hex(x), 2, "0")))


def hex_bytes(sx, hexed):
    """The Vec<u8> that hexadecimal digits (two a byte, as Spark's `hex` of binary) write."""
    F = sx.F
    count = F.length(hexed) / 2
    data = F.transform(F.sequence(F.lit(0), (count - 1).cast("int")),
                       lambda i: F.conv(F.substring(hexed, i * 2 + 1, 2), 16, 10).cast("long"))
    return F.when(count > 0, data).otherwise(F.array().cast(sx.spark_type(BYTES)))


def _encode_spark(sx, args, types, ty):
    F = sx.F
    # Spark may break its base64 into MIME lines: DDlog's is one line
    return F.regexp_replace(F.base64(F.unhex(bytes_hex(sx, args[0]))), "[\\r\\n]", "")


def _decode_spark(sx, args, types, ty):
    F = sx.F
    s = args[0]
    body = F.regexp_replace(s, "=+$", "")
    n = F.length(body)
    pad = F.length(s) - n
    bad = F.call_function("regexp_instr", body, F.lit(_OUTSIDE))  # 1-based, 0: none
    last = F.substring(body, n, 1)
    value = F.instr(F.lit(ALPHABET), last) - 1
    spare = F.when(n % 4 == 2, F.lit(15)).when(n % 4 == 3, F.lit(3)).otherwise(F.lit(0))
    err = (F.when(bad > 0, F.format_string("Invalid byte %d at position %d",
                                           F.ascii(F.substring(body, bad, 1)), bad - 1))
           .when((pad > 2) | (n % 4 == 1), F.lit("Invalid length"))
           .when((spare > 0) & ((value.bitwiseAND(spare)) != 0),
                 F.format_string("Invalid last byte %d at position %d", F.ascii(last), n - 1)))
    padded = F.concat(body, F.when(n % 4 == 2, F.lit("==")).when(n % 4 == 3, F.lit("="))
                      .otherwise(F.lit("")))
    ok = err.isNull()
    return result_column(sx, ok, hex_bytes(sx, F.hex(F.unbase64(padded))), err, ty)


CODECS: dict[str, Builtin] = {b.name: b for b in [
    Builtin("base64_encode", 1, "base64_encode(Vec<u8>) -> string",
            "base64 (DDlog's base64::encode)", _encode_type, _encode_spark,
            lambda a, ts, t: base64.b64encode(bytes(a[0])).decode("ascii")),
    Builtin("base64_decode", 1, "base64_decode(string) -> Result<Vec<u8>, string>",
            "the bytes of a base64 text, or what is wrong with it (DDlog's base64::decode)",
            _decode_type, _decode_spark, lambda a, ts, t: _decode_python(a[0])),
    Builtin("string_to_bytes", 1, "string_to_bytes(string) -> Vec<u8>",
            "the string's UTF-8 bytes (ddlog_std's)", fixed(STRING, result=BYTES),
            lambda sx, a, ts, t: hex_bytes(sx, sx.F.hex(sx.F.encode(a[0], "UTF-8"))),
            lambda a, ts, t: tuple(a[0].encode("utf-8"))),
]}
