"""`ddlog shell` and the error paths of every state command, driven as subprocesses.

Most of these never start Spark: a command that fails on bad input fails before the engine is
needed, and the test checks the message (with the line and column of the command), the exit
status and that the state directory did not change. Two tests run the engine: the fixture that
builds a state with `ddlog run`, and one shell session that checks DDlog's output format.
"""
from __future__ import annotations

import fcntl
import os
import pty
import shutil
import subprocess

import pytest

from tests.e2e.cli_support import PROGRAMS, DDlogCLI, manifest_epoch, state_snapshot

REACH = PROGRAMS / "reach.dl"


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> DDlogCLI:
    return DDlogCLI(tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="module")
def reach_state(cli, tmp_path_factory):
    """A state of reach.dl at epoch 1, its inputs read from programs/reach.dat."""
    state = tmp_path_factory.mktemp("reach") / "state"
    r = cli("run", REACH, "--state", state, "--input", PROGRAMS / "reach.dat")
    assert r.code == 0, r
    # Reach = {1, 2, 3, 4, 9}; Node \ Reach = {5, 6, 7}
    assert "epoch 1 committed" in r.out and "Reach: 5 rows" in r.out \
        and "Unreachable: 3 rows" in r.out, r
    return state


@pytest.fixture
def state(reach_state, tmp_path):
    """A private copy of the reach state (a failed command must leave it as it was)."""
    copy = tmp_path / "state"
    shutil.copytree(reach_state, copy)
    return copy


# ---------------------------------------------------------------------------------------------
# The shell rejects bad transactions


SHELL_ERRORS = [
    ("insert Edge(1, 2);\n", "1:1", "insert outside a transaction"),
    ("start;\ninsert Edge(1, 2),\ninsert Nope(1);\ncommit;\n", "3:8", "unknown relation 'Nope'"),
    ("start;\ninsert Reach(1);\ncommit;\n", "2:8",
     "cannot insert relation 'Reach': it is an output relation"),
    ("start;\n  delete Edge(1);\n", "2:10", "relation Edge has 2 column(s), found 1 value(s)"),
    ('start;\ninsert Edge(1, "x");\n', "2:16", 'expected bigint, found string "x"'),
    ("start;\ninsert Edge(.src = 1, .dest = 2);\n", "2:31", "relation Edge has no column 'dest'"),
    ("start;\nclear Reach;\n", "2:1", "cannot clear relation 'Reach'"),
    ("commit;\n", "1:1", "commit: no transaction in progress"),
    ("rollback;\n", "1:1", "rollback: no transaction in progress"),
    ("start;\nstart;\n", "2:1", "start: a transaction is already in progress"),
    ("start;\ninsert Edge(1, 2)\ncommit;\n", "3:1", "error"),
    ("dump Nope;\n", "1:1", "unknown relation 'Nope'"),
]


@pytest.mark.parametrize("script,where,message", SHELL_ERRORS,
                         ids=[m[:30] for _, _, m in SHELL_ERRORS])
def test_shell_error_rejects_transaction(cli, state, script, where, message):
    before = state_snapshot(state)
    r = cli("shell", REACH, "--state", state, input=script + "echo not reached;\n")
    assert r.code == 1, r
    assert f"<stdin>:{where}: error:" in r.err and message in r.err, r
    assert "not reached" not in r.out
    assert state_snapshot(state) == before


def test_shell_error_in_commands_file(cli, state, tmp_path):
    f = tmp_path / "bad.dat"
    f.write_text("# a comment\nstart;\ninsert Edge(1, 2), insert Edge(true, 3);\ncommit;\n")
    before = state_snapshot(state)
    r = cli("shell", REACH, "--state", state, "--commands", f)
    assert r.code == 1, r
    assert f"{f}:3:32: error: expected bigint, found bool true" in r.err, r
    assert "insert Edge(1, 2), insert Edge(true, 3);" in r.err  # the line, with a caret
    assert state_snapshot(state) == before


def test_shell_refuses_another_program(cli, state):
    before = state_snapshot(state)
    r = cli("shell", PROGRAMS / "tc.dl", "--state", state, input="dump;\n")
    assert r.code == 1, r
    assert "belongs to a different program" in r.err and "reach.dl" in r.err, r
    assert state_snapshot(state) == before


