"""The command language (ddlog/syntax/commands.py) and constant values (ddlog/values/literals.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlog.syntax import ast
from ddlog.types import RelationInfo
from ddlog.syntax.commands import (Clear, Commit, DeleteKey, Dump, Echo, Exit, Modify, Rollback,
                                   Start, StatementSplitter, Update, parse_commands,
                                   parse_statement)
from ddlog.errors import DDlogError, ParseError, Span
from ddlog.values.literals import mutated, row_of, value_of
from ddlog.syntax.parser import parse_expr
from ddlog.syntax.scanner import Located
from ddlog.types import (BIGINT, BOOL, DOUBLE, FLOAT, STRING, TCtor, TGroup, TInt, TMap, TOption,
                         TSet, TStruct, TTuple, TVec)
from ddlog.values import Record


def S(l1, c1, l2, c2, file="<input>"):
    return Span(file, l1, c1, l2, c2)


def one(text: str):
    (c,) = parse_commands(text)
    return c


def perr(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_commands(text)
    return info.value


def values(update: Update) -> list:
    return [a.value for a in update.atom.args]


# ---------------------------------------------------------------------------------------------
# Every command


def test_simple_commands():
    assert one("start;") == Start(S(1, 1, 1, 7))
    assert one("commit;") == Commit(False, S(1, 1, 1, 8))
    assert one("commit dump_changes;") == Commit(True, S(1, 1, 1, 21))
    assert one("rollback;") == Rollback(S(1, 1, 1, 10))
    assert one("clear Edge;") == Clear("Edge", S(1, 1, 1, 12))
    assert one("dump;") == Dump(None, S(1, 1, 1, 6))
    assert one("dump Path;") == Dump("Path", S(1, 1, 1, 11))
    assert one("exit;") == Exit(S(1, 1, 1, 6))
    assert one("  start  ;") == Start(S(1, 3, 1, 11))


def test_echo_takes_raw_text():
    assert one("echo hello world;") == Echo("hello world", S(1, 1, 1, 18))
    assert one('echo "quoted", # not a comment;').text == '"quoted", # not a comment'
    assert one("echo;").text == ""
    # as DDlog: the white space after `echo` is skipped, the rest is printed as written
    assert one("echo\n  two lines\n;").text == "two lines\n"
    assert one("echo Printing Path  ;").text == "Printing Path  "
    assert one("echo a;").span == S(1, 1, 1, 8)


def test_insert_delete_positional():
    u = one('insert Edge(1, "a"),')
    assert (u.kind, u.terminator, u.atom.relation, u.atom.names) == ("insert", ",", "Edge", None)
    assert values(u) == [1, "a"]
    assert u.span == S(1, 1, 1, 21)
    assert u.atom.span == S(1, 8, 1, 20)
    assert u.atom.args[1].span == S(1, 16, 1, 19)
    u = one("delete Edge(1, 2);")
    assert (u.kind, u.terminator) == ("delete", ";")
    assert one("insert Unit();").atom.args == []


def test_insert_delete_named():
    u = one('delete P(.x = 1, .y = "a");')
    assert (u.kind, u.atom.names, values(u), u.terminator) == ("delete", ["x", "y"], [1, "a"], ";")
    assert perr('insert P(.x = 1, .x = 2);').message == "field 'x' given twice"


def test_record_values():
    u = one('insert R(-1, 0x10, 8\'hff, 2.5, -1e3, true, false, "s;,#", (1, "a"), [1, 2], [], '
            'Some{5}, None, P{.x = 1, .y = Some{-2}}, Circle{1.5}, Red, ());')
    a = u.atom.args
    assert [x.value for x in a[:8]] == [-1, 16, 255, 2.5, -1000.0, True, False, "s;,#"]
    assert a[2].width == 8
    assert isinstance(a[8], ast.TupleLit) and isinstance(a[9], ast.VecLit)
    assert isinstance(a[10], ast.VecLit) and a[10].items == []
    assert (a[11].ctor, a[12].ctor, a[12].fields) == ("Some", "None", [])
    assert [n for n, _ in a[13].fields] == ["x", "y"]
    assert a[13].fields[1][1].fields[0][1].value == -2
    assert (a[14].ctor, a[15].ctor) == ("Circle", "Red")
    assert isinstance(a[16], ast.TupleLit)


def test_a_transaction_and_comments():
    text = """# a data file
