"""The built-ins under DDlog's `time` library (ddlog/builtins/lib/time.dl): chrono's Time, Date
and TzDateTime, values that are their text (`extern type`s). Each entry runs the one
definition in chrono.py, on Python values for its Python meaning and on Columns for Spark.

A format string is read when the program is compiled: the entries that take one ask for a
constant there (`Builtin.constants`), so that its items decide the Spark expressions.
"""
from __future__ import annotations

from typing import Any, Callable

import ddlog.builtins.chrono as ch
from ddlog.builtins.base import Builtin, fixed, result_column
from ddlog.types import STRING, TInt, TString, TTuple, Type, result_type
from ddlog.values import Record

TIME = TString("time::Time", "00:00:00.000000000")
DATE = TString("time::Date", "0000-01-01")
TZ = TString("time::TzDateTime", "0000-01-01T00:00:00+00:00")
U8, U16, U32, U64 = (TInt(False, n) for n in (8, 16, 32, 64))
S32, S64 = TInt(True, 32), TInt(True, 64)
FMT_RESULT = result_type(STRING, STRING)


def _out(x: Any) -> Any:
    if isinstance(x, ch.V):
        return x.v
    if isinstance(x, tuple):
        return tuple(_out(v) for v in x)
    if isinstance(x, Record):
        return Record(x.ctor, tuple(_out(v) for v in x.values))
    return x


def _spark(body: Callable[..., Any]) -> Callable[[Any, list, list, Type], Any]:
    def lower(sx, args: list, types: list, ty: Type) -> Any:
        o = ch.SparkOps(sx)
        o.finish = lambda x: _column(sx, x, ty)
        return body(o, *args)
    return lower


def _column(sx, x: Any, ty: Type) -> Any:
    F, o = sx.F, ch.SparkOps(sx)
    if isinstance(x, _Result):
        value = _column(sx, x.value, ty.ctors[0].fields[0][1])
        return result_column(sx, o.col(x.ok), value, o.col(x.err), ty)
    if isinstance(x, tuple):
        return F.struct(*[_column(sx, v, t).alias(f"_{k}")
                          for k, (v, t) in enumerate(zip(x, ty.items))])
    return o.col(x).cast(sx.spark_type(ty))


class _Result:
    """`Ok{value}` where `ok` holds, else `Err{err}`."""

    def __init__(self, ok: Any, value: Any, err: Any):
        self.ok, self.value, self.err = ok, value, err


def _result(o, ok: Any, value: Any, err: Any) -> Any:
    if isinstance(o, ch.PyOps):
        return Record("Ok", (value,)) if ch.V(ok).v is True else Record("Err", (err,))
    return _Result(ok, value, err)


def entry(name: str, sig: str, meaning: str, params: tuple, result: Type,
          body: Callable[..., Any], constants: tuple[int, ...] = ()) -> Builtin:
    """A built-in whose Python meaning and Spark lowering are `body` (over chrono's Ops; it
    ends with `o.finish` of its result)."""
    return Builtin(name, len(params), sig, meaning, fixed(*params, result=result),
                   _spark(body), _python(body, constants), constants=constants,
                   reads_arguments_often=True)


def _python(body, constants: tuple[int, ...]):
    """A Python meaning that hands the constant arguments over as they are."""
    def meaning(args: list, types: list, ty: Type) -> Any:
        o = ch.PyOps()
        o.finish = _out
        return body(o, *[a if k in constants else ch.V(a) for k, a in enumerate(args)])
    return meaning


# -- the entries' bodies ----------------------------------------------------------------------

def _hms(o, h, m, s, nano):
    ok = (h < 24) & (m < 60) & (s < 60) & (nano < 2 * ch.NANOS)
    return o.finish(_result(o, ok, ch.time_text(o, h * 3600 + m * 60 + s, nano),
                            "illegal time value"))


def _time_parts(o, t):
    secs, nano = ch.read_time(o, t)
    return o.bind({"secs": secs, "nano": nano}, lambda b: o.finish(
        (o.fdiv(b["secs"], 3600), o.fmod(o.fdiv(b["secs"], 60), 60), o.fmod(b["secs"], 60),
         b["nano"])))