def test_state_in_use_by_another_process(cli, state):
    fd = os.open(state / ".writer.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = state_snapshot(state)
        r = cli("feed", "--state", state, "--insert", "Edge(1, 9)")
        assert r.code == 1 and "in use by another ddlog process" in r.err, r
        assert state_snapshot(state) == before
    finally:
        os.close(fd)


def test_interactive_session_goes_on_after_errors(cli, tmp_path):
    """On a terminal an error rejects the transaction but the session continues (exit 0)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cli.command(("shell", REACH)), stdin=slave, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd=cli.cwd, env=cli.env(),
                         start_new_session=True)
    os.close(slave)
    os.write(master, b"insert Edge(1, 2);\nstart;\ninsert Nope(3),\n"
                     b"echo still here;\nrollback;\nexit;\n")
    out, err = p.communicate(timeout=120)
    os.close(master)
    assert p.returncode == 0, (out, err)
    assert "<stdin>:1:1: error: insert outside a transaction" in err
    assert "<stdin>:3:8: error: unknown relation 'Nope'" in err
    assert "the transaction was rolled back" in err
    # the rollback found no transaction: the error rejected it
    assert "<stdin>:5:1: error: rollback: no transaction in progress" in err
    assert "still here" in out and ">> " in out


# ---------------------------------------------------------------------------------------------
# Errors of the one-shot commands


def test_feed_errors_leave_the_state_alone(cli, state, tmp_path):
    before = state_snapshot(state)
    r = cli("feed", "--state", state, "--insert", "Edge(1, 2)", "--insert", 'Edge(1, "a")')
    assert r.code == 1 and "--insert:1:16: error: expected bigint" in r.err, r
    r = cli("feed", "--state", state, "--delete", "Unreachable(5)")
    assert r.code == 1 and "cannot delete relation 'Unreachable'" in r.err, r
    bad = tmp_path / "bad.dat"
    bad.write_text("start;\ninsert Edge(1, 2),\ninsert Root(1, 2);\ncommit;\n")
    r = cli("feed", "--state", state, bad)
    assert r.code == 1 and f"{bad}:3:8: error: relation Root has 1 column(s)" in r.err, r
    bad.write_text("start;\ninsert Edge(1, 2);\nrollback;\n")
    r = cli("feed", "--state", state, bad)
    assert r.code == 1 and f"{bad}:3:1: error: rollback" in r.err, r
    r = cli("feed", "--state", state, input="")
    assert r.code == 1 and "nothing to feed" in r.err, r
    assert state_snapshot(state) == before


def test_feed_epoch_makes_replays_idempotent(cli, state):
    before = state_snapshot(state)
    r = cli("feed", "--state", state, "--epoch", "1", "--insert", "Edge(1, 9)")
    assert r.code == 0 and "epoch 1 is already committed" in r.err and r.out == "", r
    r = cli("feed", "--state", state, "--epoch", "3", "--insert", "Edge(1, 9)")
    assert r.code == 1 and "would skip epochs" in r.err, r
    assert state_snapshot(state) == before and manifest_epoch(state) == 1


def test_commands_on_a_missing_state(cli, tmp_path):
    missing = tmp_path / "nothing"
    for args in (("feed", "--state", missing, "--insert", "Edge(1, 2)"),
                 ("refresh", "--state", missing), ("query", "--state", missing, "Reach"),
                 ("sql", "--state", missing, "SELECT 1")):
        r = cli(*args)
        assert r.code == 1 and "no state in" in r.err, (args, r)
    assert not (missing / "manifest.json").exists()


def test_query_errors(cli, state):
    r = cli("query", "--state", state, "Nope")
    assert r.code == 1 and "unknown relation 'Nope'" in r.err, r
    r = cli("query", "--state", state, "Reach", "--format", "xml")
    assert r.code == 2 and "invalid choice: 'xml'" in r.err, r


def test_run_errors(cli, state, tmp_path):
    before = state_snapshot(state)
    r = cli("run", REACH, "--state", state)
    assert r.code == 1 and "already holds a state (epoch 1)" in r.err, r
    assert state_snapshot(state) == before
    fresh = tmp_path / "fresh"
    for args, message in [
            (("--input", "Edge=foo:bar"), "bad SOURCE 'foo:bar'"),
            (("--input", "Reach=csv:x.csv"), "cannot bind relation 'Reach'"),
            (("--input", "Edge=csv:a.csv", "--input", "Edge=csv:b.csv"), "bound twice"),
            (("--output", "Node=parquet:out"), "Node is an internal relation"),
            (("--output", "Reach"), "expected RELATION=SINK"),
            (("--input", "Edge=csv:" + str(tmp_path / "missing.csv")), "cannot read csv:")]:
        r = cli("run", REACH, "--state", fresh, *args)
        assert r.code == 1 and message in r.err, (args, r)
        assert not (fresh / "manifest.json").exists()


# ---------------------------------------------------------------------------------------------
# DDlog's output format


FORMAT_PROGRAM = """
input relation T(s: string, b: bool, v: Vec<bigint>, t: (bigint, string), o: Option<bigint>)
output relation O(s: string, b: bool, v: Vec<bigint>, t: (bigint, string), o: Option<bigint>)
output relation Count(b: bool, n: usize)
O(s, b, v, t, o) :- T(s, b, v, t, o).
Count(b, n) :- T(s, b, _, _, _), var n = s.group_by(b).count_distinct().
"""

FORMAT_SCRIPT = r"""
echo one;
start;
insert T("a\"b\\c\nd\te", true, [2, 1], (1, "x"), Some{5}),
insert T(.s = "b", .b = false, .v = [], .t = (2, "y"), .o = None);
commit dump_changes;
dump;
start;
delete T("b", false, [], (2, "y"), None);
commit dump_changes;
dump O;
start; insert T("c", true, [], (3, "z"), None); rollback;
dump Count;
"""

FORMAT_OUTPUT = r"""one
Count:
Count{.b = false, .n = 1}: +1
Count{.b = true, .n = 1}: +1
O:
O{.s = "a\"b\\c\nd\te", .b = true, .v = [2, 1], .t = (1, "x"), .o = ddlog_std::Some{.x = 5}}: +1
O{.s = "b", .b = false, .v = [], .t = (2, "y"), .o = ddlog_std::None{}}: +1
Count:
Count{.b = false, .n = 1}
Count{.b = true, .n = 1}

O:
O{.s = "a\"b\\c\nd\te", .b = true, .v = [2, 1], .t = (1, "x"), .o = ddlog_std::Some{.x = 5}}
O{.s = "b", .b = false, .v = [], .t = (2, "y"), .o = ddlog_std::None{}}

Count:
Count{.b = false, .n = 1}: -1
O:
O{.s = "b", .b = false, .v = [], .t = (2, "y"), .o = ddlog_std::None{}}: -1
O{.s = "a\"b\\c\nd\te", .b = true, .v = [2, 1], .t = (1, "x"), .o = ddlog_std::Some{.x = 5}}
Count{.b = true, .n = 1}
"""


def shell_prints(cli, tmp_path, text: str, script: str, *flags: str) -> str:
    """What `ddlog shell PROGRAM [flags] < script` prints, PROGRAM holding `text`; the command
    must succeed."""
    program = tmp_path / "shell.dl"
    program.write_text(text)
    r = cli("shell", program, *flags, input=script)
    assert r.code == 0, r
    return r.out


def test_shell_output_format(cli, tmp_path):
    """One SparkSession for the whole stream, no state directory: DDlog's text format."""
    assert shell_prints(cli, tmp_path, FORMAT_PROGRAM, FORMAT_SCRIPT) == FORMAT_OUTPUT


KEYS_PROGRAM = """
typedef Item = Item{id: u32, name: string, tags: Map<string, Map<string, bigint>>}
input relation Items[Item]
primary key (x) x.id
output relation Named(id: u32, name: string, tags: usize)
Named(i.id, i.name, i.tags.size()) :- Items[i].
output relation Copy[Item]
Copy[i] :- Items[i], i.id > 1.
"""

KEYS_SCRIPT = """\
start;
insert Items(1, "a", [("x", [("p", 1)])]);
insert Items(2, "b", []);
modify Items 2 <- Item{.name = "bb", .tags = [("y", [("q", 2)])]};
commit dump_changes;
start;
delete_key Items 1;
insert_or_update Items(2, "b3", [("y", [("q", 3), ("r", 4)]), ("z", [])]);
modify Items 2 <- Item{2, "b4",
                      [("z", ()), ("y", [("q", ()), ("s", 5)]), ("w", @json"{\\"t\\": 6}")]};
commit dump_changes;
dump Copy;
"""

# modify changes the fields it gives, a Map's entries by key (`(k, ())` removes k), within
# the transaction's updates so far; `relation R[T]` prints its records as T's
KEYS_OUTPUT = """\
Copy:
Item{.id = 2, .name = "bb", .tags = [("y", [("q", 2)])]}: +1
Named:
Named{.id = 1, .name = "a", .tags = 1}: +1
Named{.id = 2, .name = "bb", .tags = 1}: +1
Copy:
Item{.id = 2, .name = "b4", .tags = [("w", [("t", 6)]), ("y", [("r", 4), ("s", 5)])]}: +1
Item{.id = 2, .name = "bb", .tags = [("y", [("q", 2)])]}: -1
Named:
Named{.id = 1, .name = "a", .tags = 1}: -1
Named{.id = 2, .name = "b4", .tags = 2}: +1
Named{.id = 2, .name = "bb", .tags = 1}: -1
Item{.id = 2, .name = "b4", .tags = [("w", [("t", 6)]), ("y", [("r", 4), ("s", 5)])]}
"""


def test_primary_keys_modify_and_delete_key(cli, tmp_path):
    program = tmp_path / "keys.dl"
    program.write_text(KEYS_PROGRAM)
    r = cli("shell", program, "--no-init-snapshot", input=KEYS_SCRIPT)
    assert r.code == 0, r
    assert r.out == KEYS_OUTPUT, r
    # a second record with a key is refused (DDlog's rule), as is a modify of no record
    r = cli("shell", program, input="start;\ninsert Items(1, \"a\", []);\n"
            "insert Items(1, \"b\", []);\ncommit;\n")
    assert r.code == 1 and "<stdin>:3:1: error: insert: relation 'Items' already has a " \
        "record with key 1: Item{.id = 1, .name = \"a\", .tags = []}" in r.err, r
    r = cli("shell", program, input="start;\nmodify Items 9 <- Item{.name = \"z\"};\n")
    assert r.code == 1 and "<stdin>:2:14: error: modify: relation 'Items' has no record " \
        "with key 9" in r.err, r


TIME_PROGRAM = """
input relation Word(w: string, n: bigint)
Word("hello", 1).
output relation Long(w: string)
Long(w) :- Word(w, n), n > 1.

input multiset MIn(x: u32)
output multiset MOut(x: u32)
MOut(x) :- MIn(x).

input relation Zip(zip: u32, city: string)
input stream Parcel(zip: u32, weight: usize)
output stream ParcelCity(zip: u32, city: string, weight: usize)
ParcelCity(zip, city, weight) :- Parcel(zip, weight), Zip(zip, city).

relation Fold(zip: u32, weight: usize)
Fold(zip, w) :- Total-1(zip, w).
Fold(zip, w) :- Parcel'(zip, w).
output relation Total(zip: u32, weight: usize)
Total(zip, t) :- Fold(zip, w), var t = w.group_by(zip).sum_of(|x| x).
"""

TIME_SCRIPT_1 = """\
start;
insert MIn(0), insert MIn(1), insert MIn(1),
insert Zip(1, "Oslo"),
insert Parcel(1, 2), insert Parcel(1, 5), insert Parcel(2, 1),
insert Word("hi", 2),
commit dump_changes;
start;
delete MIn(1), insert Parcel(1, 3);
commit dump_changes;
dump MOut;
"""

# the state's second process: Total-1 and the stream's last records come from the files
TIME_SCRIPT_2 = """\
start;
insert Zip(2, "Rome");
commit dump_changes;
start;
insert Parcel(2, 4);
commit dump_changes;
dump Word;
"""

# the facts of Word come with the first transaction (the initial snapshot); a multiset counts
# its records; a stream reports what the transaction put in it, never deletions; Total folds
# each transaction's parcels into the previous total, in this process and the next
TIME_OUTPUT_1 = """\
Long:
Long{.w = "hi"}: +1
MOut:
MOut{.x = 0}: +1
MOut{.x = 1}: +2
ParcelCity:
ParcelCity{.zip = 1, .city = "Oslo", .weight = 2}: +1
ParcelCity{.zip = 1, .city = "Oslo", .weight = 5}: +1
Total:
Total{.zip = 1, .weight = 7}: +1
Total{.zip = 2, .weight = 1}: +1
MOut:
MOut{.x = 1}: -1
ParcelCity:
ParcelCity{.zip = 1, .city = "Oslo", .weight = 3}: +1
Total:
Total{.zip = 1, .weight = 7}: -1
Total{.zip = 1, .weight = 10}: +1
MOut{.x = 0}
MOut{.x = 1}
"""

TIME_OUTPUT_2 = """\
ParcelCity:
ParcelCity{.zip = 2, .city = "Rome", .weight = 4}: +1
Total:
Total{.zip = 2, .weight = 1}: -1
Total{.zip = 2, .weight = 5}: +1
Word{.w = "hello", .n = 1}
Word{.w = "hi", .n = 2}
"""


def test_multisets_streams_and_delays_across_processes(cli, tmp_path):
    program = tmp_path / "time.dl"
    program.write_text(TIME_PROGRAM)
    state = tmp_path / "state"
    r = cli("shell", program, "--state", state, input=TIME_SCRIPT_1)
    assert r.code == 0, r
    assert r.out == TIME_OUTPUT_1, r
    r = cli("shell", program, "--state", state, input=TIME_SCRIPT_2)
    assert r.code == 0, r
    assert r.out == TIME_OUTPUT_2, r


DIALECT_PROGRAM = r"""
input relation In(x: bit<32>, s: string)
relation Mid(x: bit<32>, s: string)
Mid(x, s) :- In(x, s).
Mid(7, [|raw\n|]).
output relation Out(x: bit<32>, s: string, ok: bool)
Out(x, "${\"<\" ++ s ++ [|>"|]}", x > 1 => x % 2 == 0) :- Mid(x, s).
"""

DIALECT_SCRIPT = """\
start;
insert In(2, "a"),
commit dump_changes;
dump;
"""

# internal relations shown as DDlog's `--output-internal-relations` shows them, with the one
# record of its standard library's internal relation; raw strings keep their backslashes;
# `=>` is the loosest operator
DIALECT_OUTPUT = r"""Mid:
Mid{.x = 7, .s = "raw\\n"}: +1
Out:
Out{.x = 7, .s = "<raw\\n>\"", .ok = false}: +1
ddlog_std::Singleton:
ddlog_std::Singleton{}: +1
Mid:
Mid{.x = 2, .s = "a"}: +1
Out:
Out{.x = 2, .s = "<a>\"", .ok = true}: +1
Mid:
Mid{.x = 2, .s = "a"}
Mid{.x = 7, .s = "raw\\n"}

Out:
Out{.x = 2, .s = "<a>\"", .ok = true}
Out{.x = 7, .s = "<raw\\n>\"", .ok = false}

ddlog_std::Singleton:
ddlog_std::Singleton{}

"""


def test_internal_relations_raw_strings_and_implication(cli, tmp_path):
    assert shell_prints(cli, tmp_path, DIALECT_PROGRAM, DIALECT_SCRIPT,
                        "--output-internal-relations") == DIALECT_OUTPUT
    # without the flag: the outputs alone
    assert shell_prints(cli, tmp_path, DIALECT_PROGRAM, DIALECT_SCRIPT) == OUTPUTS_ALONE


def test_the_flag_makes_counted_relations_distinct(cli, tmp_path):
    """An internal relation keeps its multiplicities (tests/e2e/dialect/weights.dl), unless
    --output-internal-relations makes it distinct, as DDlog's flag makes it an output: then
    the edge back derives nothing new and the second commit changes nothing. A state built one
    way is refused the other way, with the reason; `ddlog query` reads it as it was built."""
    base = os.path.join(DIALECT, "weights")
    with open(base + ".dat", encoding="utf-8") as f:
        script = f.read()
    state = tmp_path / "st"
    r = cli("shell", base + ".dl", "--output-internal-relations", "--state", state,
            input=script)
    assert r.code == 0, r
    first = ["W{.a = 1, .derivations = 2, .weighed_sum = 5, .distinct = 2, .sum = 5}",
             "W{.a = 2, .derivations = 1, .weighed_sum = 1, .distinct = 1, .sum = 1}",
             "W{.a = 3, .derivations = 1, .weighed_sum = 1, .distinct = 1, .sum = 1}"]
    # the first commit's changes, then none, then the dump: the first values again
    assert r.out.splitlines()[2:] == [
        "Both:", "Both{.a = 1, .b = 2}: +1", "Both{.a = 1, .b = 3}: +1",
        "Both{.a = 2, .b = 1}: +1", "Both{.a = 3, .b = 1}: +1",
        "W:", *(w + ": +1" for w in first), *first], r.out
    r = cli("shell", base + ".dl", "--state", state, input="dump W;\n")
    assert r.code == 1 and "every internal relation distinct" in r.err, r
    assert "Traceback" not in r.err
    r = cli("query", "--state", state, "W")
    assert r.code == 0 and r.out.splitlines() == first, r


OUTPUTS_ALONE = r"""Out:
Out{.x = 7, .s = "<raw\\n>\"", .ok = false}: +1
Out:
Out{.x = 2, .s = "<a>\"", .ok = true}: +1
Out:
Out{.x = 2, .s = "<a>\"", .ok = true}
Out{.x = 7, .s = "<raw\\n>\"", .ok = false}

"""


INSPECT_PROGRAM = """
import inspect_log as log
input relation Edge(a: u32, b: u32)
output relation Two(a: u32, c: u32)
Two(a, c) :- Edge(a, b),
             Inspect log::log("{log}", "${ddlog_timestamp} ${ddlog_weight} edge ${a}->${b}"),
             Edge(b, c), a != c,
             Inspect log::log("{log}", "${if (ddlog_weight > 0) {\\"+\\"} else {\\"-\\"}}two ${a}->${c}").
"""

INSPECT_SCRIPT = """\
start;
insert Edge(1, 2),
insert Edge(2, 3),
commit;
start;
delete Edge(2, 3),
insert Edge(2, 4),
commit;
dump Two;
"""


def test_inspect_calls_its_function_for_each_change(cli, tmp_path):
    """`Inspect log::log(file, msg)`: one line for every change of the rule's valuations at
    that point, after the epoch commits; the rule derives what it derives without it."""
    (tmp_path / "inspect_log.dl").write_text(
        "#[has_side_effects]\nextern function log(filename: string, msg: string): ()\n")
    log = tmp_path / "inspect.log"
    program = tmp_path / "insp.dl"
    program.write_text(INSPECT_PROGRAM.replace("{log}", str(log)))
    r = cli("shell", program, input=INSPECT_SCRIPT)
    assert r.code == 0, r
    assert r.out == "Two{.a = 1, .c = 4}\n", r
    assert log.read_text() == (
        "1 1 edge 1->2\n1 1 edge 2->3\n"
        "+two 1->3\n"
        "2 -1 edge 2->3\n2 1 edge 2->4\n"
        "+two 1->4\n-two 1->3\n")


SYNTAX_PROGRAM = """\
typedef C = C0{x: bit<32>} | C1{s: string}

function nothing() { () }

function classify(c: C): string {
    match (c) {
        C0{.x = var v: bit<32>} -> "c0 ${v}",
        C1{s: string}: C -> s
    }
}

input relation In(n: bigint)
output relation Out(s: string, b: bool)
Out("ascription", (1, 2): (bit<32>, bit<32>) < (3, 4)).
Out("shift", (64 >> 2) == 16 and (1: bit<8>) << 3 == 8).
Out(classify(C0{7}), true).
Out(classify(C1{"one"}), nothing() == ()).
Out($[|raw \\n ${n}|], n > 1) :- In(n).

relation &Ref(n: bigint)
&Ref(5).
output relation Refs(n: bigint)
&Refs(n) :- Ref(n).

output relation Counts(k: bigint, c: usize)
Counts(k, c) :- In(n), var k = n % 2, var c = Aggregate((k), count(n)).

for (i in In if i.n > 1)
    if (i.n > 2) Out("big ${i.n}", true) else skip

for (In(n))
    var m: bigint = n * 10 in
    if (n == 1)
        if (m == 10) Out("ten", true) else Out("not ten", false)
"""

SYNTAX_SCRIPT = """\
start;
insert In(1), insert In(2), insert In(3);
commit;
dump Out;
dump Refs;
dump Counts;
"""


def test_more_of_ddlogs_syntax(cli, tmp_path):
    """Type ascriptions binding as tightly as `.f` (`e: T < e`), `>>` after nested type
    arguments, functions without a result type, typed patterns (`var v: T`, `p: T`),
    interpolated raw strings (`$[|...|]`, no escapes), facts and heads of a relation of
    references (`&R(..)`), DDlog's older `Aggregate((k), f(e))`, and FLWOR rules with `skip`,
    `for (R(..))`, `var v: T = e in` and an `if` without braces whose `else` is the nearest
    one's."""
    out = shell_prints(cli, tmp_path, SYNTAX_PROGRAM, SYNTAX_SCRIPT)
    dumped = out.splitlines()[-12:]
    assert dumped == [
        'Out{.s = "ascription", .b = true}', 'Out{.s = "big 3", .b = true}',
        'Out{.s = "c0 7", .b = true}', 'Out{.s = "one", .b = true}',
        r'Out{.s = "raw \\n 1", .b = false}', r'Out{.s = "raw \\n 2", .b = true}',
        r'Out{.s = "raw \\n 3", .b = true}', 'Out{.s = "shift", .b = true}',
        'Out{.s = "ten", .b = true}', "Refs{.n = 5}",
        "Counts{.k = 0, .c = 1}", "Counts{.k = 1, .c = 2}"], out


DIALECT = os.path.join(os.path.dirname(__file__), "dialect")


@pytest.mark.parametrize("name", sorted(f[:-3] for f in os.listdir(DIALECT) if f.endswith(".dl")))
def test_ddlog_style_programs(cli, name):
    """DDlog's way of testing a program, on programs written here (tests/e2e/dialect/): `ddlog
    shell X.dl < X.dat` prints X.dump.expected byte for byte. any: DDlog's Any, made from
    values of several types and read back as each; generics: generic typedefs,
    Result and `?` with ddlog_std's functions, the base64 library (its errors too), tinyset's
    Set64 through a capitalised alias with an empty set typed by its uses, and `dump` listing
    a type's constructors in their declaration order; fp: the fp library where Rust's meaning
    and Spark's differ; text: the regex library (invalid patterns, named groups, Unicode
    classes, sets) and floats in strings as Rust writes them; wide: u128, s128 and bit<100>
    from a change file (digits grouped by underscores) through arithmetic, long division, text
    and a join, and the uuid library on values the epoch gives (its expected values checked
    against Python's uuid module and integers); net: the net library on addresses an epoch
    gives (its compressed IPv6 forms checked against Python's ipaddress); d3log: located heads
    reflected through d3log::reflect, spread by hash64 (checked against its Python meaning,
    itself checked against the xxhash library); chrono: the time library on times and dates
    an epoch gives, formats, chrono's parse errors and RFC 3339 (its expected lines checked
    by hand against chrono's rules: weekdays and ISO weeks of year 0, a leap second, leap
    days, Julian days); components: the graph library's transformers and relations of
    tuples and of values through a deletion that breaks a cycle (its expected labels worked
    out by hand from the transformers' definitions); weights: an internal relation's
    multiplicities in a group's loop weights, through an insertion and a deletion (worked out
    by hand); span: a group inside a recursion (DDlog's redist.dl), whose values replace the
    ones they grow from, through insertions and deletions, and `dump;` leaving out the
    relation no commit changed (worked out by hand)."""
    base = os.path.join(DIALECT, name)
    with open(base + ".dat", encoding="utf-8") as f:
        script = f.read()
    with open(base + ".dump.expected", encoding="utf-8") as f:
        expected = f.read()
    r = cli("shell", base + ".dl", input=script)
    assert r.code == 0, r
    assert r.out == expected
