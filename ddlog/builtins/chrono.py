"""The meaning of DDlog's `time` library (ddlog/builtins/lib/time.dl): chrono's times, dates,
date-times with an offset, their text and their strftime-like formats.

Values are their text, as DDlog writes and reads them (an `extern type`, ddlog/types.py
TString): a Time is "10:11:12.103104105", a Date "2020-04-14" (chrono's `%Y`: a sign and at
least four digits outside 0..9999), a TzDateTime its RFC 3339 text. The text of a Time and of
a Date in 0..9999 sorts as the values do.

Every operation is written once, over an `Ops` whose values are either Python values with
SQL's nulls (`PyOps`, the built-ins' Python meaning) or Spark Columns (`SparkOps`, their
lowering): arithmetic and comparisons are the operators of those values, choices go through
`o.when`, and nothing branches on a value in Python. A format string is read when the
program is compiled (it must be a constant): its items decide which Spark expressions a
format or a parse is made of. Parsing is the one exception: in Python it is chrono's scan,
step by step (`parse`); on Spark the same scan is regular expressions (`spark_parse`), so
that the two meet only in tests/differential/test_chrono.py. Spark's calendar functions
stand for the calendar arithmetic on Columns (`SparkOps.civil`, `days_of`, `iso_week`), whose
nested divisions would grow expressions past what Spark compiles.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

NANOS = 1_000_000_000
MIN_YEAR, MAX_YEAR = -262144, 262143  # chrono's NaiveDate range
UNIX_EPOCH_DAYS = 719468  # days from 0000-03-01 to 1970-01-01
JULIAN_EPOCH = 2440588  # the Julian day of 1970-01-01

SHORT_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                "Dec"]
LONG_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December"]
SHORT_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# chrono's ParseErrorKind, as it writes each
OUT_OF_RANGE = "input is out of range"
IMPOSSIBLE = "no possible date and time matching input"
NOT_ENOUGH = "input is not enough for unique date and time"
INVALID = "input contains invalid characters"
TOO_SHORT = "premature end of input"
TOO_LONG = "trailing input"
BAD_FORMAT = "bad or unsupported format string"


# -- format items (chrono's StrftimeItems) ---------------------------------------------------

@dataclass(frozen=True)
class Item:
    """One item of a format: `lit` (text), `space` (whitespace), `num` (a number: `spec`
    names it, `pad` is "0", " " or ""), `fixed` (`spec` names it) or `error`."""

    kind: str
    spec: str = ""
    pad: str = ""
    text: str = ""


# numeric specifiers: the field, its width and its default padding
_NUM = {"Y": ("year", "0"), "C": ("year_div_100", "0"), "y": ("year_mod_100", "0"),
        "G": ("isoyear", "0"), "g": ("isoyear_mod_100", "0"), "m": ("month", "0"),
        "d": ("day", "0"), "e": ("day", " "), "U": ("week_from_sun", "0"),
        "W": ("week_from_mon", "0"), "V": ("isoweek", "0"), "w": ("num_days_from_sun", ""),
        "u": ("weekday_from_mon", ""), "j": ("ordinal", "0"), "H": ("hour", "0"),
        "k": ("hour", " "), "I": ("hour12", "0"), "l": ("hour12", " "), "M": ("minute", "0"),
        "S": ("second", "0"), "f": ("nanosecond", "0"), "s": ("timestamp", "")}
# width, and whether a sign may lead (chrono's parse)
_WIDTH = {"year": (4, True), "year_div_100": (2, False), "year_mod_100": (2, False),
          "isoyear": (4, True), "isoyear_mod_100": (2, False), "month": (2, False),
          "day": (2, False), "week_from_sun": (2, False), "week_from_mon": (2, False),
          "isoweek": (2, False), "num_days_from_sun": (1, False),
          "weekday_from_mon": (1, False), "ordinal": (3, False), "hour": (2, False),
          "hour12": (2, False), "minute": (2, False), "second": (2, False),
          "nanosecond": (9, False), "timestamp": (0, False)}
_FIXED = {"A": "long_weekday", "a": "short_weekday", "B": "long_month", "b": "short_month",
          "h": "short_month", "P": "lower_ampm", "p": "upper_ampm", "Z": "tz_name",
          "z": "offset", "+": "rfc3339"}
# specifiers that stand for several items
_RECONS = {"D": "%m/%d/%y", "x": "%m/%d/%y", "F": "%Y-%m-%d", "R": "%H:%M", "T": "%H:%M:%S",
           "X": "%H:%M:%S", "r": "%I:%M:%S %p", "v": "%e-%b-%Y",
           "c": "%a %b %e %H:%M:%S %Y"}


def items(fmt: str) -> list[Item]:
    """The items of a format string, as chrono's StrftimeItems reads it."""
    out: list[Item] = []
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            j = i
            if c.isspace():
                while j < len(fmt) and fmt[j].isspace():
                    j += 1
                out.append(Item("space", text=fmt[i:j]))
            else:
                while j < len(fmt) and not fmt[j].isspace() and fmt[j] != "%":
                    j += 1
                out.append(Item("lit", text=fmt[i:j]))
            i = j
            continue
        rest = fmt[i + 1:]
        pad = None
        if rest[:1] in ("-", "0", "_"):
            pad, rest = {"-": "", "0": "0", "_": " "}[rest[0]], rest[1:]
        alternate = rest[:1] == "#"
        if alternate:
            rest = rest[1:]
        spec, used = _spec(rest, alternate)
        i = len(fmt) - len(rest) + used
        if spec is None:
            out.append(Item("error"))
            continue
        if pad is not None:
            if len(spec) != 1 or spec[0].kind != "num":
                out.append(Item("error"))
                continue
            spec = [Item("num", spec[0].spec, pad)]
        out.extend(spec)
    return out


def _spec(rest: str, alternate: bool) -> tuple[list[Item] | None, int]:
    """The items of the specifier at the start of `rest` (None: an error) and its length."""
    if not rest:
        return None, 0
    c = rest[0]
    if alternate:
        return ([Item("fixed", "offset_permissive")], 1) if c == "z" else (None, 1)
    if c in _NUM:
        field, pad = _NUM[c]
        return [Item("num", field, pad)], 1
    if c in _FIXED:
        return [Item("fixed", _FIXED[c])], 1
    if c in _RECONS:
        return items(_RECONS[c]), 1
    if c == "%":
        return [Item("lit", text="%")], 1
    if c == "n":
        return [Item("space", text="\n")], 1
    if c == "t":
        return [Item("space", text="\t")], 1
    if c == ":":
        return ([Item("fixed", "offset_colon")], 2) if rest[1:2] == "z" else (None, 1)
    if c == ".":
        d = rest[1:2]
        if d == "f":
            return [Item("fixed", "dot_nanos")], 2
        if d in ("3", "6", "9"):
            return ([Item("fixed", f"dot_nanos{d}")], 3) if rest[2:3] == "f" else (None, 3)
        return None, 2
    if c in ("3", "6", "9"):
        return ([Item("fixed", f"nanos{c}")], 2) if rest[1:2] == "f" else (None, 2)
    return None, 1


RFC3339 = [Item("fixed", "rfc3339")]
RFC2822 = [Item("fixed", "rfc2822")]

_DATE_NUMS = {"year", "year_div_100", "year_mod_100", "isoyear", "isoyear_mod_100", "month",
              "day", "week_from_sun", "week_from_mon", "isoweek", "num_days_from_sun",
              "weekday_from_mon", "ordinal"}
_DATE_FIXED = {"long_weekday", "short_weekday", "long_month", "short_month"}
_TIME_FIXED = {"lower_ampm", "upper_ampm", "dot_nanos", "dot_nanos3", "dot_nanos6",
               "dot_nanos9", "nanos3", "nanos6", "nanos9"}


def needs(item: Item) -> set[str]:
    """What formatting the item takes: "date", "time" and/or "offset"."""
    if item.kind == "num":
        if item.spec == "timestamp":
            return {"date", "time"}
        return {"date"} if item.spec in _DATE_NUMS else {"time"}
    if item.kind == "fixed":
        if item.spec in _DATE_FIXED:
            return {"date"}
        if item.spec in _TIME_FIXED:
            return {"time"}
        if item.spec in ("rfc3339", "rfc2822"):
            return {"date", "time", "offset"}
        return {"offset"}
    return set()


# -- the two kinds of values ------------------------------------------------------------------

