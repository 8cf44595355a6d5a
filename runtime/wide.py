"""Integers a Long does not hold as a number, as Spark Columns.

- bit<64> (u64, usize) has no Spark type: its values are stored as their 64 bits in a Long,
  from 2^63 up as negative Longs (ddlog.types.is_u64). Equality, hashing, +, -, * and the
  bitwise operators are the same on the bits; ordering, division, `>>`, widening and text are
  not, and go through the functions below. A 20-digit decimal holds every unsigned value.
- bit<N> and signed<N> wider than 64 bits (u128, s128; ddlog.types.is_wide) are a struct of two
  Longs, `hi` and `lo`: the value's upper and lower 64 bits, `lo` with its top bit flipped (the
  lower word counts from 0), `hi` too when the type is unsigned. Spark's order of the struct
  is then the numbers' order, so equality, hashing, sorting, min and max are Spark's own; the
  operators take the words apart (`words`), compute on their bits (sums in 32-bit halves,
  products through decimals, so that no Long overflows: ANSI mode would make that an error),
  and put them back (`join`), which wraps to the type's width.
"""
from __future__ import annotations

from typing import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ddlog.types import TInt

_DEC = "decimal(20,0)"
_LONG_MIN = -(1 << 63)
_LOW32 = (1 << 32) - 1


def _dec(value: int, digits: int = 21) -> Column:
    return F.lit(str(value)).cast(f"decimal({digits},0)")


def _two64() -> Column:
    return _dec(1 << 64)


def _shl(x: Column, k: Column) -> Column:
    return F.call_function("shiftleft", x, k.cast("int"))


def _shr(x: Column, k: Column) -> Column:
    return F.call_function("shiftright", x, k.cast("int"))


def _ushr(x: Column, k: Column) -> Column:
    return F.call_function("shiftrightunsigned", x, k.cast("int"))


def _div(a: Column, b: Column) -> Column:
    """Integral division of decimals whose quotient fits a Long."""
    return F.call_function("div", a, b)


# -- bit<64> ---------------------------------------------------------------------------------

def unsigned_value(c: Column) -> Column:
    """The unsigned value of a bit<64> stored as a Long, as a decimal."""
    return F.when(c >= 0, c.cast(_DEC)).otherwise((c.cast(_DEC) + _two64()).cast(_DEC))


def u64_from_decimal(d: Column) -> Column:
    """The bit<64> an integral decimal is (its bits in a Long), null outside 0 to 2^64 - 1."""
    return F.when((d >= 0) & (d < _two64()), long_bits(d))


def long_bits(d: Column) -> Column:
    """The Long holding the low 64 bits of an integral decimal (its value modulo 2^64, in
    two's complement), reading `d` once."""
    return (F.pmod(d + _dec(1 << 63), _two64()) - _dec(1 << 63)).cast("long")


# -- wider than 64 bits ----------------------------------------------------------------------

Words = tuple[Column, Column]  # (upper, lower) 64 bits of a value, as Longs


def stored(value: int, t: TInt) -> tuple[int, int]:
    """The (hi, lo) Longs that store `value` (in the range of `t`)."""
    bits = value % (1 << 128)
    hi, lo = bits >> 64, bits & ((1 << 64) - 1)
    if t.signed:
        hi = hi - (1 << 64) if hi >= 1 << 63 else hi
    else:
        hi -= 1 << 63
    return hi, lo - (1 << 63)


def value_of(hi: int, lo: int, t: TInt) -> int:
    """The number the stored (hi, lo) Longs hold (`stored`'s inverse)."""
    upper = hi if t.signed else hi + (1 << 63)
    return upper * (1 << 64) + lo + (1 << 63)


def literal(value: int, t: TInt) -> Column:
    hi, lo = stored(value, t)
    return F.struct(F.lit(hi).cast("long").alias("hi"), F.lit(lo).cast("long").alias("lo"))


def words(c: Column, t: TInt) -> Words:
    hi = c.getField("hi")
    return (hi if t.signed else hi.bitwiseXOR(F.lit(_LONG_MIN))), \
        c.getField("lo").bitwiseXOR(F.lit(_LONG_MIN))


def join(w: Words, t: TInt) -> Column:
    """The stored value of the words, wrapped to the width of `t` (two's complement)."""
    hi, lo = w
    spare = 128 - (t.width or 128)
    if spare and t.signed:
        hi = F.shiftright(F.shiftleft(hi, spare), spare)
    elif spare:
        hi = hi.bitwiseAND(F.lit((1 << (64 - spare)) - 1))
    if not t.signed:
        hi = hi.bitwiseXOR(F.lit(_LONG_MIN))
    return F.struct(hi.alias("hi"), lo.bitwiseXOR(F.lit(_LONG_MIN)).alias("lo"))


