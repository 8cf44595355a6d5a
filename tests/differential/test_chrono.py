"""DDlog's `time` library on Spark against its Python meaning (ddlog/builtins/chrono.py runs
the one on Columns, the other on Python values; on Spark a parse is regular expressions, in
Python chrono's scan step by step): every entry over inputs that reach each of chrono's
answers, formats of every specifier, and random dates and times."""
from __future__ import annotations

import random

import pytest

from ddlog.builtins.times import TIMES
from ddlog.plan import exprs as ir
from ddlog.types import STRING, TInt

S64 = TInt(True, 64)

PARSE_TIME = [("10:10", "%T"), ("10:10:10", "%T"), ("10:10:10.102030405", "%T.%f"),
              ("10::11::12", "%H::%M::%S"), ("24:00:00", "%T"), ("23:60:00", "%T"),
              ("10:10:60", "%T"), ("10:10:10.5", "%T%.f"), ("10:10:10.", "%T%.f"),
              ("10:10:10 trailing", "%T"), ("1:2:3", "%H:%M:%S"), (" 7:08", "%k:%M"),
              ("07:08 pm", "%I:%M %p"), ("13:08 pm", "%I:%M %p"), ("12:00 AM", "%I:%M %P"),
              ("10:10:10", "%H:%M:%S %i"), ("x10:10", "%T"), ("10:10:10.123", "%T.%3f"),
              ("10:10:10.12", "%T.%3f"), ("10", "%H"), ("", "%T"), ("10:10:10", "%R")]
PARSE_DATE = [("2020/04/14", "%Y/%m/%d"), ("2020-04-14T", "%Y-%m-%dT"),
              ("2020-13-01", "%Y-%m-%d"), ("2020-02-30", "%F"), ("Tue 2020-04-14", "%a %F"),
              ("Wed 2020-04-14", "%a %F"), ("-0044-03-15", "%F"), ("+12345-01-01", "%F"),
              ("2020-105", "%Y-%j"), ("2020-366", "%Y-%j"), ("2021-366", "%Y-%j"),
              ("20-04-14", "%y-%m-%d"), ("99-04-14", "%y-%m-%d"), ("2020 W16 2", "%G W%V %u"),
              ("14 April 2020", "%d %B %Y"), ("14 apr 2020", "%d %b %Y"),
              ("14 Apl 2020", "%d %b %Y"), ("14 Ap", "%d %b"), ("Tuesday 2020-04-14", "%A %F"),
              ("2020-04", "%Y-%m"), ("20 20-04-14", "%C %y-%m-%d"), ("04/14/20", "%D"),
              ("2020-04-14", "%Y-%m-%d %H"), ("2020-4-4", "%Y-%m-%d"), ("", "%Y")]
PARSE_DATETIME = [("2020-10-10T10:20:30", "%Y-%m-%dT%H:%M:%S"),
                  ("2020/10/10T10:20:30", "%Y-%m-%dT%H:%M:%S"),
                  ("Wed Mar 05 07:45:30 MST 2025", "%a %b %d %H:%M:%S %Z %Y"),
                  ("2020-04-14T10::11", "%Y-%m-%dT%H::%M"), ("1586859072", "%s"),
                  ("1586859072 2020", "%s %Y"), ("1586859072 2019", "%s %Y"),
                  ("Tue Apr 14 10:11:12 2020", "%c"), ("2020-04-14T10:11:12", "%Y-%m-%dT%T")]
PARSE_TZ = [("2020-10-10T10:20:30 +02:00", "%Y-%m-%dT%H:%M:%S %z"),
            ("2020-10-10T10:20:30 -0330", "%Y-%m-%dT%H:%M:%S %z"),
            ("2020-10-10T10:20:30 +0260", "%Y-%m-%dT%H:%M:%S %z"),
            ("2020-10-10T10:20:30 +02", "%Y-%m-%dT%H:%M:%S %#z"),
            ("2020-10-10T10:20:30 +2", "%Y-%m-%dT%H:%M:%S %z"),
            ("2020-10-10T10:20:30 02:00", "%Y-%m-%dT%H:%M:%S %z"),
            ("Wed Mar 05 07:45:30 MST 2025", "%a %b %d %H:%M:%S %Z %Y"),
            ("2020-10-10T10:20:30.25+05:30", "%+")]
RFC3339 = ["2020-10-10T10:20:30-03:00", "2020-10-10t10:20:30Z", "2020-10-10T10:20:30.5+01:00",
           "2020-10-10 10:20:30Z", "2020-10-10T10:20:30", "2020-10-10T10:20:30+0100",
           "2020-10-10T10:20:30+01:60", "2020-1-10T10:20:30Z", ""]
RFC2822 = ["Tue, 1 Jul 2003 10:52:37 +0200", "Tue, 1 Jul 2003 10:52:37 GMT",
           "1 Jul 2003 10:52:37 EST", "Tue 1 Jul 2003 10:52:37 GMT", "Wed, 1 Jul 2003 10:52 UT",
           "Tue, 1 Jul 03 10:52:37 PDT", "Tue, 1 Jul 2003 10:52:37 XYZ", "Tue, 1 Jul 2003",
           "Tue, 01 Jul 2003 10 : 52 : 37 -0000", ""]
FORMATS = ["%Y-%m-%dT%H::%M", "%a %A %b %B %h %j %U %W %V %G %g %u %w %e %C %y %D %x %F %v",
           "%H %k %I %l %P %p %M %S %f %.f %.3f %.6f %.9f %3f %6f %9f %R %T %X %r %s",
           "%z %:z %Z %+ %c %t%n%%", "%-d %_m %0e %-j %_H", "%incorrectformat", "%Y %-T", "%",
           "%.2f", "plain text", ""]