start;
insert Edge(1, 2),   # first edge
insert Edge(2, 3),
insert Edge(
    3,   # multi-line, with a comment
    4);
delete Edge(1, 2);
commit dump_changes;
"""
    cs = parse_commands(text, file="edges.dat")
    assert [type(c).__name__ for c in cs] == ["Start", "Update", "Update", "Update", "Update",
                                              "Commit"]
    assert [c.terminator for c in cs[1:5]] == [",", ",", ";", ";"]
    assert values(cs[3]) == [3, 4]
    assert cs[3].span == Span("edges.dat", 5, 1, 7, 8)
    assert cs[3].atom.args[1].span == Span("edges.dat", 7, 5, 7, 6)
    assert cs[5].dump_changes


def test_several_statements_per_line():
    cs = parse_commands("start; insert R(1); commit; dump R; exit;")
    assert [type(c).__name__ for c in cs] == ["Start", "Update", "Commit", "Dump", "Exit"]
    assert cs[3].span == S(1, 29, 1, 36)


def test_empty_and_comment_only():
    assert parse_commands("") == []
    assert parse_commands("  \n# just a comment") == []
    assert parse_commands("# c1\n\n# c2\n") == []


# ---------------------------------------------------------------------------------------------
# Errors


def test_errors():
    ex = perr("start;\ntimestamp;")
    assert ex.message.startswith("unexpected 'timestamp', expected one of: 'clear', 'commit'")
    assert (ex.span.line, ex.span.col) == (2, 1)
    ex = perr("start;\ninsert R(1, 2)")
    assert ex.message == "unexpected end of input, expected one of: ',', ';'"
    assert (ex.span.line, ex.span.col) == (2, 15)
    ex = perr("insert R(1 2);")
    assert ex.message == "unexpected '2', expected one of: ')', ',', '?', operator"
    assert (ex.span.line, ex.span.col) == (1, 12)
    ex = perr('start;\n  insert R("abc);\n')
    assert (ex.message, ex.span.line, ex.span.col) == ("unterminated string literal", 2, 12)
    ex = perr("commit\ndump;")
    assert ex.message == "unexpected 'dump', expected one of: ';', 'dump_changes'"
    assert (ex.span.line, ex.span.col) == (2, 1)
    ex = perr("insert r(1);")
    assert ex.message.startswith("unexpected 'r', expected one of: identifier")
    ex = perr("start,")
    assert ex.message == "unexpected ',', expected one of: ';'"
    ex = perr("echo no end")
    assert ex.message == "unexpected end of input, expected one of: ';'"
    ex = perr("clear;")
    assert ex.message == "unexpected ';', expected one of: identifier"


def test_error_message_shows_the_line():
    ex = perr("start;\ninsert R(1, ]);\n")
    text = ex.format()
    assert text.startswith("<input>:2:13: error: unexpected ']'")
    assert text.splitlines()[1:] == ["  insert R(1, ]);", "              ^"]


# ---------------------------------------------------------------------------------------------
# The splitter


def test_splitter_returns_statements_as_their_terminators_arrive():
    s = StatementSplitter("<stdin>")
    assert s.feed("sta") == [] and s.pending
    assert s.feed("rt;\ninsert R(1") == [Start(S(1, 1, 1, 7, "<stdin>"))]
    assert s.pending
    (u,) = s.feed(", 2),")
    assert values(u) == [1, 2] and u.terminator == "," and u.span == S(2, 1, 2, 16, "<stdin>")
    assert not s.pending
    assert s.feed("  # a comment; with a terminator, in it") == [] and s.pending
    assert s.feed("\n") == [] and not s.pending
    assert s.feed("commit;") == [Commit(False, S(3, 1, 3, 8, "<stdin>"))]
    s.finish()


def test_splitter_ignores_terminators_in_strings_brackets_and_comments():
    s = StatementSplitter()
    assert s.feed('insert R("a;b,c", (1, 2), [3, 4], P{.x = 5}, "${"}"}")') == []
    (u,) = s.feed(";")
    assert u.atom.args[0].value == "a;b,c" and len(u.atom.args) == 5
    assert s.feed("insert R(1, # no ; here\n 2);")[0].atom.args[1].value == 2


def test_splitter_char_by_char_equals_parse_commands():
    text = ('start;\ninsert R(1, "x;y"),  # c\ninsert R(.a = -2, .b = "z"); echo hi there;\n'
            'delete R(3, "${u}");\ncommit dump_changes; dump; exit;\n')
    s = StatementSplitter("<input>")
    got = []
    for ch in text:
        got += s.feed(ch)
    s.finish()
    assert got == parse_commands(text)


def test_splitter_continues_after_a_bad_statement():
    s = StatementSplitter()
    s.push("start; insert R(1 2); commit;")
    it = iter(s)
    assert isinstance(next(it), Start)
    with pytest.raises(ParseError):
        next(it)
    assert s.feed("") == [Commit(False, S(1, 23, 1, 30, "<stdin>"))]


def test_splitter_push_while_iterating():
    s = StatementSplitter()
    s.push("start; comm")
    got = []
    for c in s:
        got.append(c)
        if len(got) == 1:
            s.push("it;")
    assert [type(c).__name__ for c in got] == ["Start", "Commit"]


def test_splitter_finish():
    s = StatementSplitter()
    s.feed("start;\ninsert R(")
    with pytest.raises(ParseError) as info:
        s.finish()
    assert (info.value.span.line, info.value.span.col) == (2, 10)
    assert "unexpected end of input" in info.value.message
    s = StatementSplitter()
    s.feed('insert R("abc')
    with pytest.raises(ParseError, match="unterminated string literal"):
        s.finish()
    s = StatementSplitter()
    s.feed("start;  # trailing comment without newline")
    s.finish()


def test_splitter_errors_show_the_statement_line():
    s = StatementSplitter("<stdin>")
    s.feed("start;\n")
    with pytest.raises(ParseError) as info:
        s.feed("  insert R(1, ]);\n")
    assert info.value.format().splitlines() == [
        "<stdin>:2:15: error: unexpected ']', expected one of: identifier, literal, '&', '(', "
        "')', '-', '[', '_', 'function', 'if', 'match', 'not', 'return', '{', '|', '~'",
        "    insert R(1, ]);", "                ^"]


# ---------------------------------------------------------------------------------------------
# The regex reader of plain updates builds the same AST as the grammar

_lit = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda s: "inf" not in s),
    st.sampled_from(["true", "false", "0", "-0", "007", "1e5", "2.5E-3", "-3.0"]),
    st.text(st.characters(blacklist_characters='"\\$', blacklist_categories=("Cs",)),
            max_size=8).map(lambda s: f'"{s}"'),
)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["insert", "delete"]), rel=st.sampled_from(["R", "Edge_2"]),
       args=st.lists(_lit, max_size=4), named=st.booleans(), term=st.sampled_from([",", ";"]),
       sp=st.sampled_from(["", " ", "  ", "\n"]))
def test_fast_updates_equal_grammar(kind, rel, args, named, term, sp):
    items = [f".c{i}{sp}={sp}{a}" if named else a for i, a in enumerate(args)]
    text = f"{kind} {rel}({sp}{(','+sp).join(items)}{sp}){sp}{term}"
    loc = Located("<input>", text, 3, 5)
    fast = parse_statement(text, loc)
    slow = parse_statement(text, loc, fast=False)
    assert fast == slow


def test_fast_path_is_used_for_plain_updates():
    from ddlog.syntax.commands import _fast_update
    loc = Located("<input>", "", 0, 0)
    assert _fast_update('insert R(1, "a", -2.5, true),', loc) is not None
    assert _fast_update('insert R(.a = 1, .b = "x");', loc) is not None
    assert _fast_update("insert R(Some{1});", loc) is None
    assert _fast_update('insert R("${x}");', loc) is None


def test_a_data_files_plain_updates_never_reach_the_grammar(monkeypatch):
    # What keeps a large data file quick to read: each plain update is read by the regex
    # reader, not by the grammar's parser (a property, not a timing: the unit tests time
    # nothing). Only the statements it does not know (start, commit) go to the grammar.
    import ddlog.syntax.commands as commands
    parsed = []
    real = commands.parse_text

    def counting(text, *args, **kwargs):
        parsed.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(commands, "parse_text", counting)
    text = "start;\n" + "".join(f'insert E({i}, {i + 1}, "n{i}"),\n' for i in range(5000))
    text += "commit;\n"
    cs = parse_commands(text)
    assert len(cs) == 5002
    assert [t.strip() for t in parsed] == ["start;", "commit;"]


# ---------------------------------------------------------------------------------------------
# Constant values


def val(text: str, ty):
    return value_of(parse_expr(text), ty, "<input>", text)


def verr(text: str, ty) -> DDlogError:
    with pytest.raises(DDlogError) as info:
        val(text, ty)
    return info.value


POINT = TStruct("P", (TCtor("P", (("x", BIGINT), ("y", STRING))),))
SHAPE = TStruct("Shape", (TCtor("Circle", (("r", DOUBLE),)), TCtor("Square", (("s", DOUBLE),)),
                          TCtor("Empty", ())))


@pytest.mark.parametrize("text, ty, value", [
    ("true", BOOL, True), ("false", BOOL, False),
    ('"a"', STRING, "a"), ('"a\\nb"', STRING, "a\nb"),
    ("5", BIGINT, 5), ("-5", BIGINT, -5), ("0x10", BIGINT, 16),
    ("9223372036854775807", BIGINT, 2**63 - 1), ("-9223372036854775808", BIGINT, -2**63),
    ("255", TInt(False, 8), 255), ("0", TInt(False, 8), 0), ("8'hff", TInt(False, 8), 255),
    ("-128", TInt(True, 8), -128), ("127", TInt(True, 8), 127), ("8'sd-3", TInt(True, 8), -3),
    ("18446744073709551615", TInt(False, 64), 2**64 - 1),
    ("1.5", DOUBLE, 1.5), ("3", DOUBLE, 3.0), ("-2", DOUBLE, -2.0), ("1e300", DOUBLE, 1e300),
    ("0.1", FLOAT, 0.10000000149011612),
    ('(1, "a")', TTuple((BIGINT, STRING)), (1, "a")), ("()", TTuple(()), ()),
    ("[3, 1, 3]", TVec(BIGINT), (3, 1, 3)), ("[]", TVec(BIGINT), ()),
    ("[3, 1, 3]", TSet(BIGINT), (1, 3)), ('["b", "a"]', TSet(STRING), ("a", "b")),
    ("Some{5}", TOption(BIGINT), 5), ("Some{.x = 5}", TOption(BIGINT), 5),
    ("None", TOption(BIGINT), None), ("None{}", TOption(BIGINT), None),
    ("ddlog_std::None{}", TOption(BIGINT), None),
    ("ddlog_std::Some{.x = 5}", TOption(BIGINT), 5),
    ("[Some{1}, None]", TVec(TOption(BIGINT)), (1, None)),
    ('P{1, "a"}', POINT, Record("P", (1, "a"))),
    ('P{.y = "a", .x = 1}', POINT, Record("P", (1, "a"))),
    ("Circle{2}", SHAPE, Record("Circle", (2.0,))), ("Empty", SHAPE, Record("Empty", ())),
    ("Square{.s = 1.5}", SHAPE, Record("Square", (1.5,))),
    ('[P{2, "b"}, P{1, "z"}]', TSet(POINT), (Record("P", (1, "z")), Record("P", (2, "b")))),
])
def test_value_of(text, ty, value):
    got = val(text, ty)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text, ty, message", [
    ('"a"', BIGINT, 'expected bigint, found string "a"'),
    ("1", STRING, "expected string, found integer 1"),
    ("1.5", BIGINT, "expected bigint, found float 1.5"),
    ("true", BIGINT, "expected bigint, found bool true"),
    ("1", BOOL, "expected bool, found integer 1"),
    ("256", TInt(False, 8), "256 is out of range for bit<8> (0 to 255)"),
    ("-1", TInt(False, 8), "-1 is out of range for bit<8> (0 to 255)"),
    ("128", TInt(True, 8), "128 is out of range for signed<8> (-128 to 127)"),
    ("9223372036854775808", BIGINT,
     "9223372036854775808 is out of range for bigint (-9223372036854775808 to "
     "9223372036854775807)"),
    ("8'hff", TInt(False, 16), "expected bit<16>, found bit<8> literal 8'hff"),
    ("8'hff", BIGINT, "expected bigint, found bit<8> literal 8'hff"),
    ("8'd1", DOUBLE, "expected double, found bit<8> literal 8'd1"),
    ("1e39", FLOAT, "1e39 is out of range for float"),
    ("(1, 2)", TTuple((BIGINT,)), "expected (bigint), found a tuple of 2 element(s)"),
    ('(1, 2)', TTuple((BIGINT, STRING)), "expected string, found integer 2"),
    ("[1]", TTuple((BIGINT,)), "expected (bigint), found vector [1]"),
    ("(1)", TVec(BIGINT), "expected Vec<bigint>, found integer 1"),
    ('[1, "a"]', TSet(BIGINT), 'expected bigint, found string "a"'),
    ("5", TOption(BIGINT), "expected Option<bigint>, found integer 5"),
    ("Some{1, 2}", TOption(BIGINT), "expected Option<bigint>: write Some{v} or None"),
    ("P{1}", POINT, "constructor P has 2 field(s), found 1"),
    ("P{.x = 1}", POINT, "missing field(s) of P: y"),
    ('P{.x = 1, .z = 2, .y = ""}', POINT, "constructor P has no field 'z'"),
    ("Q{1}", POINT, "expected P, found constructor Q (the constructors of P are P)"),
    ("Circle{true}", SHAPE, "expected double, found bool true"),
    ("x", BIGINT, "expected bigint, found variable x"),
    ("_", BIGINT, "expected bigint, found '_'"),
    ("1 + 2", BIGINT, "expected bigint, found expression 1 + 2"),
    ('"${x}"', STRING, 'expected string, found interpolated string "${x}"'),
    ("1", TGroup(BIGINT, BIGINT), "values of type Group<bigint, bigint> cannot be written as "
                                  "constants"),
])
def test_value_of_errors(text, ty, message):
    ex = verr(text, ty)
    assert ex.message == message
    assert ex.span is not None and ex.span.line == 1


def test_value_error_location_and_format():
    (u,) = parse_commands('insert R(1,\n  "a");', file="d.dat")
    with pytest.raises(DDlogError) as info:
        value_of(u.atom.args[1], BIGINT, "d.dat", 'insert R(1,\n  "a");')
    assert str(info.value).splitlines() == [
        'd.dat:2:3: error: expected bigint, found string "a"', '    "a");', '    ^^^']


def test_value_of_without_source_still_describes_the_value():
    ex = None
    try:
        value_of(parse_expr('"a"'), BIGINT)
    except DDlogError as e:
        ex = e
    assert ex.message == 'expected bigint, found string "a"'


def test_value_of_accepts_an_unfolded_negation():
    neg = ast.UnOp("-", ast.Lit(3, "int", S(1, 2, 1, 3)), S(1, 1, 1, 3))
    assert value_of(neg, BIGINT) == -3


REL = RelationInfo("R", "input", (("a", BIGINT), ("b", STRING), ("c", TOption(BOOL))),
                   S(1, 1, 1, 1))


def test_row_of():
    row = lambda t: row_of(parse_commands(t)[0].atom, REL, "<input>", t)  # noqa: E731
    assert row('insert R(1, "x", Some{true});') == (1, "x", True)
    assert row('insert R(.c = None, .a = 2, .b = "y");') == (2, "y", None)
    with pytest.raises(DDlogError, match=r"relation R has 3 column\(s\), found 2 value\(s\)"):
        row('insert R(1, "x");')
    with pytest.raises(DDlogError, match="missing column\\(s\\) of R: c"):
        row('insert R(.a = 1, .b = "x");')
    with pytest.raises(DDlogError, match="relation R has no column 'd'"):
        row('insert R(.a = 1, .b = "x", .c = None, .d = 1);')
    with pytest.raises(DDlogError, match="expected a record of R, found Q"):
        row('insert Q(1, "x", None);')
    with pytest.raises(DDlogError, match='expected bigint, found string "1"'):
        row('insert R("1", "x", None);')


# ---------------------------------------------------------------------------------------------
# Primary keys: modify, delete_key, insert_or_update, @json values


def test_keyed_commands_parse():
    cmds = parse_commands('modify R 1 <- R{.b = "x"};\ndelete_key R (1, "a");\n'
                          'insert_or_update R(1, "y");\n')
    assert isinstance(cmds[0], Modify) and cmds[0].relation == "R"
    assert cmds[0].key == ast.Lit(1, "int", cmds[0].key.span)
    assert isinstance(cmds[1], DeleteKey) and isinstance(cmds[1].key, ast.TupleLit)
    assert isinstance(cmds[2], Update) and cmds[2].kind == "insert_or_update"


NESTED = TMap(BIGINT, TMap(STRING, STRING))
ITEM = TStruct("N", (TCtor("N", (("key", BIGINT), ("m", NESTED))),))


def _modify(old, text: str):
    cmd = parse_commands(f"modify N 1 <- {text};")[0]
    return mutated(old, cmd.value, ITEM, "<input>", f"modify N 1 <- {text};")


def test_modify_changes_what_it_gives():
    # DDlog's mutator: fields given change, a Map's keys given change (recursively),
    # `(k, ())` removes k, a new key takes the value, anything else is replaced
    old = Record("N", (1, ((1, (("1", "a"), ("2", "b"))), (2, (("3", "c"),)))))
    new = _modify(old, 'N{1, [(0, [("0", "0")]), (1, [("1", "b"), ("2", ()), ("30", "30")])]}')
    assert new == Record("N", (1, ((0, (("0", "0"),)), (1, (("1", "b"), ("30", "30"))),
                                   (2, (("3", "c"),)))))
    assert _modify(old, "N{.key = 5}") == Record("N", (5, old.values[1]))
    json = _modify(old, 'N{.m = [(1, @json"{\\"x\\": \\"y\\"}"), (2, ())]}')
    assert json == Record("N", (1, ((1, (("x", "y"),)),)))


def test_modify_toggles_the_elements_of_a_set_it_gives():
    # DDlog's mutator of a set: each element given goes if there, comes if not
    ty = TStruct("S", (TCtor("S", (("key", BIGINT), ("s", TSet(BIGINT)))),))
    cmd = parse_commands("modify S 1 <- S{.s = [3, 1, 7, 7]};")[0]
    old = Record("S", (1, (1, 2, 3, 4)))
    assert mutated(old, cmd.value, ty) == Record("S", (1, (2, 4, 7)))


@pytest.mark.parametrize("text,message", [
    ('N{.m = [(1, @json"{\\"x\\": 1}")]}', 'expected string, found the JSON value 1'),
    ('N{.m = [(1, @json"{x")]}', "this @json value is not JSON"),
    ("N{.nope = 1}", "constructor N has no field 'nope'"),
    ("N{1}", "constructor N has 2 field(s), found 1"),
    ('N{.m = [1]}', "expected an entry (key, value) of Map<bigint, Map<string, string>>"),
])
def test_modify_errors(text, message):
    with pytest.raises(DDlogError) as info:
        _modify(Record("N", (1, ())), text)
    assert message in info.value.message


@pytest.mark.parametrize("text,ty,value", [
    ('@json"[1, 2]"', TVec(BIGINT), (1, 2)),
    ('@json"{\\"2\\": \\"b\\", \\"1\\": \\"a\\"}"', TMap(BIGINT, STRING), ((1, "a"), (2, "b"))),
    ('@json"[[2, \\"b\\"], [1, \\"a\\"]]"', TMap(BIGINT, STRING), ((1, "a"), (2, "b"))),
    ('@json"null"', TOption(BIGINT), None),
    ('@json"{\\"key\\": 3, \\"m\\": {}}"', ITEM, Record("N", (3, ()))),
])
def test_json_values(text, ty, value):
    cmd = parse_commands(f"insert R({text});")[0]
    assert value_of(cmd.atom.args[0], ty) == value