def _date_result(o, ok, days):
    return o.bind({"ok": ok, "days": days}, lambda b: o.finish(
        _result(o, b["ok"], _days_text(o, b["days"]), "Invalid date")))


def _ymd(o, y, m, d):
    return _date_result(o, ch.valid_ymd(o, y, m, d), o.days_of(y, m, d))


def _yo(o, y, ordinal):
    ok = ((ordinal >= 1) & (ordinal <= 365 + o.when([(ch.is_leap(o, y), 1)], 0))
          & (y >= ch.MIN_YEAR) & (y <= ch.MAX_YEAR))
    return _date_result(o, ok, o.days_of(y, 1, 1) + ordinal - 1)


def _iso_ywd(o, y, w, wd0):
    ok, days = ch.from_isoywd(o, y, w, wd0)
    return _date_result(o, ok & (y >= ch.MIN_YEAR) & (y <= ch.MAX_YEAR), days)


def _date(o, d) -> ch.Parts:
    y, m, dd = ch.read_date(o, d)
    return ch.date_parts(o, y, m, dd)


def _date_fields(o, d):
    def fields(p: ch.Parts):
        return o.finish((p.y, p.m, p.d, o.ordinal(p.days), o.iso_week(p.days)[1],
                         ch.weekday0(o, p.days), p.days + ch.JULIAN_EPOCH))
    return ch.with_parts(o, _date(o, d), fields)


def _days_text(o, days):
    """The text of a date (days since 1970-01-01), days read more than once: bound already."""
    y, m, d = o.civil(days)
    return ch.date_text(o, y, m, d)


def _add_days(o, d, n):
    return o.bind({"days": _date(o, d).days + n}, lambda b: o.finish(_days_text(o, b["days"])))


def _from_julian(o, j):
    return o.bind({"days": j - ch.JULIAN_EPOCH}, lambda b: o.finish(_days_text(o, b["days"])))


def _parts(o, date=None, time=None, off=None) -> ch.Parts:
    p = _date(o, date) if date is not None else ch.Parts()
    if time is not None:
        p.secs, p.nano = ch.read_time(o, time)
    p.off = off
    return p


def _formatter(has: set[str], of: Callable[..., ch.Parts]):
    def body(o, *args):
        fmt = args[-1]
        its = ch.items(fmt)
        if not ch.can_format(its, has):
            return o.finish(_result(o, o.c(False), o.c(""), o.c(ch.format_error(fmt))))
        return ch.with_parts(o, of(o, *args[:-1]), lambda p: o.finish(
            _result(o, o.c(True), ch.format_value(o, its, p), o.c(""))))
    return body


def _tz_parts(o, tz) -> ch.Parts:
    return ch.read_tz(o, tz)


def _parse_time(o, s, fmt):
    def done(st):
        secs, nano, err = ch.to_time(o, st)
        e = o.coalesce(st["err"], err)
        return o.finish(_result(o, o.isnull(e), ch.time_text(o, secs, nano), e))
    return ch.parse(o, s, ch.items(fmt), done)


def _parse_date(o, s, fmt):
    def done(days, err):
        return o.finish(_result(o, o.isnull(err), _days_text(o, days), err))
    return ch.parse(o, s, ch.items(fmt), lambda st: ch.to_date(
        o, st, lambda days, err: done(days, o.coalesce(st["err"], err))))


def _parse_datetime(o, s, fmt):
    def done(st, days, secs, nano, err):
        e = o.coalesce(st["err"], err)
        return o.finish(_result(o, o.isnull(e), (_days_text(o, days),
                                                 ch.time_text(o, secs, nano)), e))
    return ch.parse(o, s, ch.items(fmt), lambda st: ch.to_datetime(
        o, st, o.c(0), lambda *r: o.bind(dict(zip(("days", "secs", "nano", "err"), r)),
                                          lambda b: done(st, *b.values()))))


