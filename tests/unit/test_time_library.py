"""DDlog's `time` library and `extern type`: the types, the checker's errors with their
location, and the Python meaning of its built-ins (chrono's answers, from DDlog's own test
`time_test` and chrono's documentation). tests/differential/test_chrono.py holds the Spark
lowering to the same meaning."""
from __future__ import annotations

from ddlog.builtins import chrono as ch
from ddlog.builtins.times import DATE, TIME, TIMES, TZ
from ddlog.check import check_text
from ddlog.syntax.commands import parse_commands
from ddlog.types import STRING, TString
from ddlog.values import Record
from tests.oracle.evaluate import evaluate
from tests.unit.test_typecheck import check, fails


def call(name: str, *args):
    return TIMES[name].python(list(args), [], None)


def test_an_extern_type_is_a_type_of_its_own_whose_values_are_text():
    prog = check('extern type T = "zero"\nextern type U\n'
                 'input relation I(t: T, u: U)\noutput relation O(t: T, d: T, s: string)\n'
                 'function show(t: T): string { "t" }\n'
                 'O(t, default(), show(t)) :- I(t, _).\n')
    assert prog.relations["I"].columns[0][1] == TString("T", "zero")
    assert prog.relations["I"].columns[0][1] != STRING
    assert evaluate(prog, {"I": {("a", "b")}})["O"] == {("a", "zero", "t")}
    fails('extern type T\noutput relation O(t: T)\nO("x").\n',
          "type mismatch: expected T, found string", '"x"')


def test_the_library_declares_its_types_as_the_built_ins_take_them():
    prog = check_text("import time\ninput relation I(t: Time, d: Date, z: TzDateTime)\n")
    assert [t for _, t in prog.relations["I"].columns] == [TIME, DATE, TZ]


def test_a_format_is_a_constant():
    src = ("import time\ninput relation F(f: string)\noutput relation O(s: string)\n"
           "function fmt(): string { \"%H\" }\n"
           "O(time_format(midnight(), fmt()).unwrap_or_default()) :- F(_).\n"
           "O(time_format(midnight(), f).unwrap_or_default()) :- F(f).\n")
    try:
        check_text(src, "t.dl")
    except Exception as e:  # noqa: BLE001 - the message and place are what is checked
        assert "reads argument 2 when the program is compiled: it must be a constant" in str(e)
        assert e.span.line == 6 and e.span.col == src.split("\n")[5].index("f)") + 1
    else:
        raise AssertionError("a variable format was accepted")


def test_times_and_dates_as_chrono_makes_them():
    ok = lambda v: Record("Ok", (v,))  # noqa: E731
    assert call("chrono_hms", 10, 10, 10, 10) == ok("10:10:10.000000010")
    assert call("chrono_hms", 24, 0, 0, 0) == Record("Err", ("illegal time value",))
    assert call("chrono_hms", 23, 59, 59, 1_500_000_000) == ok("23:59:60.500000000")
    assert call("chrono_time_parts", "23:59:60.500000000") == (23, 59, 59, 1_500_000_000)
    assert call("chrono_ymd", 2020, 2, 30) == Record("Err", ("Invalid date",))
    assert call("chrono_yo", 2020, 100) == ok("2020-04-09")
    assert call("chrono_iso_ywd", 2020, 4, 0) == ok("2020-01-20")
    assert call("chrono_date_parts", "2020-04-14") == (2020, 4, 14, 105, 16, 1, 2458954)
    assert call("chrono_from_julian", 2000000) == "0763-09-18"
    assert call("chrono_add_days", "0000-01-01", -1) == "-0001-12-31"
    assert call("chrono_ymd", 10000, 1, 1) == ok("+10000-01-01")
    assert call("chrono_shift", "1970-01-01", "00:00:00.000000000", 10_000_000) == \
        ("1970-04-26", "17:46:40.000000000")
    assert call("chrono_tz", "2020-04-14", "10:11:12.103104105", -1000) == \
        "2020-04-14T10:11:12.103104105-00:16:40"
    assert call("chrono_rfc2822", "2003-07-01T10:52:37+02:00") == \
        "Tue, 01 Jul 2003 10:52:37 +0200"


def test_formats_and_parses_as_chrono_does():
    err = lambda m: Record("Err", (m,))  # noqa: E731
    assert call("chrono_format_time", "10:11:12.103104105", "%H::%M::%S") == \
        Record("Ok", ("10::11::12",))
    assert call("chrono_format_date", "2020-04-14", "%incorrectformat") == \
        err("Error in format string '%incorrectformat'")
    assert call("chrono_format_time", "10:11:12.103104105", "%Y") == \
        err("Error in format string '%Y'")  # a time has no year
    assert call("chrono_format_date", "2020-04-14", "%a %b %e %j %U %W %G-W%V-%u") == \
        Record("Ok", ("Tue Apr 14 105 15 15 2020-W16-2",))
    assert call("chrono_parse_time", "10:10", "%T") == err(ch.TOO_SHORT)
    assert call("chrono_parse_time", "10:10:10.102030405", "%T.%f") == \
        Record("Ok", ("10:10:10.102030405",))
    assert call("chrono_parse_datetime", "2020/10/10T10:20:30", "%Y-%m-%dT%H:%M:%S") == \
        err(ch.INVALID)
    assert call("chrono_parse_date", "Wed 2020-04-14", "%a %F") == err(ch.IMPOSSIBLE)
    assert call("chrono_parse_date", "2020-04-14 x", "%F") == err(ch.TOO_LONG)
    assert call("chrono_parse_tz", "Wed Mar 05 07:45:30 MST 2025",
                "%a %b %d %H:%M:%S %Z %Y") == err(ch.NOT_ENOUGH)
    assert call("chrono_parse_rfc2822", "Tue, 1 Jul 2003 10:52:37 GMT") == \
        Record("Ok", ("2003-07-01T10:52:37+00:00",))
    assert call("chrono_parse_rfc3339", "2020-10-10T10:20:30.5-03:00") == \
        Record("Ok", ("2020-10-10T10:20:30.500-03:00",))


def test_format_items_are_chrono_s():
    assert ch.items("%T") == ch.items("%H:%M:%S")
    assert [i.kind for i in ch.items("%i%-T%.2%")] == ["error"] * 4
    assert ch.items("%-d")[0].pad == "" and ch.items("%_m")[0].pad == " "


def test_exit_may_end_the_input_without_its_terminator():
    assert len(parse_commands("start;\ncommit;\nexit")) == 2