def from_long(c: Column, signed: bool) -> Words:
    """The words of a Long holding a signed value (`signed`) or unsigned bits."""
    return (F.shiftright(c, 63) if signed else F.lit(0).cast("long")), c


def add64(x: Column, y: Column, carry: Column) -> Words:
    """The unsigned sum of two Longs and a carry (0 or 1), as (its low 64 bits, the carry
    out), in 32-bit halves so that no Long overflows."""
    low = x.bitwiseAND(F.lit(_LOW32)) + y.bitwiseAND(F.lit(_LOW32)) + carry
    high = _ushr(x, F.lit(32)) + _ushr(y, F.lit(32)) + _ushr(low, F.lit(32))
    return F.shiftleft(high, 32).bitwiseOR(low.bitwiseAND(F.lit(_LOW32))), \
        _ushr(high, F.lit(32))


def _sum(a: Words, b: Words, carry: Column) -> Words:
    low, out = add64(a[1], b[1], carry)
    return add64(a[0], b[0], out)[0], low


def add(a: Words, b: Words) -> Words:
    return _sum(a, b, F.lit(0).cast("long"))


def subtract(a: Words, b: Words) -> Words:
    """a + ~b + 1 (two's complement)."""
    return _sum(a, invert(b), F.lit(1).cast("long"))


def negate(a: Words) -> Words:
    zero = F.lit(0).cast("long")
    return _sum((zero, zero), invert(a), F.lit(1).cast("long"))


def low_product(x: Column, y: Column) -> Column:
    """The low 64 bits of the product of two Longs (the product of two signed Longs stays
    below 2^126, which a 38-digit decimal holds)."""
    return long_bits(x.cast(_DEC) * y.cast(_DEC))


def _full_product(x: Column, y: Column) -> Words:
    """The 128 bits of the product of two Longs' unsigned values, from their 32-bit halves."""
    halves = [(v.bitwiseAND(F.lit(_LOW32)).cast(_DEC), _ushr(v, F.lit(32)).cast(_DEC))
              for v in (x, y)]
    (x0, x1), (y0, y1) = halves
    middle = x0 * y1 + x1 * y0
    low = x0 * y0 + F.pmod(middle, _dec(1 << 32)) * _dec(1 << 32)
    high = x1 * y1 + _div(middle, _dec(1 << 32)).cast(_DEC) + _div(low, _two64()).cast(_DEC)
    return long_bits(high), long_bits(low)


def multiply(a: Words, b: Words) -> Words:
    """The product modulo 2^128 (so in two's complement too)."""
    high, low = _full_product(a[1], b[1])
    cross = [low_product(a[0], b[1]), low_product(a[1], b[0])]
    return long_bits(high.cast(_DEC) + cross[0].cast(_DEC) + cross[1].cast(_DEC)), low


def _negative(a: Words) -> Column:
    return a[0] < 0


def _unsigned_less(a: Words, b: Words) -> Column:
    flip = F.lit(_LONG_MIN)
    ah, bh = a[0].bitwiseXOR(flip), b[0].bitwiseXOR(flip)
    return (ah < bh) | ((ah == bh) & (a[1].bitwiseXOR(flip) < b[1].bitwiseXOR(flip)))


def _shift1(a: Words, bit: Column) -> Words:
    """(a << 1) | bit, within 128 bits."""
    return _shifted(a, 1)[0], F.shiftleft(a[1], 1).bitwiseOR(bit)


def _bit(a: Words, k: Column) -> Column:
    """Bit `k` (0 to 127) of the words, as a Long 0 or 1."""
    word = F.when(k >= 64, a[0]).otherwise(a[1])
    return _shr(word, k % 64).bitwiseAND(F.lit(1))


def bind(value: Column, body: Callable[[Column], Column]) -> Column:
    """`body(value)` with `value` computed once however often `body` reads it (a lambda's
    parameter: Spark's expressions have no other binding)."""
    return F.get(F.transform(F.array(value), body), 0)


def _bind_words(ws: list[Words], body: Callable[..., Column]) -> Column:
    """`body` of the words, each computed once."""
    fields = [w[k].alias(f"w{i}{k}") for i, w in enumerate(ws) for k in (0, 1)]
    return bind(F.struct(*fields), lambda s: body(*[(s[f"w{i}0"], s[f"w{i}1"])
                                                   for i in range(len(ws))]))