def _parse_tz_items(o, s, its):
    def done(st, b):
        off = st["offset"]
        e = o.coalesce(st["err"], o.when([(o.isnull(off), ch.NOT_ENOUGH),
                                          ((off <= -86400) | (off >= 86400), ch.OUT_OF_RANGE)]),
                       b["err"])
        y, m, d = o.civil(b["days"])
        p = ch.Parts(b["days"], y, m, d, b["secs"], b["nano"], off)
        return o.finish(_result(o, o.isnull(e), ch.tz_text(o, p), e))
    return ch.parse(o, s, its, lambda st: ch.to_datetime(
        o, st, o.coalesce(st["offset"], 0), lambda *r: o.bind(
            dict(zip(("days", "secs", "nano", "err"), r)), lambda b: done(st, b))))


def _shift(o, date, time, n):
    p = _parts(o, date, time)
    return o.bind({"total": p.days * 86400 + p.secs + n, "nano": p.nano}, lambda b: o.finish(
        (_days_text(o, o.fdiv(b["total"], 86400)),
         ch.time_text(o, o.fmod(b["total"], 86400), b["nano"]))))


def _tz(o, date, time, off):
    return ch.with_parts(o, _parts(o, date, time, off), lambda p: o.finish(ch.tz_text(o, p)))


def _tz_split(o, tz):
    return ch.with_parts(o, ch.read_tz(o, tz), lambda p: o.finish(
        (ch.date_text(o, p.y, p.m, p.d), ch.time_text(o, p.secs, p.nano), p.off)))


def _rfc2822(o, tz):
    return ch.with_parts(o, ch.read_tz(o, tz), lambda p: o.finish(ch.rfc2822_text(o, p)))


def _text(o, x):
    return o.finish(x)