class V:
    """A Python value with SQL's null: an operation on None gives None, a comparison with None
    is None, and `&`/`|`/`~` are three-valued."""

    __slots__ = ("v",)

    def __init__(self, v: Any):
        self.v = v.v if isinstance(v, V) else v

    def _op(self, other: Any, f: Callable[[Any, Any], Any]) -> "V":
        return _lift(f, self, other)

    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)
    def __neg__(self): return _lift(lambda x: -x, self)
    def __eq__(self, o): return self._op(o, lambda a, b: a == b)  # type: ignore[override]
    def __ne__(self, o): return self._op(o, lambda a, b: a != b)  # type: ignore[override]
    def __lt__(self, o): return self._op(o, lambda a, b: a < b)
    def __le__(self, o): return self._op(o, lambda a, b: a <= b)
    def __gt__(self, o): return self._op(o, lambda a, b: a > b)
    def __ge__(self, o): return self._op(o, lambda a, b: a >= b)

    def __and__(self, o):
        o = o.v if isinstance(o, V) else o
        if self.v is False or o is False:
            return V(False)
        return V(None if self.v is None or o is None else True)

    def __or__(self, o):
        o = o.v if isinstance(o, V) else o
        if self.v is True or o is True:
            return V(True)
        return V(None if self.v is None or o is None else False)

    def __invert__(self):
        return _lift(lambda x: not x, self)

    __hash__ = None  # type: ignore[assignment]


def _lift(f: Callable[..., Any], *xs: Any) -> V:
    """f of the values, None where one is None (as SQL's functions are)."""
    vs = [V(x).v for x in xs]
    return V(None if any(v is None for v in vs) else f(*vs))