def _divide_unsigned(a: Words, b: Words, finish: Callable[[Words, Words], Column]) -> Column:
    """`finish` of the quotient and remainder of the unsigned values (b not 0), by long
    division, one bit of the dividend a step. A divisor from 2^127 up goes into the dividend
    at most once."""
    def step(acc: Column, k: Column) -> Column:
        r = _shift1((acc["rh"], acc["rl"]), _bit(a, k))
        fits = ~_unsigned_less(r, b)
        less = subtract(r, b)
        q = _shift1((acc["qh"], acc["ql"]), F.when(fits, F.lit(1)).otherwise(F.lit(0))
                    .cast("long"))
        return F.struct(q[0].alias("qh"), q[1].alias("ql"),
                        F.when(fits, less[0]).otherwise(r[0]).alias("rh"),
                        F.when(fits, less[1]).otherwise(r[1]).alias("rl"))

    zero = F.lit(0).cast("long")
    start = F.struct(zero.alias("qh"), zero.alias("ql"), zero.alias("rh"), zero.alias("rl"))
    once = ~_unsigned_less(a, b)
    less = subtract(a, b)
    big = F.struct(zero.alias("qh"), F.when(once, F.lit(1)).otherwise(F.lit(0)).cast("long")
                   .alias("ql"), F.when(once, less[0]).otherwise(a[0]).alias("rh"),
                   F.when(once, less[1]).otherwise(a[1]).alias("rl"))
    done = F.when(_negative(b), big).otherwise(
        F.aggregate(F.sequence(F.lit(127), F.lit(0), F.lit(-1)), start, step))
    return bind(done, lambda d: finish((d["qh"], d["ql"]), (d["rh"], d["rl"])))


def divide(op: str, a: Words, b: Words, t: TInt) -> Column:
    """The stored `a / b` (truncating toward zero) or `a % b` (the sign of the dividend), as
    Rust's; a zero divisor is an error."""
    fail = F.raise_error(F.lit(f"division by zero ({t})"))
    if not t.signed:
        def finish(q: Words, r: Words) -> Column:
            return join(q if op == "/" else r, t)
        return _bind_words([a, b], lambda a, b: F.when((b[0] == 0) & (b[1] == 0), fail)
                           .otherwise(_divide_unsigned(a, b, finish)))

    def signed(a: Words, b: Words) -> Column:
        na, nb = _negative(a), _negative(b)

        def finish(q: Words, r: Words) -> Column:
            out = _pick(na != nb, negate(q), q) if op == "/" else _pick(na, negate(r), r)
            return join(out, t)
        return _bind_words([_pick(na, negate(a), a), _pick(nb, negate(b), b)],
                           lambda ma, mb: F.when((b[0] == 0) & (b[1] == 0), fail)
                           .otherwise(_divide_unsigned(ma, mb, finish)))
    return _bind_words([a, b], signed)


def _pick(cond: Column, yes: Words, no: Words) -> Words:
    return F.when(cond, yes[0]).otherwise(no[0]), F.when(cond, yes[1]).otherwise(no[1])


def bitwise(op: str, a: Words, b: Words) -> Words:
    f = {"&": Column.bitwiseAND, "|": Column.bitwiseOR, "^": Column.bitwiseXOR}[op]
    return f(a[0], b[0]), f(a[1], b[1])


def invert(a: Words) -> Words:
    return F.bitwise_not(a[0]), F.bitwise_not(a[1])


def shift(op: str, a: Words, n: Column, t: TInt) -> Words:
    """DDlog's shifts on a type wider than 64 bits: the amount modulo 128; by the width or
    more, 0 (or the sign, for `>>` of a signed type)."""
    n = n % F.lit(128)
    width = t.width or 128
    hi, lo = a
    zero = F.lit(0).cast("long")
    sign = F.shiftright(hi, 63) if t.signed else zero
    shr = _shr if t.signed else _ushr
    if op == "<<":
        small = (_shl(hi, n).bitwiseOR(_ushr(lo, 64 - n)), _shl(lo, n))
        large = (_shl(lo, n - 64), zero)
    else:
        small = (shr(hi, n), _ushr(lo, n).bitwiseOR(_shl(hi, 64 - n)))
        large = (sign, shr(hi, n - 64))
    out = _pick(n == 0, a, _pick(n < 64, small, large))
    return _pick(n >= width, (zero if op == "<<" else sign, zero if op == "<<" else sign), out)