_FMT = "(a constant)"
TIMES: dict[str, Builtin] = {b.name: b for b in [
    entry("chrono_hms", "chrono_hms(u8, u8, u8, u64) -> Result<time::Time, string>",
          "the time of day of hours, minutes, seconds and nanoseconds (from 10^9: a leap "
          "second), as chrono's from_hms_nano_opt", (U8, U8, U8, U64),
          result_type(TIME, STRING), _hms),
    entry("chrono_time_parts", "chrono_time_parts(time::Time) -> (u8, u8, u8, u32)",
          "a time's hour, minute, second and nanosecond", (TIME,),
          TTuple((U8, U8, U8, U32)), _time_parts),
    entry("chrono_ymd", "chrono_ymd(s32, u8, u8) -> Result<time::Date, string>",
          "the date of a year, month and day (proleptic Gregorian)", (S32, U8, U8),
          result_type(DATE, STRING), _ymd),
    entry("chrono_yo", "chrono_yo(s32, u16) -> Result<time::Date, string>",
          "the date of a year and a day of the year", (S32, U16),
          result_type(DATE, STRING), _yo),
    entry("chrono_iso_ywd", "chrono_iso_ywd(s32, u8, u8) -> Result<time::Date, string>",
          "the date of an ISO year, week and weekday (0 for Monday)", (S32, U8, U8),
          result_type(DATE, STRING), _iso_ywd),
    entry("chrono_date_parts",
          "chrono_date_parts(time::Date) -> (s32, u8, u8, u16, u8, u8, s64)",
          "a date's year, month, day, day of the year, ISO week, weekday (0 for Monday) and "
          "Julian day", (DATE,), TTuple((S32, U8, U8, U16, U8, U8, S64)), _date_fields),
    entry("chrono_add_days", "chrono_add_days(time::Date, s64) -> time::Date",
          "the date that many days later", (DATE, S64), DATE, _add_days),
    entry("chrono_from_julian", "chrono_from_julian(s64) -> time::Date",
          "the date of a Julian day", (S64,), DATE, _from_julian),
    entry("chrono_format_time", "chrono_format_time(time::Time, string) -> Result<string, "
          "string>", "a time written by a strftime format " + _FMT, (TIME, STRING), FMT_RESULT,
          _formatter({"time"}, lambda o, t: _parts(o, time=t)), constants=(1,)),
    entry("chrono_format_date", "chrono_format_date(time::Date, string) -> Result<string, "
          "string>", "a date written by a strftime format " + _FMT, (DATE, STRING), FMT_RESULT,
          _formatter({"date"}, lambda o, d: _parts(o, date=d)), constants=(1,)),
    entry("chrono_format_datetime", "chrono_format_datetime(time::Date, time::Time, string) "
          "-> Result<string, string>", "a date and time written by a strftime format " + _FMT,
          (DATE, TIME, STRING), FMT_RESULT,
          _formatter({"date", "time"}, lambda o, d, t: _parts(o, d, t)), constants=(2,)),
    entry("chrono_format_tz", "chrono_format_tz(time::TzDateTime, string) -> "
          "Result<string, string>", "a date-time with its offset written by a strftime "
          "format " + _FMT, (TZ, STRING), FMT_RESULT,
          _formatter({"date", "time", "offset"}, _tz_parts), constants=(1,)),
    entry("chrono_parse_time", "chrono_parse_time(string, string) -> Result<time::Time, "
          "string>", "a time read by a strftime format " + _FMT + ", as chrono reads it",
          (STRING, STRING), result_type(TIME, STRING), _parse_time, constants=(1,)),
    entry("chrono_parse_date", "chrono_parse_date(string, string) -> Result<time::Date, "
          "string>", "a date read by a strftime format " + _FMT + ", as chrono reads it",
          (STRING, STRING), result_type(DATE, STRING), _parse_date, constants=(1,)),
    entry("chrono_parse_datetime", "chrono_parse_datetime(string, string) -> "
          "Result<(time::Date, time::Time), string>", "a date and time read by a strftime "
          "format " + _FMT + ", as chrono reads them", (STRING, STRING),
          result_type(TTuple((DATE, TIME)), STRING), _parse_datetime, constants=(1,)),
    entry("chrono_parse_tz", "chrono_parse_tz(string, string) -> Result<time::TzDateTime, "
          "string>", "a date-time with its offset read by a strftime format " + _FMT,
          (STRING, STRING), result_type(TZ, STRING),
          lambda o, s, fmt: _parse_tz_items(o, s, ch.items(fmt)), constants=(1,)),
    entry("chrono_parse_rfc3339", "chrono_parse_rfc3339(string) -> Result<time::TzDateTime, "
          "string>", "a date-time with its offset read as RFC 3339", (STRING,),
          result_type(TZ, STRING), lambda o, s: _parse_tz_items(o, s, ch.RFC3339)),
    entry("chrono_parse_rfc2822", "chrono_parse_rfc2822(string) -> Result<time::TzDateTime, "
          "string>", "a date-time with its offset read as RFC 2822", (STRING,),
          result_type(TZ, STRING), lambda o, s: _parse_tz_items(o, s, ch.RFC2822)),
    entry("chrono_shift", "chrono_shift(time::Date, time::Time, s64) -> (time::Date, "
          "time::Time)", "a date and time that many seconds later", (DATE, TIME, S64),
          TTuple((DATE, TIME)), _shift),
    entry("chrono_tz", "chrono_tz(time::Date, time::Time, s32) -> time::TzDateTime",
          "the local date and time at an offset (seconds east of UTC)", (DATE, TIME, S32), TZ,
          _tz),
    entry("chrono_tz_parts", "chrono_tz_parts(time::TzDateTime) -> (time::Date, time::Time, "
          "s32)", "a date-time's local date, local time and offset", (TZ,),
          TTuple((DATE, TIME, S32)), _tz_split),
    entry("chrono_rfc2822", "chrono_rfc2822(time::TzDateTime) -> string",
          "a date-time with its offset as RFC 2822 writes it", (TZ,), STRING,
          _rfc2822),
    entry("chrono_text_time", "chrono_text_time(time::Time) -> string", "a time's text",
          (TIME,), STRING, _text),
    entry("chrono_text_date", "chrono_text_date(time::Date) -> string", "a date's text",
          (DATE,), STRING, _text),
    entry("chrono_text_tz", "chrono_text_tz(time::TzDateTime) -> string",
          "a date-time's text (RFC 3339)", (TZ,), STRING, _text),
]}