class PyOps:
    """Python values (V)."""

    @staticmethod
    def c(v: Any) -> V:
        return V(v)

    @staticmethod
    def when(cases: list[tuple[Any, Any]], default: Any = None) -> V:
        for cond, value in cases:
            if V(cond).v is True:
                return V(value)
        return V(default)

    @staticmethod
    def coalesce(*xs: Any) -> V:
        for x in xs:
            if V(x).v is not None:
                return V(x)
        return V(None)

    @staticmethod
    def isnull(x: Any) -> V:
        return V(V(x).v is None)

    @staticmethod
    def fdiv(a: Any, b: int) -> V:
        return V(a)._op(b, lambda x, y: x // y)

    @staticmethod
    def fmod(a: Any, b: int) -> V:
        return V(a)._op(b, lambda x, y: x % y)

    @staticmethod
    def abs(a: Any) -> V:
        return _lift(abs, a)

    @staticmethod
    def length(s: Any) -> V:
        return _lift(len, s)

    @staticmethod
    def drop(s: Any, n: Any) -> V:
        return _lift(lambda x, k: x[k:], s, n)

    @staticmethod
    def take(s: Any, n: int) -> V:
        return _lift(lambda x: x[:n], s)

    @staticmethod
    def startswith(s: Any, prefix: str) -> V:
        return _lift(lambda x: x.startswith(prefix), s)

    @staticmethod
    def prefix(s: Any, pattern: str) -> V:
        """The longest text at the start of s that the regex matches ('' if none)."""
        return _lift(lambda x: (m.group(0) if (m := re.match(pattern, x)) else ""), s)

    @staticmethod
    def group(s: Any, pattern: str, k: int) -> V:
        return _lift(lambda x: (m.group(k) or "" if (m := re.fullmatch(pattern, x)) else ""),
                     s)

    @staticmethod
    def lower(s: Any) -> V:
        return _lift(str.lower, s)

    @staticmethod
    def concat(*parts: Any) -> V:
        return _lift(lambda *xs: "".join(xs), *parts)

    @staticmethod
    def to_int(digits: Any) -> V:
        """A text of digits as its number; None for ''."""
        d = V(digits).v
        return V(int(d) if d else None)

    @staticmethod
    def text(n: Any) -> V:
        return _lift(str, n)

    @staticmethod
    def lpad(s: Any, width: int, fill: str) -> V:
        return _lift(lambda x: x.rjust(width, fill), s)

    @staticmethod
    def index(names: list[str], s: Any) -> V:
        """The position of s among names (None if absent)."""
        return V(names.index(V(s).v) if V(s).v in names else None)

    @staticmethod
    def pick(names: list[str], k: Any) -> V:
        return _lift(names.__getitem__, k)

    def civil(self, days: Any) -> tuple[V, V, V]:
        """(year, month, day) of days since 1970-01-01."""
        return civil_from_days(self, days)

    def iso_week(self, days: Any) -> tuple[V, V]:
        """(ISO year, ISO week) of days since 1970-01-01."""
        return iso_week(self, self.civil(days)[0], days)

    def ordinal(self, days: Any) -> V:
        """The day of the year of days since 1970-01-01."""
        return V(days) - days_from_civil(self, self.civil(days)[0], 1, 1) + 1

    def days_of(self, y: Any, m: Any, d: Any) -> V:
        """Days since 1970-01-01 of the day d (counting on past the month's end) of a month."""
        ok = (V(m) >= 1) & (V(m) <= 12) & (V(y) >= MIN_YEAR) & (V(y) <= MAX_YEAR)
        return self.when([(ok, days_from_civil(self, y, m, 1) + d - 1)])

    @staticmethod
    def bind(values: dict[str, Any], body: Callable[[dict[str, Any]], Any]) -> Any:
        return body({k: V(v) for k, v in values.items()})

    @staticmethod
    def step(state: dict[str, Any], body: Callable[[dict], dict]) -> dict[str, Any]:
        if state["err"].v is not None:
            return state
        return {k: V(v) for k, v in body(state).items()}


class SparkOps:
    """Spark Columns."""

    def __init__(self, sx: Any):
        self.sx, self.F = sx, sx.F

    def c(self, v: Any) -> Any:
        F = self.F
        return F.lit(v).cast("long") if isinstance(v, int) and not isinstance(v, bool) \
            else F.lit(v)

    def when(self, cases: list[tuple[Any, Any]], default: Any = None) -> Any:
        F = self.F
        out = None
        for cond, value in cases:
            cond, value = self.col(cond), self.col(value)
            out = F.when(cond, value) if out is None else out.when(cond, value)
        d = self.col(default)
        return d if out is None else out.otherwise(d)

    def col(self, v: Any) -> Any:
        return self.c(v) if not hasattr(v, "alias") else v

    def coalesce(self, *xs: Any) -> Any:
        return self.F.coalesce(*[self.col(x) for x in xs])

    def isnull(self, x: Any) -> Any:
        return self.col(x).isNull()

    def fdiv(self, a: Any, b: int) -> Any:
        F = self.F
        a = self.col(a)
        return ((a - F.pmod(a, F.lit(b))) / F.lit(b)).cast("long")

    def fmod(self, a: Any, b: int) -> Any:
        return self.F.pmod(self.col(a), self.F.lit(b))

    def abs(self, a: Any) -> Any:
        return self.F.abs(self.col(a))

    def length(self, s: Any) -> Any:
        return self.F.length(s).cast("long")

    def drop(self, s: Any, n: Any) -> Any:
        F = self.F
        return F.substring(s, (self.col(n) + 1).cast("int"), F.lit(1 << 30))

    def take(self, s: Any, n: int) -> Any:
        return self.F.substring(s, 1, n)

    def startswith(self, s: Any, prefix: str) -> Any:
        return self.F.startswith(s, self.F.lit(prefix))

    def prefix(self, s: Any, pattern: str) -> Any:
        return self.F.regexp_extract(s, "^(?:" + pattern + ")", 0)

    def group(self, s: Any, pattern: str, k: int) -> Any:
        return self.F.regexp_extract(s, "^" + pattern + "$", k)

    def lower(self, s: Any) -> Any:
        return self.F.lower(s)

    def concat(self, *parts: Any) -> Any:
        return self.F.concat(*[self.col(p) for p in parts])

    def to_int(self, digits: Any) -> Any:
        return digits.try_cast("long")

    def text(self, n: Any) -> Any:
        return self.col(n).cast("string")

    def lpad(self, s: Any, width: int, fill: str) -> Any:
        # lpad cuts a longer text: keep it whole
        F = self.F
        return F.when(F.length(s) >= width, s).otherwise(F.lpad(s, width, fill))

    def index(self, names: list[str], s: Any) -> Any:
        return self.when([(s == n, i) for i, n in enumerate(names)])

    def pick(self, names: list[str], k: Any) -> Any:
        return self.when([(k == i, n) for i, n in enumerate(names)])

    def civil(self, days: Any) -> tuple[Any, Any, Any]:
        F = self.F
        dt = F.date_from_unix_date(self.col(days).cast("int"))
        return (F.year(dt).cast("long"), F.month(dt).cast("long"),
                F.dayofmonth(dt).cast("long"))

    def iso_week(self, days: Any) -> tuple[Any, Any]:
        F = self.F
        days = self.col(days)
        dt = F.date_from_unix_date(days.cast("int"))
        thursday = F.date_add(dt, (3 - F.pmod(days + 3, F.lit(7))).cast("int"))
        return F.year(thursday).cast("long"), F.weekofyear(dt).cast("long")

    def ordinal(self, days: Any) -> Any:
        F = self.F
        return F.dayofyear(F.date_from_unix_date(self.col(days).cast("int"))).cast("long")

    def days_of(self, y: Any, m: Any, d: Any) -> Any:
        F = self.F
        y, m, d = self.col(y), self.col(m), self.col(d)
        ok = (m >= 1) & (m <= 12) & (y >= MIN_YEAR) & (y <= MAX_YEAR)
        first = F.make_date(y.cast("int"), m.cast("int"), F.lit(1))
        return F.when(ok, F.unix_date(F.date_add(first, (d - 1).cast("int"))).cast("long"))

    def bind(self, values: dict[str, Any], body: Callable[[dict[str, Any]], Any]) -> Any:
        F = self.F
        fields = [self.col(v).alias(k) for k, v in values.items()]
        return self.sx.let(F.struct(*fields), lambda s: body({k: s[k] for k in values}))



Ops = Any  # PyOps or SparkOps


# -- calendar arithmetic ----------------------------------------------------------------------

def days_from_civil(o: Ops, y: Any, m: Any, d: Any) -> Any:
    """Days since 1970-01-01 of the proleptic Gregorian date (H. Hinnant's algorithm)."""
    y = y - o.when([(m <= 2, 1)], 0)
    era = o.fdiv(y, 400)
    yoe = y - era * 400
    mp = o.fmod(m + 9, 12)
    doy = o.fdiv(153 * mp + 2, 5) + d - 1
    doe = yoe * 365 + o.fdiv(yoe, 4) - o.fdiv(yoe, 100) + doy
    return era * 146097 + doe - UNIX_EPOCH_DAYS


def civil_from_days(o: Ops, z: Any) -> tuple[Any, Any, Any]:
    z = z + UNIX_EPOCH_DAYS
    era = o.fdiv(z, 146097)
    doe = z - era * 146097
    yoe = o.fdiv(doe - o.fdiv(doe, 1460) + o.fdiv(doe, 36524) - o.fdiv(doe, 146096), 365)
    doy = doe - (365 * yoe + o.fdiv(yoe, 4) - o.fdiv(yoe, 100))
    mp = o.fdiv(5 * doy + 2, 153)
    d = doy - o.fdiv(153 * mp + 2, 5) + 1
    m = o.when([(mp < 10, mp + 3)], mp - 9)
    return yoe + era * 400 + o.when([(m <= 2, 1)], 0), m, d


def is_leap(o: Ops, y: Any) -> Any:
    return (o.fmod(y, 4) == 0) & ((o.fmod(y, 100) != 0) | (o.fmod(y, 400) == 0))


def days_in_month(o: Ops, y: Any, m: Any) -> Any:
    return o.when([(m == 2, o.when([(is_leap(o, y), 29)], 28)),
                   ((m == 4) | (m == 6) | (m == 9) | (m == 11), 30)], 31)


def weekday0(o: Ops, days: Any) -> Any:
    """0 for Monday .. 6 for Sunday."""
    return o.fmod(days + 3, 7)


def iso_weeks(o: Ops, y: Any) -> Any:
    def p(x):
        return o.fmod(x + o.fdiv(x, 4) - o.fdiv(x, 100) + o.fdiv(x, 400), 7)
    return o.when([(p(y) == 4, 53), (p(y - 1) == 3, 53)], 52)


def iso_week(o: Ops, y: Any, days: Any) -> tuple[Any, Any]:
    """(ISO year, ISO week) of the day."""
    ordinal = days - o.days_of(y, 1, 1) + 1
    w = o.fdiv(ordinal - (weekday0(o, days) + 1) + 10, 7)
    return (o.when([(w < 1, y - 1), (w > iso_weeks(o, y), y + 1)], y),
            o.when([(w < 1, iso_weeks(o, y - 1)), (w > iso_weeks(o, y), 1)], w))


def valid_ymd(o: Ops, y: Any, m: Any, d: Any) -> Any:
    return ((y >= MIN_YEAR) & (y <= MAX_YEAR) & (m >= 1) & (m <= 12) & (d >= 1)
            & (d <= days_in_month(o, y, m)))


def from_isoywd(o: Ops, y: Any, w: Any, wd0: Any) -> tuple[Any, Any]:
    """(valid, days) of the ISO week date."""
    jan4 = o.days_of(y, 1, 4)
    days = jan4 - weekday0(o, jan4) + (w - 1) * 7 + wd0
    return (w >= 1) & (w <= iso_weeks(o, y)) & (wd0 >= 0) & (wd0 <= 6), days


# -- values and their text --------------------------------------------------------------------

@dataclass
class Parts:
    """What a value is made of (each None where the value has no such part): its date as days
    since 1970-01-01 with its year, month, day; its time of day; its offset in seconds."""

    days: Any = None
    y: Any = None
    m: Any = None
    d: Any = None
    secs: Any = None  # seconds since midnight, 0..86399
    nano: Any = None  # 0..1_999_999_999 (a leap second from 10^9)
    off: Any = None


_DATE_RE = r"([+-]?[0-9]+)-([0-9]{2})-([0-9]{2})"
_TIME_RE = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"


def with_parts(o: Ops, p: Parts, k: Callable[[Parts], Any]) -> Any:
    """`k` of the parts, each bound (computed once however often k reads it)."""
    names = [n for n in ("days", "y", "m", "d", "secs", "nano", "off")
             if getattr(p, n) is not None]
    return o.bind({n: getattr(p, n) for n in names},
                  lambda b: k(Parts(**{n: b[n] for n in names})))


def date_parts(o: Ops, y: Any, m: Any, d: Any) -> Parts:
    return Parts(o.days_of(y, m, d), y, m, d)


def read_date(o: Ops, text: Any) -> tuple[Any, Any, Any]:
    return tuple(o.to_int(o.group(text, _DATE_RE, k)) for k in (1, 2, 3))  # type: ignore


def read_time(o: Ops, text: Any) -> tuple[Any, Any]:
    """(seconds since midnight, nanoseconds) of a Time's text."""
    h, m, s = (o.to_int(o.group(text, _TIME_RE + r"\.([0-9]{9})", k)) for k in (1, 2, 3))
    nano = o.to_int(o.group(text, _TIME_RE + r"\.([0-9]{9})", 4))
    leap = s == 60
    return (h * 3600 + m * 60 + o.when([(leap, 59)], s),
            o.when([(leap, nano + NANOS)], nano))


_TZ_RE = (_DATE_RE + "T" + _TIME_RE
          + r"(?:\.([0-9]+))?([+-])([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?")


def read_tz(o: Ops, text: Any) -> Parts:
    g = [o.group(text, _TZ_RE, k) for k in range(1, 12)]
    y, mo, d, h, mi, s = (o.to_int(x) for x in g[:6])
    frac = o.to_int(o.take(o.concat(g[6], "000000000"), 9))
    leap = s == 60
    sign = o.when([(g[7] == "-", -1)], 1)
    p = date_parts(o, y, mo, d)
    p.secs = h * 3600 + mi * 60 + o.when([(leap, 59)], s)
    p.nano = o.when([(leap, frac + NANOS)], frac)
    p.off = (o.to_int(g[8]) * 3600 + o.to_int(g[9]) * 60 + o.coalesce(o.to_int(g[10]), 0)) \
        * sign
    return p


def _num_text(o: Ops, v: Any, width: int, pad: str, signed_year: bool = False) -> Any:
    """Rust's `{:0w}` / `{:w}` / `{}` of an integer (the sign takes one of the w places); a
    year outside 0..9999 with its sign, in one place more (`{:+0w+1}`)."""
    digits = o.text(o.abs(v))
    if signed_year:
        sign, signed_width = o.when([(v < 0, "-"), (v > 9999, "+")], ""), width + 1
    else:
        sign, signed_width = o.when([(v < 0, "-")], ""), width
    if pad == "":
        return o.concat(sign, digits)
    if pad == "0":
        padded = o.concat(sign, o.lpad(digits, signed_width - 1, "0"))
    else:
        padded = o.lpad(o.concat(sign, digits), signed_width, " ")
    return o.when([(sign == "", o.lpad(digits, width, pad))], padded)


def time_text(o: Ops, secs: Any, nano: Any) -> Any:
    """chrono's `%T.%f` (DDlog's text of a Time)."""
    return o.concat(_hms(o, secs, nano), ".", o.lpad(o.text(o.fmod(nano, NANOS)), 9, "0"))


def _hms(o: Ops, secs: Any, nano: Any) -> Any:
    s = o.fmod(secs, 60) + o.fdiv(nano, NANOS)
    return o.concat(o.lpad(o.text(o.fdiv(secs, 3600)), 2, "0"), ":",
                    o.lpad(o.text(o.fmod(o.fdiv(secs, 60), 60)), 2, "0"), ":",
                    o.lpad(o.text(s), 2, "0"))


def date_text(o: Ops, y: Any, m: Any, d: Any) -> Any:
    """chrono's `%Y-%m-%d` (DDlog's text of a Date)."""
    return o.concat(_num_text(o, y, 4, "0", signed_year=True), "-",
                    o.lpad(o.text(m), 2, "0"), "-", o.lpad(o.text(d), 2, "0"))


def _offset_text(o: Ops, off: Any, colon: bool, seconds: bool = False) -> Any:
    """chrono's `+hh:mm` (`+hhmm`); with `seconds`, `:ss` after it where the offset has
    seconds, which the text of a TzDateTime keeps (chrono writes the offset without them)."""
    a = o.abs(off)
    secs = o.fmod(a, 60)
    tail = o.when([(secs != 0, o.concat(":", o.lpad(o.text(secs), 2, "0")))], "") \
        if seconds else ""
    return o.concat(o.when([(off < 0, "-")], "+"), o.lpad(o.text(o.fdiv(a, 3600)), 2, "0"),
                    ":" if colon else "", o.lpad(o.text(o.fmod(o.fdiv(a, 60), 60)), 2, "0"),
                    tail)


def _debug_nanos(o: Ops, nano: Any) -> Any:
    """chrono's Debug of a time's fraction: none, or 3, 6 or 9 digits."""
    n = o.fmod(nano, NANOS)
    return o.when([(n == 0, ""),
                   (o.fmod(n, 1_000_000) == 0,
                    o.concat(".", o.lpad(o.text(o.fdiv(n, 1_000_000)), 3, "0"))),
                   (o.fmod(n, 1000) == 0, o.concat(".", o.lpad(o.text(o.fdiv(n, 1000)), 6, "0")))],
                  o.concat(".", o.lpad(o.text(n), 9, "0")))


def tz_text(o: Ops, p: Parts) -> Any:
    """RFC 3339, as chrono's `to_rfc3339` (DDlog's text of a TzDateTime)."""
    return o.concat(date_text(o, p.y, p.m, p.d), "T", _hms(o, p.secs, p.nano),
                    _debug_nanos(o, p.nano), _offset_text(o, p.off, True, seconds=True))


def rfc2822_text(o: Ops, p: Parts) -> Any:
    return o.concat(o.pick(SHORT_DAYS, weekday0(o, p.days)), ", ", o.lpad(o.text(p.d), 2, "0"),
                    " ", o.pick(SHORT_MONTHS, p.m - 1), " ", _num_text(o, p.y, 4, "0"), " ",
                    _hms(o, p.secs, p.nano), " ", _offset_text(o, p.off, False))


# -- formatting -------------------------------------------------------------------------------

def format_error(fmt: str) -> str:
    return f"Error in format string '{fmt}'"


def can_format(its: list[Item], has: set[str]) -> bool:
    """Whether chrono writes these items of a value with these parts (else the format is an
    error)."""
    return all(it.kind != "error" and needs(it) <= has for it in its)


def format_value(o: Ops, its: list[Item], p: Parts) -> Any:
    """The text of the value by the items (`can_format` holds)."""
    return o.concat(*[_format_item(o, it, p) for it in its]) if its else o.c("")


def _format_item(o: Ops, it: Item, p: Parts) -> Any:
    if it.kind in ("lit", "space"):
        return it.text
    if it.kind == "num":
        width = _WIDTH[it.spec][0] or 1
        v = _numeric(o, it.spec, p)
        return _num_text(o, v, width, it.pad, signed_year=it.spec in ("year", "isoyear"))
    s = it.spec
    if s == "short_month":
        return o.pick(SHORT_MONTHS, p.m - 1)
    if s == "long_month":
        return o.pick(LONG_MONTHS, p.m - 1)
    if s == "short_weekday":
        return o.pick(SHORT_DAYS, weekday0(o, p.days))
    if s == "long_weekday":
        return o.pick(LONG_DAYS, weekday0(o, p.days))
    if s in ("lower_ampm", "upper_ampm"):
        am = o.fdiv(p.secs, 3600) < 12
        return o.when([(am, "am" if s == "lower_ampm" else "AM")],
                      "pm" if s == "lower_ampm" else "PM")
    if s == "dot_nanos":
        return _debug_nanos(o, p.nano)
    if s.startswith(("dot_nanos", "nanos")):
        k = int(s[-1])
        digits = o.lpad(o.text(o.fdiv(o.fmod(p.nano, NANOS), 10 ** (9 - k))), k, "0")
        return o.concat(".", digits) if s.startswith("dot") else digits
    if s in ("tz_name", "offset_colon"):
        return _offset_text(o, p.off, True)
    if s in ("offset", "offset_permissive"):
        return _offset_text(o, p.off, False)
    if s == "rfc3339":
        return tz_text(o, p)
    if s == "rfc2822":
        return rfc2822_text(o, p)
    raise ValueError(s)


def _numeric(o: Ops, spec: str, p: Parts) -> Any:
    if spec == "year":
        return p.y
    if spec == "year_div_100":
        return o.fdiv(p.y, 100)
    if spec == "year_mod_100":
        return o.fmod(p.y, 100)
    if spec in ("isoyear", "isoyear_mod_100", "isoweek"):
        iy, iw = o.iso_week(p.days)
        return {"isoyear": iy, "isoyear_mod_100": o.fmod(iy, 100), "isoweek": iw}[spec]
    if spec == "month":
        return p.m
    if spec == "day":
        return p.d
    ordinal = None if p.days is None else o.ordinal(p.days)
    if spec == "ordinal":
        return ordinal
    if spec == "week_from_sun":
        return o.fdiv(ordinal - o.fmod(weekday0(o, p.days) + 1, 7) + 6, 7)
    if spec == "week_from_mon":
        return o.fdiv(ordinal - weekday0(o, p.days) + 6, 7)
    if spec == "num_days_from_sun":
        return o.fmod(weekday0(o, p.days) + 1, 7)
    if spec == "weekday_from_mon":
        return weekday0(o, p.days) + 1
    if spec == "hour":
        return o.fdiv(p.secs, 3600)
    if spec == "hour12":
        h = o.fmod(o.fdiv(p.secs, 3600), 12)
        return o.when([(h == 0, 12)], h)
    if spec == "minute":
        return o.fmod(o.fdiv(p.secs, 60), 60)
    if spec == "second":
        return o.fmod(p.secs, 60) + o.fdiv(p.nano, NANOS)
    if spec == "nanosecond":
        return o.fmod(p.nano, NANOS)
    if spec == "timestamp":
        return p.days * 86400 + p.secs - o.coalesce(p.off, 0)
    raise ValueError(spec)


# -- parsing ----------------------------------------------------------------------------------

_FIELDS = ["year", "year_div_100", "year_mod_100", "isoyear", "isoyear_div_100",
           "isoyear_mod_100", "month", "week_from_sun", "week_from_mon", "isoweek", "weekday",
           "ordinal", "day", "hour_div_12", "hour_mod_12", "minute", "second", "nanosecond",
           "timestamp", "offset"]


Step = Callable[[dict], dict]


def parse(o: Ops, s: Any, its: list[Item], k: Callable[[dict], Any]) -> Any:
    """`k` of chrono's `parse` of s by the items: of the fields it read, and `err` (null if
    none). In Python, chrono's scan step by step; on Spark, `spark_parse`."""
    if isinstance(o, SparkOps):
        return spark_parse(o, s, its, k)
    state = {"rest": s, "err": o.c(None), **{f: o.c(None) for f in _FIELDS}}
    steps = [f for it in its for f in _steps(o, it)]
    steps.append(lambda st: {**st, "err": o.when([(o.length(st["rest"]) > 0, TOO_LONG)])})

    def go(i: int, st: dict) -> Any:
        if i == len(steps):
            return k(st)
        return o.bind(o.step(st, steps[i]), lambda b: go(i + 1, b))
    return go(0, state)


def _steps(o: Ops, it: Item) -> list[Step]:
    if it.kind == "fixed" and it.spec == "rfc3339":
        return _rfc3339(o)
    if it.kind == "fixed" and it.spec == "rfc2822":
        return _rfc2822(o)
    return [lambda st: _parse_item(o, st, it)]


def _number(o: Ops, s: Any, lo: int, hi: int | None) -> tuple[Any, Any, Any]:
    """chrono's scan::number: (the rest, the value, the error)."""
    digits = o.prefix(s, "[0-9]{0,%d}" % hi if hi else "[0-9]*")
    n = o.length(digits)
    err = o.when([(o.length(s) < lo, TOO_SHORT), (n < lo, INVALID),
                  (n > 18, OUT_OF_RANGE)])
    return o.drop(s, n), o.to_int(o.take(digits, 18)), err


def _trim(o: Ops, s: Any) -> Any:
    return o.drop(s, o.length(o.prefix(s, r"\s*")))


def _set(o: Ops, st: dict, field: str, v: Any, err: Any) -> dict:
    """st with the field set to v (chrono's set_if_consistent), or the error."""
    old = st[field]
    clash = (~o.isnull(old)) & (old != v)
    e = o.coalesce(st["err"], err, o.when([(clash, IMPOSSIBLE)]))
    return {**st, field: o.coalesce(old, v), "err": e}


def _parse_item(o: Ops, st: dict, it: Item) -> dict:
    s = st["rest"]
    if it.kind == "lit":
        n = len(it.text)
        err = o.when([(o.length(s) < n, TOO_SHORT), (~o.startswith(s, it.text), INVALID)])
        return {**st, "rest": o.drop(s, n), "err": err}
    if it.kind == "space":
        return {**st, "rest": _trim(o, s)}
    if it.kind == "error":
        return {**st, "err": o.c(BAD_FORMAT)}
    if it.kind == "num":
        return _parse_num(o, st, it.spec, _trim(o, s))
    return _parse_fixed(o, st, it.spec, s)


def _parse_num(o: Ops, st: dict, spec: str, s: Any) -> dict:
    width, signed = _WIDTH[spec]
    if signed:
        neg, pos = o.startswith(s, "-"), o.startswith(s, "+")
        rest1, v1, e1 = _number(o, o.drop(s, 1), 1, None)
        rest0, v0, e0 = _number(o, s, 1, width)
        sign = o.when([(neg, -1)], 1)
        rest = o.when([(neg | pos, rest1)], rest0)
        v = o.when([(neg | pos, v1 * sign)], v0)
        err = o.when([(neg | pos, e1)], e0)
    else:
        rest, v, err = _number(o, s, 1, width or None)
    st = {**st, "rest": rest}
    if spec == "hour":
        bad = (v < 0) | (v > 23)
        st = _set(o, st, "hour_div_12", o.fdiv(v, 12), o.coalesce(err, o.when([(bad, OUT_OF_RANGE)])))
        return _set(o, st, "hour_mod_12", o.fmod(v, 12), None)
    if spec == "hour12":
        bad = (v < 1) | (v > 12)
        return _set(o, st, "hour_mod_12", o.fmod(v, 12),
                    o.coalesce(err, o.when([(bad, OUT_OF_RANGE)])))
    if spec == "num_days_from_sun":
        bad = v > 6
        return _set(o, st, "weekday", o.fmod(v + 6, 7), o.coalesce(err, o.when([(bad, OUT_OF_RANGE)])))
    if spec == "weekday_from_mon":
        bad = (v < 1) | (v > 7)
        return _set(o, st, "weekday", v - 1, o.coalesce(err, o.when([(bad, OUT_OF_RANGE)])))
    return _set(o, st, spec, v, err)


def _names(o: Ops, s: Any, short: list[str], long: list[str] | None) -> tuple[Any, Any, Any]:
    """chrono's scan of a month or weekday name: (rest, index, error)."""
    k = o.index([n.lower() for n in short], o.lower(o.take(s, 3)))
    err = o.when([(o.length(s) < 3, TOO_SHORT), (o.isnull(k), INVALID)])
    rest = o.drop(s, 3)
    if long is not None:  # the rest of the long name may follow, in any case
        for i, n in enumerate(long):
            tail = n[3:].lower()
            has = (k == i) & (o.lower(o.take(rest, len(tail))) == tail)
            rest = o.when([(has, o.drop(rest, len(tail)))], rest)
    return rest, k, err


def _nanos(o: Ops, s: Any, lo: int, hi: int) -> tuple[Any, Any, Any]:
    """chrono's scan::nanosecond(_fixed): up to hi digits as a fraction of a second."""
    rest, v, err = _number(o, s, lo, hi)
    n = o.length(s) - o.length(rest)
    scale = o.when([(n == k, 10 ** (9 - k)) for k in range(1, 10)], 1)
    if hi == 9 and lo == 1:
        rest = o.drop(rest, o.length(o.prefix(rest, "[0-9]*")))
    return rest, v * scale, err


def _offset(o: Ops, s: Any, colon: str, missing_minutes: bool = False,
            colon_required: bool = False) -> tuple[Any, Any, Any]:
    """chrono's scan::timezone_offset: (rest, seconds east, error); `colon` is the regex of
    what may stand between the hours and the minutes (`colon_required`: exactly one ':')."""
    sign = o.take(s, 1)
    neg = sign == "-"
    err0 = o.when([(o.length(s) == 0, TOO_SHORT), ((sign != "+") & ~neg, INVALID)])
    s1 = o.drop(s, 1)
    hh = o.take(s1, 2)
    err1 = o.when([(o.length(s1) < 2, TOO_SHORT),
                   (o.length(o.prefix(hh, "[0-9]{2}")) < 2, INVALID)])
    s2 = o.drop(o.drop(s1, 2), o.length(o.prefix(o.drop(s1, 2), colon)))
    errc = o.c(None)
    if colon_required:
        after_hours = o.drop(s1, 2)
        errc = o.when([(o.length(after_hours) == 0, TOO_SHORT),
                       (~o.startswith(after_hours, ":"), INVALID)])
        s2 = o.drop(after_hours, 1)
    mm = o.take(s2, 2)
    has_mm = (o.length(s2) >= 2)
    digits_mm = o.length(o.prefix(mm, "[0-9]{2}")) == 2
    err2 = o.when([(has_mm & (o.length(o.prefix(mm, "[0-5][0-9]")) == 2), None),
                   (has_mm & digits_mm, OUT_OF_RANGE),
                   (has_mm, INVALID),
                   (o.c(missing_minutes), None)], TOO_SHORT)
    minutes = o.when([(has_mm, o.to_int(o.prefix(mm, "[0-9]{2}")))], 0)
    rest = o.when([(o.length(s2) >= 2, o.drop(s2, 2)), (o.length(s2) == 0, s2)], s2)
    err3 = o.when([(o.length(s2) == 1, TOO_SHORT)])
    secs = (o.to_int(o.prefix(hh, "[0-9]{2}")) * 3600 + minutes * 60) * o.when([(neg, -1)], 1)
    return rest, secs, o.coalesce(err0, err1, errc, err2, err3)


def _parse_fixed(o: Ops, st: dict, spec: str, s: Any) -> dict:
    if spec in ("short_month", "long_month"):
        rest, k, err = _names(o, s, SHORT_MONTHS, LONG_MONTHS if spec == "long_month" else None)
        return _set(o, {**st, "rest": rest}, "month", k + 1, err)
    if spec in ("short_weekday", "long_weekday"):
        rest, k, err = _names(o, s, SHORT_DAYS, LONG_DAYS if spec == "long_weekday" else None)
        return _set(o, {**st, "rest": rest}, "weekday", k, err)
    if spec in ("lower_ampm", "upper_ampm"):
        two = o.lower(o.take(s, 2))
        err = o.when([(o.length(s) < 2, TOO_SHORT), ((two != "am") & (two != "pm"), INVALID)])
        return _set(o, {**st, "rest": o.drop(s, 2)}, "hour_div_12",
                    o.when([(two == "pm", 1)], 0), err)
    if spec.startswith("dot_nanos"):
        dot = o.startswith(s, ".")
        rest, v, err = _nanos(o, o.drop(s, 1), 1, 9)
        got = _set(o, {**st, "rest": rest}, "nanosecond", v, err)
        return {k: o.when([(dot, got[k])], st[k] if k != "rest" else s) for k in st}
    if spec.startswith("nanos"):
        k = int(spec[-1])
        rest, v, err = _nanos(o, s, k, k)
        err = o.coalesce(o.when([(o.length(s) < k, TOO_SHORT)]), err)
        return _set(o, {**st, "rest": rest}, "nanosecond", v, err)
    if spec == "tz_name":
        return {**st, "rest": o.drop(s, o.length(o.prefix(s, r"\S*")))}
    if spec in ("offset", "offset_colon", "offset_permissive"):
        rest, secs, err = _offset(o, _trim(o, s), r"[:\s]*",
                                  missing_minutes=spec == "offset_permissive")
        return _set(o, {**st, "rest": rest}, "offset", secs, err)
    raise ValueError(spec)


def _char(o: Ops, st: dict, chars: str) -> dict:
    s = st["rest"]
    first = o.take(s, 1)
    ok = o.c(False)
    for c in chars:
        ok = ok | (first == c)
    err = o.when([(o.length(s) == 0, TOO_SHORT), (~ok, INVALID)])
    return {**st, "rest": o.drop(s, 1), "err": err}


def _field(o: Ops, st: dict, field: str, lo: int, hi: int) -> dict:
    rest, v, err = _number(o, st["rest"], lo, hi)
    if field == "hour":
        st = _set(o, {**st, "rest": rest}, "hour_div_12", o.fdiv(v, 12),
                  o.coalesce(err, o.when([((v < 0) | (v > 23), OUT_OF_RANGE)])))
        return _set(o, st, "hour_mod_12", o.fmod(v, 12), None)
    return _set(o, {**st, "rest": rest}, field, v, err)


def _rfc3339(o: Ops) -> list[Step]:
    """chrono's parse_rfc3339."""
    def fraction(x: dict) -> dict:
        dot = o.startswith(x["rest"], ".")
        rest, v, err = _nanos(o, o.drop(x["rest"], 1), 1, 9)
        got = _set(o, {**x, "rest": rest}, "nanosecond", v, err)
        return {k: o.when([(dot, got[k])], x[k]) for k in x}

    def offset(x: dict) -> dict:
        s = x["rest"]
        z = o.lower(o.take(s, 1)) == "z"
        rest, secs, err = _offset(o, s, "", colon_required=True)
        err = o.coalesce(err, o.when([((secs <= -86400) | (secs >= 86400), OUT_OF_RANGE)]))
        got = _set(o, {**x, "rest": rest}, "offset", secs, err)
        zulu = _set(o, {**x, "rest": o.drop(s, 1)}, "offset", 0, None)
        return {k: o.when([(z, zulu[k])], got[k]) for k in x}

    return [
        lambda x: _field(o, x, "year", 4, 4), lambda x: _char(o, x, "-"),
        lambda x: _field(o, x, "month", 2, 2), lambda x: _char(o, x, "-"),
        lambda x: _field(o, x, "day", 2, 2), lambda x: _char(o, x, "Tt"),
        lambda x: _field(o, x, "hour", 2, 2), lambda x: _char(o, x, ":"),
        lambda x: _field(o, x, "minute", 2, 2), lambda x: _char(o, x, ":"),
        lambda x: _field(o, x, "second", 2, 2), fraction, offset]


_ZONES = {"gmt": 0, "ut": 0, "edt": -4, "est": -5, "cdt": -5, "cst": -6, "mdt": -6, "mst": -7,
          "pdt": -7, "pst": -8}


def _rfc2822(o: Ops) -> list[Step]:
    """chrono's parse_rfc2822."""
    def weekday(x: dict) -> dict:
        rest, k, err = _names(o, x["rest"], SHORT_DAYS, None)
        has = o.isnull(err)
        comma = o.startswith(rest, ",")
        got = _set(o, {**x, "rest": o.drop(rest, 1)}, "weekday", k,
                   o.when([(~comma, INVALID)]))
        got = {**got, "rest": _trim(o, got["rest"])}
        return {k2: o.when([(has, got[k2])], x[k2]) for k2 in x}

    def space(x: dict) -> dict:
        s = x["rest"]
        n = o.length(o.prefix(s, r"\s*"))
        return {**x, "rest": o.drop(s, n),
                "err": o.when([(o.length(s) == 0, TOO_SHORT), (n == 0, INVALID)])}

    def year(x: dict) -> dict:
        rest, v, err = _number(o, x["rest"], 2, None)
        n = o.length(x["rest"]) - o.length(rest)
        v = o.when([((n == 2) & (v <= 49), v + 2000), ((n == 2) | (n == 3), v + 1900)], v)
        return _set(o, {**x, "rest": rest}, "year", v, err)

    def minute(x: dict) -> dict:
        after = _trim(o, x["rest"])
        x = _char(o, {**x, "rest": after}, ":")
        return {**x, "rest": _trim(o, x["rest"])}

    def seconds(x: dict) -> dict:
        after = _trim(o, x["rest"])
        colon = o.startswith(after, ":")
        got = _field(o, {**x, "rest": o.drop(after, 1)}, "second", 2, 2)
        return {k: o.when([(colon, got[k])], x[k]) for k in x}

    def zone(x: dict) -> dict:
        s = x["rest"]
        name = o.lower(o.prefix(s, "[A-Za-z]+"))
        named = o.length(name) > 0
        known = o.when([(name == z, h * 3600) for z, h in _ZONES.items()])
        rest, secs, err = _offset(o, s, "")
        after = o.drop(s, o.length(name))
        # a name it does not know leaves the offset unknown (RFC 2822's -0000)
        set_named = _set(o, {**x, "rest": after}, "offset", known, None)
        set_named = {k: o.when([(o.isnull(known), after if k == "rest" else x[k])],
                               set_named[k]) for k in x}
        set_num = _set(o, {**x, "rest": rest}, "offset", secs, err)
        return {k: o.when([(named, set_named[k])], set_num[k]) for k in x}

    def month(x: dict) -> dict:
        rest, k, err = _names(o, x["rest"], SHORT_MONTHS, None)
        return _set(o, {**x, "rest": rest}, "month", k + 1, err)

    return [
        lambda x: {**x, "rest": _trim(o, x["rest"])},
        weekday, lambda x: _field(o, x, "day", 1, 2), space, month, space, year, space, lambda x: _field(o, x, "hour", 2, 2), minute,
        lambda x: _field(o, x, "minute", 2, 2), seconds, space, zone]


# -- resolving what was read (chrono's Parsed::to_naive_*) ------------------------------------

def _resolve_year(o: Ops, y: Any, q: Any, r: Any) -> tuple[Any, Any]:
    """(year, error) from the full year, its century and its year in the century."""
    qq, rr = o.fdiv(y, 100), o.fmod(y, 100)
    r_ok = (r >= 0) & (r <= 99)
    consistent = (o.isnull(q) | (q == qq)) & (o.isnull(r) | (r == rr))
    year = o.when([(o.isnull(q) & o.isnull(r), y),
                   (~o.isnull(y), y),
                   (~o.isnull(q) & ~o.isnull(r), q * 100 + r),
                   (~o.isnull(r), r + o.when([(r < 70, 2000)], 1900))])
    err = o.when([(o.isnull(q) & o.isnull(r), None),
                  (~o.isnull(y) & (o.isnull(r) | r_ok) & (y < 0), OUT_OF_RANGE),
                  (~o.isnull(y) & (o.isnull(r) | r_ok) & ~consistent, IMPOSSIBLE),
                  (~o.isnull(y) & (o.isnull(r) | r_ok), None),
                  (o.isnull(y) & ~o.isnull(q) & ~o.isnull(r) & r_ok & (q < 0), OUT_OF_RANGE),
                  (o.isnull(y) & ~o.isnull(q) & ~o.isnull(r) & r_ok, None),
                  (o.isnull(y) & o.isnull(q) & r_ok, None),
                  (o.isnull(y) & o.isnull(r), NOT_ENOUGH)], OUT_OF_RANGE)
    return year, err


def to_date(o: Ops, p: dict, k: Callable[[Any, Any], Any]) -> Any:
    """`k` of the date read (days since 1970-01-01) and the error (null if none)."""
    year, e_year = _resolve_year(o, p["year"], p["year_div_100"], p["year_mod_100"])
    iso, e_iso = _resolve_year(o, p["isoyear"], p["isoyear_div_100"], p["isoyear_mod_100"])
    return o.bind({"year": year, "e_year": e_year, "iso": iso, "e_iso": e_iso},
                  lambda r: _to_date(o, p, r, k))


def _to_date(o: Ops, p: dict, r: dict, k: Callable[[Any, Any], Any]) -> Any:
    year, iso = r["year"], r["iso"]
    has = lambda *fs: ~o.isnull(year) & _all(o, [~o.isnull(p[f]) for f in fs])  # noqa: E731
    ymd_ok = valid_ymd(o, year, p["month"], p["day"])
    yo_ok = (p["ordinal"] >= 1) & (p["ordinal"] <= 365 + o.when([(is_leap(o, year), 1)], 0)) \
        & (year >= MIN_YEAR) & (year <= MAX_YEAR)
    wd_ok, wd_days = from_isoywd(o, iso, p["isoweek"], p["weekday"])
    isowd = ~o.isnull(iso) & ~o.isnull(p["isoweek"]) & ~o.isnull(p["weekday"])
    days = o.when([
        (has("month", "day") & ymd_ok, o.days_of(year, p["month"], p["day"])),
        (has("ordinal") & yo_ok, o.days_of(year, 1, 1) + p["ordinal"] - 1),
        (isowd & wd_ok, wd_days)])
    which = o.when([(has("month", "day"), "ymd"), (has("ordinal"), "yo"), (isowd, "isowd")],
                   "none")

    def verify(b: dict) -> Any:
        y, m, d = o.civil(b["days"])
        return o.bind({"y": y, "m": m, "d": d},
                      lambda c: k(b["days"], _date_error(o, p, r, b, c)))
    return o.bind({"days": days, "which": which}, verify)


def _all(o: Ops, xs: list[Any]) -> Any:
    out = o.c(True)
    for x in xs:
        out = out & x
    return out


def _date_error(o: Ops, p: dict, r: dict, b: dict, c: dict) -> Any:
    days, which = b["days"], b["which"]
    y, m, d = c["y"], c["m"], c["d"]
    iy, iw = o.iso_week(days)
    ordinal = o.ordinal(days)
    wd = weekday0(o, days)

    def agree(field: str, v: Any) -> Any:
        return o.isnull(p[field]) | (p[field] == v)

    div, mod = o.when([(y >= 0, o.fdiv(y, 100))]), o.when([(y >= 0, o.fmod(y, 100))])
    ymd = (agree("year", y) & (o.isnull(p["year_div_100"]) | (p["year_div_100"] == div))
           & (o.isnull(p["year_mod_100"]) | (p["year_mod_100"] == mod))
           & agree("month", m) & agree("day", d))
    isowd = agree("isoyear", iy) & agree("isoweek", iw) & agree("weekday", wd)
    ords = (agree("ordinal", ordinal)
            & agree("week_from_sun", o.fdiv(ordinal - o.fmod(wd + 1, 7) + 6, 7))
            & agree("week_from_mon", o.fdiv(ordinal - wd + 6, 7)))
    verified = (ymd | (which == "ymd")) & isowd & ords
    return o.coalesce(r["e_year"], r["e_iso"], o.when([
        (which == "none", NOT_ENOUGH), (o.isnull(days), OUT_OF_RANGE), (~verified, IMPOSSIBLE)]))


def to_time(o: Ops, p: dict) -> tuple[Any, Any, Any]:
    """(seconds since midnight, nanoseconds, error) of what was read."""
    hd, hm, mi = p["hour_div_12"], p["hour_mod_12"], p["minute"]
    sec = o.coalesce(p["second"], 0)
    nano = p["nanosecond"]
    err = o.when([
        (o.isnull(hd), NOT_ENOUGH), ((hd < 0) | (hd > 1), OUT_OF_RANGE),
        (o.isnull(hm), NOT_ENOUGH), ((hm < 0) | (hm > 11), OUT_OF_RANGE),
        (o.isnull(mi), NOT_ENOUGH), ((mi < 0) | (mi > 59), OUT_OF_RANGE),
        ((sec < 0) | (sec > 60), OUT_OF_RANGE),
        (~o.isnull(nano) & ((nano < 0) | (nano > NANOS - 1)), OUT_OF_RANGE),
        (~o.isnull(nano) & o.isnull(p["second"]), NOT_ENOUGH)])
    secs = (hd * 12 + hm) * 3600 + mi * 60 + o.when([(sec == 60, 59)], sec)
    nanos = o.when([(sec == 60, NANOS)], 0) + o.coalesce(nano, 0)
    return secs, nanos, err


def to_datetime(o: Ops, p: dict, off: Any, k: Callable[..., Any]) -> Any:
    """`k` of the date and time read (days, seconds, nanoseconds) and the error; `off` is the
    offset they are at (the timestamp field counts from UTC)."""
    secs, nano, e_time = to_time(o, p)
    return to_date(o, p, lambda days, e_date: o.bind(
        {"days": days, "e_date": e_date, "secs": secs, "nano": nano, "e_time": e_time,
         "off": off}, lambda b: _to_datetime(o, p, b, k)))


def _to_datetime(o: Ops, p: dict, b: dict, k: Callable[..., Any]) -> Any:
    days, e_date, secs, nano, e_time, off = (b[n] for n in
                                             ("days", "e_date", "secs", "nano", "e_time", "off"))
    ts = p["timestamp"]
    local = days * 86400 + secs
    given = ~o.isnull(ts)
    bad_ts = given & (ts != local - off) & ~((nano >= NANOS) & (ts == local - off + 1))
    both_ok = o.isnull(e_date) & o.isnull(e_time)
    # from the timestamp alone, when the fields do not make a date and a time
    t_local = ts + off
    t_days, t_secs = o.fdiv(t_local, 86400), o.fmod(t_local, 86400)
    ty, _, _ = o.civil(t_days)
    t_ord = o.ordinal(t_days)
    clash = ((~o.isnull(p["year"]) & (p["year"] != ty))
             | (~o.isnull(p["ordinal"]) & (p["ordinal"] != t_ord))
             | (~o.isnull(p["hour_div_12"]) & (p["hour_div_12"] != o.fdiv(t_secs, 43200)))
             | (~o.isnull(p["hour_mod_12"])
                & (p["hour_mod_12"] != o.fmod(o.fdiv(t_secs, 3600), 12)))
             | (~o.isnull(p["minute"]) & (p["minute"] != o.fmod(o.fdiv(t_secs, 60), 60)))
             | (~o.isnull(p["second"]) & (p["second"] != o.fmod(t_secs, 60))))
    err = o.when([
        (both_ok & bad_ts, IMPOSSIBLE), (both_ok, None),
        (given & ((e_date == OUT_OF_RANGE) | (e_time == OUT_OF_RANGE)), OUT_OF_RANGE),
        (given & ((e_date == IMPOSSIBLE) | (e_time == IMPOSSIBLE)), IMPOSSIBLE),
        (given & clash, IMPOSSIBLE), (given, None)], o.coalesce(e_date, e_time))
    return k(o.when([(both_ok, days)], t_days), o.when([(both_ok, secs)], t_secs),
             o.when([(both_ok, nano)], o.coalesce(nano, 0)), err)


# -- parsing on Spark: the same scan as regular expressions -----------------------------------
#
# The state machine above, run on Columns, nests a Spark lambda for each item. On Spark the
# scan is instead one regular expression per prefix of the items (Java's possessive `*+`, `?+`
# and `{m,n}+` never give back what they took, as chrono's scanners never do): the longest
# prefix that matches says where chrono stopped, what is left there says why, and the groups of
# each prefix give the items' values.

@dataclass(frozen=True)
class Prim:
    """One step of a scan: its regex (`frag`), the names of its groups, and how chrono fails
    on `rest`, the input left where it starts (`fail(o, rest)`)."""

    frag: str
    groups: tuple[str, ...]
    fail: Callable[[Ops, Any], Any]


def _q(text: str) -> str:
    return "\\Q" + text.replace("\\E", "\\E\\\\E\\Q") + "\\E"


def _short_or_invalid(n: int) -> Callable[[Ops, Any], Any]:
    return lambda o, r: o.when([(o.length(r) < n, TOO_SHORT)], INVALID)


def _trimmed(f: Callable[[Ops, Any], Any]) -> Callable[[Ops, Any], Any]:
    return lambda o, r: f(o, _trim(o, r))


def _num_fail(lo: int, signed: bool) -> Callable[[Ops, Any], Any]:
    def fail(o, r):
        sign = o.startswith(r, "-") | o.startswith(r, "+")
        if signed:
            return o.when([(o.length(r) == 0, TOO_SHORT),
                           (sign & (o.length(r) == 1), TOO_SHORT)], INVALID)
        return o.when([(o.length(r) < lo, TOO_SHORT)], INVALID)
    return fail


def _digits(lo: int, hi: int | None) -> str:
    return "[0-9]{%d,%s}+" % (lo, "" if hi is None else hi)


_SPACE = Prim(r"\s*+", (), lambda o, r: o.c(None))
_NAMES = {"month": (SHORT_MONTHS, LONG_MONTHS), "weekday": (SHORT_DAYS, LONG_DAYS)}


def _names_frag(field: str, long: bool) -> str:
    short, full = _NAMES[field]
    alts = [f"{n.lower()}(?:{f[3:].lower()})?+" if long else n.lower()
            for n, f in zip(short, full)]
    return "((?i:" + "|".join(alts) + "))"


def _offset_fail(colon: str, zulu: bool = False, missing_minutes: bool = False):
    """How chrono's timezone_offset fails on r; zulu: RFC 3339's, whose ':' is required."""
    def fail(o, r):
        hours = o.prefix(r, "[+-][0-9]{2}")
        r3 = o.drop(r, 3)
        after = o.drop(r, o.length(o.prefix(r, "[+-][0-9]{2}" + colon)))
        if zulu:
            after = o.drop(r3, 1)
        mm = o.take(after, 2)
        required = [(o.length(r3) == 0, TOO_SHORT), (~o.startswith(r3, ":"), INVALID)] \
            if zulu else []
        return o.when([
            (o.length(r) == 0, TOO_SHORT),
            (o.c(zulu) & (o.lower(o.take(r, 1)) == "z"), None),
            (~(o.startswith(r, "+") | o.startswith(r, "-")), INVALID),
            (o.length(r) < 3, TOO_SHORT),
            (o.length(hours) < 3, INVALID),
            *required,
            (o.c(missing_minutes) & (o.length(after) == 0), None),
            (o.length(after) < 2, TOO_SHORT),
            (o.length(o.prefix(mm, "[6-9][0-9]")) == 2, OUT_OF_RANGE)], INVALID)
    return fail


def prims(its: list[Item]) -> list[Prim]:
    """The scan of the items as steps."""
    out: list[Prim] = []
    for it in its:
        out.extend(_prims(it))
    return out


def _num(field: str, lo: int, hi: int | None, trim: bool = True, signed: bool = False) -> Prim:
    body = f"([+-][0-9]++|{_digits(lo, hi)})" if signed else f"({_digits(lo, hi)})"
    fail = _num_fail(lo, signed)
    return Prim((r"\s*+" if trim else "") + body, (field,), _trimmed(fail) if trim else fail)


def _prims(it: Item) -> list[Prim]:
    if it.kind == "lit":
        return [Prim(_q(it.text), (), _short_or_invalid(len(it.text)))]
    if it.kind == "space":
        return [_SPACE]
    if it.kind == "error":
        return [Prim("(?!)", (), lambda o, r: o.c(BAD_FORMAT))]
    if it.kind == "num":
        width, signed = _WIDTH[it.spec]
        return [_num(it.spec, 1, width or None, signed=signed)]
    s = it.spec
    if s in ("short_month", "long_month", "short_weekday", "long_weekday"):
        field = "month" if "month" in s else "weekday"
        return [Prim(_names_frag(field, s.startswith("long")), (field + "_name",),
                     _short_or_invalid(3))]
    if s in ("lower_ampm", "upper_ampm"):
        return [Prim("((?i:am|pm))", ("ampm",), _short_or_invalid(2))]
    if s.startswith("dot_nanos"):
        return [Prim(r"(?:(?!\.)|\.([0-9]{1,9}+)[0-9]*+)", ("fraction",),
                     lambda o, r: _num_fail(1, False)(o, o.drop(r, 1)))]
    if s.startswith("nanos"):
        k = int(s[-1])
        return [Prim("([0-9]{%d})" % k, (f"nanos{k}",), _num_fail(k, False))]
    if s == "tz_name":
        return [Prim(r"\S*+", (), lambda o, r: o.c(None))]
    if s in ("offset", "offset_colon", "offset_permissive"):
        minutes = "(?:([0-5][0-9])|$)" if s == "offset_permissive" else "([0-5][0-9])"
        return [Prim(r"\s*+([+-])([0-9]{2})[:\s]*+" + minutes, ("sign", "oh", "om"),
                     _trimmed(_offset_fail(r"[:\s]*", missing_minutes=s == "offset_permissive")))]
    if s == "rfc3339":
        return [_num("year", 4, 4, trim=False), Prim("-", (), _short_or_invalid(1)),
                _num("month", 2, 2, trim=False), Prim("-", (), _short_or_invalid(1)),
                _num("day", 2, 2, trim=False), Prim("[Tt]", (), _short_or_invalid(1)),
                _num("hour", 2, 2, trim=False), Prim(":", (), _short_or_invalid(1)),
                _num("minute", 2, 2, trim=False), Prim(":", (), _short_or_invalid(1)),
                _num("second", 2, 2, trim=False),
                Prim(r"(?:(?!\.)|\.([0-9]{1,9}+)[0-9]*+)", ("fraction",),
                     lambda o, r: _num_fail(1, False)(o, o.drop(r, 1))),
                Prim("(?:([Zz])|([+-])([0-9]{2}):([0-5][0-9]))", ("zulu", "sign", "oh", "om"),
                     _offset_fail(":", zulu=True))]
    if s == "rfc2822":
        days = "mon|tue|wed|thu|fri|sat|sun"
        space = Prim(r"\s++", (), lambda o, r: o.when([(o.length(r) == 0, TOO_SHORT)],
                                                        INVALID))
        return [_SPACE,
                Prim(f"(?:((?i:{days})),\\s*+|(?!(?i:{days})))", ("weekday_name",),
                     lambda o, r: o.c(INVALID)),
                _num("day", 1, 2, trim=False), space,
                Prim(_names_frag("month", False), ("month_name",), _short_or_invalid(3)),
                space,
                _num("year2822", 2, None, trim=False), space,
                _num("hour", 2, 2, trim=False),
                Prim(r"\s*+:\s*+", (), _trimmed(_short_or_invalid(1))),
                _num("minute", 2, 2, trim=False),
                Prim(r"(?:\s*+:([0-9]{2}+)|(?!\s*+:))", ("second",),
                     _trimmed(lambda o, r: _num_fail(2, False)(o, o.drop(r, 1)))),
                space,
                Prim("(?:([A-Za-z]++)|([+-])([0-9]{2})([0-5][0-9]))",
                     ("zone", "sign", "oh", "om"), _offset_fail(""))]
    raise ValueError(s)


def spark_parse(o: Ops, s: Any, its: list[Item], k: Callable[[dict], Any]) -> Any:
    """What `parse` computes, by regular expressions (for SparkOps)."""
    ps = prims(its)
    F = o.F
    frags = [p.frag for p in ps]
    fields: dict[str, Any] = {f: o.c(None) for f in _FIELDS}
    errs: list[tuple[Any, Any]] = []
    group = 0
    for j, p in enumerate(ps):
        prefix = "^(?s:" + "".join(frags[:j + 1]) + ")"
        rest_before = F.regexp_extract(s, "^(?s:" + "".join(frags[:j]) + ")((?s:.*))$",
                                       _count_groups(frags[:j]) + 1)
        matched = s.rlike(prefix)
        # a step that does not match fails (INVALID where chrono would have gone on)
        errs.append((~matched, o.coalesce(p.fail(o, rest_before), INVALID)))
        vals = {g: F.regexp_extract(s, prefix, group + i + 1) for i, g in enumerate(p.groups)}
        group += len(p.groups)
        fields, set_err = _apply(o, fields, vals)
        errs.append((~o.isnull(set_err), set_err))
    whole = "^(?s:" + "".join(frags) + ")"
    trailing = o.length(F.regexp_replace(s, whole, "")) > 0
    errs.append((trailing, TOO_LONG))
    err = o.when(errs)
    return o.bind({**fields, "err": err}, k)


def _count_groups(frags: list[str]) -> int:
    return sum(len(re.findall(r"(?<!\\)\((?!\?)", f)) for f in frags)


def _apply(o: Ops, fields: dict, vals: dict) -> tuple[dict, Any]:
    """The fields after a step that read `vals` (texts; '' where a group took nothing), and
    the error setting them gives (chrono's Parsed::set_*), null if none."""
    errs: list[Any] = []

    def put(field: str, v: Any, bad: Any = None) -> None:
        old = fields[field]
        clash = (~o.isnull(old)) & (old != v) & ~o.isnull(v)
        errs.append(o.when([(bad if bad is not None else o.c(False), OUT_OF_RANGE),
                            (clash, IMPOSSIBLE)]))
        fields[field] = o.coalesce(old, v)

    def num(t: Any) -> Any:
        return o.when([(o.length(t) > 0, o.to_int(o.take(t, 18)))])

    for g, t in vals.items():
        if g in ("sign", "oh", "om", "zone", "zulu", "nanos3", "nanos6", "nanos9"):
            continue
        if g in _WIDTH or g in ("year2822", "second"):
            signed = o.startswith(t, "-") | o.startswith(t, "+")
            digits = o.when([(signed, o.drop(t, 1))], t)
            v = num(digits) * o.when([(o.startswith(t, "-"), -1)], 1)
            too_big = o.length(digits) > 18
            if g == "year2822":
                n = o.length(t)
                v = o.when([((n == 2) & (v <= 49), v + 2000),
                            ((n == 2) | (n == 3), v + 1900)], v)
                put("year", v, too_big)
            elif g == "hour":
                bad = too_big | (v < 0) | (v > 23)
                put("hour_div_12", o.fdiv(v, 12), bad)
                put("hour_mod_12", o.fmod(v, 12))
            elif g == "hour12":
                put("hour_mod_12", o.fmod(v, 12), too_big | (v < 1) | (v > 12))
            elif g == "num_days_from_sun":
                put("weekday", o.fmod(v + 6, 7), too_big | (v > 6))
            elif g == "weekday_from_mon":
                put("weekday", v - 1, too_big | (v < 1) | (v > 7))
            else:
                put(g, v, too_big)
        elif g in ("month_name", "weekday_name"):
            field = g[:-len("_name")]
            short = [n.lower() for n in _NAMES[field][0]]
            k = o.index(short, o.lower(o.take(t, 3)))
            put(field, k + 1 if field == "month" else k)
        elif g == "ampm":
            a = o.lower(t)
            put("hour_div_12", o.when([(a == "pm", 1), (a == "am", 0)]))
        elif g == "fraction":
            n = o.length(t)
            scale = o.when([(n == i, 10 ** (9 - i)) for i in range(1, 10)])
            put("nanosecond", num(t) * scale)
    for k in (3, 6, 9):
        t = vals.get(f"nanos{k}")
        if t is not None:
            put("nanosecond", num(t) * 10 ** (9 - k))
    if "oh" in vals:
        sign = o.when([(vals["sign"] == "-", -1)], 1)
        off = (num(vals["oh"]) * 3600 + o.coalesce(num(vals["om"]), 0) * 60) * sign
        zone = o.lower(vals.get("zone", o.c("")))
        named = o.when([(zone == z, h * 3600) for z, h in _ZONES.items()])
        off = o.when([(o.length(zone) > 0, named)], off)
        if "zulu" in vals:
            off = o.when([(o.length(vals["zulu"]) > 0, 0)], off)
            put("offset", off, (off <= -86400) | (off >= 86400))
        else:
            put("offset", off)
    return fields, o.coalesce(*errs) if errs else o.c(None)