def to_long(a: Words, signed: bool, t: TInt) -> Column:
    """The value as a Long (for a bigint), an error when it does not fit in one."""
    fits = (a[0] == F.shiftright(a[1], 63)) if signed else ((a[0] == 0) & (a[1] >= 0))
    return F.when(fits, a[1]).otherwise(F.raise_error(F.lit(
        f"integer overflow: a {t} value does not fit in a bigint (64-bit on Spark)"))
        .cast("long"))


def to_double(a: Words, signed: bool) -> Column:
    hi = a[0].cast("double") if signed else unsigned_value(a[0]).cast("double")
    return hi * F.lit(float(1 << 64)) + unsigned_value(a[1]).cast("double")


def _unsigned_text(a: Words) -> Column:
    """Decimal digits of the unsigned value: the value over 10 (below 2^128 / 10, which a
    38-digit decimal holds), then the last digit."""
    h = unsigned_value(a[0])
    high = _div(h, _dec(10)).cast(_DEC)
    rest = F.pmod(h, _dec(10)) * _two64() + unsigned_value(a[1])
    last = F.pmod(rest, _dec(10))
    tenth = ((rest - last) * F.lit("0.1").cast("decimal(1,1)")).cast("decimal(22,0)")
    head = (high * _two64() + tenth).cast("decimal(38,0)")
    return F.concat(F.when(head > 0, head.cast("string")).otherwise(F.lit("")),
                    last.cast("string"))


def text(a: Words, signed: bool) -> Column:
    if not signed:
        return _unsigned_text(a)
    neg = _negative(a)
    return F.concat(F.when(neg, F.lit("-")).otherwise(F.lit("")),
                    _bind_words([_pick(neg, negate(a), a)], _unsigned_text))


def hex_digits(a: Words, t: TInt) -> Column:
    """Lower-case hexadecimal of the bits in the type's width (a negative value as its two's
    complement), as Rust's `{:x}`."""
    spare = 128 - (t.width or 128)
    hi = a[0].bitwiseAND(F.lit((1 << (64 - spare)) - 1)) if spare else a[0]
    return F.lower(F.when(hi == 0, F.hex(a[1]))
                   .otherwise(F.concat(F.hex(hi), F.lpad(F.hex(a[1]), 16, "0"))))


def from_text(s: Column, t: TInt) -> Column:
    """The value written in decimal (an optional `-`, then digits), null when it is not one of
    `t`: the first 37 digits through a decimal, then each further one as `x * 10 + d`."""
    s = F.trim(s)
    neg = s.startswith("-")
    digits = F.regexp_replace(F.regexp_replace(s, "^-", ""), "^0+(?=.)", "")
    count = F.length(digits)
    head = F.substring(digits, 1, 37).cast("decimal(38,0)")
    zero = F.lit(0).cast("long")

    def more(k: int, w: Words) -> Column:
        if k == 2:
            return finish(w)
        digit = (zero, F.substring(digits, 38 + k, 1).cast("long"))
        tenfold = add(add(_shifted(w, 3), _shifted(w, 1)), digit)  # 8x + 2x + d
        return _bind_words([_pick(count > 37 + k, tenfold, w)], lambda w: more(k + 1, w))

    def finish(w: Words) -> Column:
        width = t.width or 128
        if t.signed:
            top = _words_of(1 << (width - 1))
            fits = _unsigned_less(w, top) | (neg & (w[0] == top[0]) & (w[1] == top[1]))
        else:
            fits = ~neg | ((w[0] == 0) & (w[1] == 0))
            if width < 128:
                fits = fits & _unsigned_less(w, _words_of(1 << width))
        return F.when(fits, _bind_words([_pick(neg, negate(w), w)], lambda v: join(v, t)))

    # 39 digits from 2^128 up would wrap in the words
    below = (count < 39) | ((count == 39) & (digits < F.lit(str(1 << 128))))
    return F.when(s.rlike(r"^-?[0-9]+$") & below,
                  _bind_words([(_div(head, _two64()), long_bits(head))],
                              lambda w: more(0, w)))


def _shifted(a: Words, k: int) -> Words:
    """a << k, for a constant k from 1 to 63."""
    return (F.shiftleft(a[0], k).bitwiseOR(_ushr(a[1], F.lit(64 - k))), F.shiftleft(a[1], k))


def _words_of(value: int) -> Words:
    """The words of a constant from 0 to 2^128 - 1."""
    def signed(x: int) -> int:
        return x - (1 << 64) if x >= 1 << 63 else x
    return (F.lit(signed(value >> 64)).cast("long"),
            F.lit(signed(value & ((1 << 64) - 1))).cast("long"))