def _run(spark, name: str, rows: list[tuple], consts: dict[int, str] | None = None) -> None:
    """The entry on Spark over `rows` (one column each) equals its Python meaning."""
    b = TIMES[name]
    consts = consts or {}
    params = b.type_rule(_Types(), None)
    types = _Types.seen
    arity = len(types)
    cols = [k for k in range(arity) if k not in consts]
    from ddlog.runtime.expr import compile_expr
    from ddlog.runtime.schema import from_spark, spark_type
    from pyspark.sql.types import StructField, StructType
    schema = StructType([StructField(f"c{k}", spark_type(types[k]), True) for k in cols])
    df = spark.createDataFrame([tuple(r[i] for i in range(len(cols))) for r in rows], schema)
    args = tuple(ir.Const(consts[k], types[k]) if k in consts else ir.Col(f"c{k}", types[k])
                 for k in range(arity))
    column = compile_expr(ir.Call(name, args, params))
    got = [from_spark(r[0], params) for r in df.select(column).collect()]
    for r, g in zip(rows, got):
        vals, it = [], iter(r)
        for k in range(arity):
            vals.append(consts[k] if k in consts else next(it))
        want = b.python(vals, types, params)
        assert g == want, (name, r, consts, g, want)


class _Types:
    """Records the parameter types an entry's type rule checks."""

    seen: list = []

    def __init__(self):
        _Types.seen = []

    def check(self, i, t):
        _Types.seen.append(t)
        return t


@pytest.mark.parametrize("name,cases", [("chrono_parse_time", PARSE_TIME),
                                        ("chrono_parse_date", PARSE_DATE),
                                        ("chrono_parse_datetime", PARSE_DATETIME),
                                        ("chrono_parse_tz", PARSE_TZ)])
def test_parsing_by_a_format_agrees_with_chrono_s_scan(spark, name, cases):
    for fmt in sorted({f for _, f in cases}):
        _run(spark, name, [(s,) for s, f in cases if f == fmt], {1: fmt})


def test_rfc_3339_and_2822(spark):
    _run(spark, "chrono_parse_rfc3339", [(s,) for s in RFC3339])
    _run(spark, "chrono_parse_rfc2822", [(s,) for s in RFC2822])


def _dates(rng: random.Random, n: int) -> list[str]:
    from ddlog.builtins import chrono as ch
    o = ch.PyOps()
    days = [rng.randint(-800_000, 3_000_000) for _ in range(n)] + [0, -719528, 2932896]
    return [ch.date_text(o, *o.civil(ch.V(d))).v for d in days]


def _times(rng: random.Random, n: int) -> list[str]:
    from ddlog.builtins import chrono as ch
    o = ch.PyOps()
    out = []
    for _ in range(n):
        nano = rng.choice([0, 5_000_000, 120_000, 7, rng.randrange(ch.NANOS),
                           ch.NANOS + 250_000_000])
        out.append(ch.time_text(o, ch.V(rng.randrange(86400)), ch.V(nano)).v)
    return out + ["00:00:00.000000000", "23:59:60.500000000", "12:00:00.000000000"]


def test_formats_of_random_dates_and_times(spark):
    rng = random.Random(11)
    dates, times = _dates(rng, 40), _times(rng, 40)
    for fmt in FORMATS:
        _run(spark, "chrono_format_date", [(d,) for d in dates], {1: fmt})
        _run(spark, "chrono_format_time", [(t,) for t in times], {1: fmt})
        _run(spark, "chrono_format_datetime", list(zip(dates, times)), {2: fmt})


def test_dates_times_and_offsets(spark):
    rng = random.Random(12)
    dates, times = _dates(rng, 30), _times(rng, 33)
    _run(spark, "chrono_date_parts", [(d,) for d in dates])
    _run(spark, "chrono_time_parts", [(t,) for t in times])
    _run(spark, "chrono_add_days", [(d, rng.randint(-400, 400)) for d in dates])
    _run(spark, "chrono_from_julian", [(rng.randint(-5_000_000, 9_000_000),) for _ in range(30)])
    _run(spark, "chrono_ymd", [(y, m, d) for y in (-1, 0, 1900, 2000, 2020, 2021, 262143,
                                                   262144) for m in (0, 2, 12, 13)
                               for d in (0, 1, 28, 29, 31)])
    _run(spark, "chrono_yo", [(y, o) for y in (1900, 2000, 2021, -262145) for o in (0, 1, 365,
                                                                                  366)])
    _run(spark, "chrono_iso_ywd", [(y, w, d) for y in (2015, 2020, 2021) for w in (0, 1, 52, 53)
                                   for d in (0, 6, 7)])
    _run(spark, "chrono_hms", [(h, m, s, n) for h in (0, 23, 24) for m in (0, 59, 60)
                               for s in (0, 59, 60) for n in (0, 999_999_999, 1_999_999_999,
                                                              2_000_000_000)])
    offsets = [0, 3600, -1000, 19800, -43200, 86399]
    tzs = []
    for d, t in zip(dates, times):
        off = rng.choice(offsets)
        tzs.append((d, t, off))
    _run(spark, "chrono_shift", [(d, t, rng.randint(-10**9, 10**9)) for d, t in zip(dates, times)])
    _run(spark, "chrono_tz", tzs)
    from ddlog.builtins.times import TIMES as T
    texts = [T["chrono_tz"].python([d, t, off], [], None) for d, t, off in tzs]
    _run(spark, "chrono_tz_parts", [(x,) for x in texts])
    _run(spark, "chrono_rfc2822", [(x,) for x in texts])
    for fmt in FORMATS:
        _run(spark, "chrono_format_tz", [(x,) for x in texts], {1: fmt})
