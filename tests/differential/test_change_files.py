"""Change files as `ddlog stream` reads them (runtime/io/changes.py): a small file is read
once, into the driver, and its updates come with their rows in Python (which the engine reads
the stored relation by); a larger one stays a lazy read. Whichever way a file took, its
inserts and deletes are each row's last occurrence in the file, as the random sequences of
inserts and deletes written here decide them, and the rows given in Python are exactly the
rows of the update's DataFrame.
"""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from ddlog.check import check_text
from ddlog.runtime.config import Config
from ddlog.runtime.io.changes import ChangeFileError, read_changes

PROGRAM = check_text("""
input relation Edge(src: bigint, dst: bigint)
input relation Tag(n: bigint, name: string, note: Option<string>)
output relation Out(src: bigint, dst: bigint)
Out(x, y) :- Edge(x, y).
""")
EDGE, TAG = PROGRAM.relations["Edge"], PROGRAM.relations["Tag"]

# held and with rows in Python / held without them / read lazily: files of 6, 30 and 120 rows
SMALL = Config(local_rows=40, driver_rows=10)


def last_of_each(ops: list[tuple[tuple, int]]) -> tuple[set, set]:
    last: dict[tuple, int] = {}
    for row, w in ops:
        last[row] = w
    return ({r for r, w in last.items() if w == 1}, {r for r, w in last.items() if w == -1})


def frame_rows(update) -> Counter:
    return Counter(tuple(r) for r in update.df.collect())


def check_update(update, want: set, sign: int, held: bool) -> None:
    assert update.sign == sign
    assert frame_rows(update) == Counter(want)
    if held:
        assert update.rows is not None and Counter(update.rows) == Counter(want)
    else:
        assert update.rows is None


@pytest.mark.parametrize("n", [6, 30, 120])
def test_weighted_csv_files_decide_each_row_by_its_last_occurrence(spark, tmp_path, n):
    rng = random.Random(n)
    k = 2 if n <= 10 else 5  # rows repeat, inserts and deletes of one row interleave
    for f in range(6 if n <= 10 else 1):
        ops = [((rng.randrange(k), rng.randrange(k)), rng.choice([1, -1])) for _ in range(n)]
        lines = [f"{s},{d},{w}" if rng.random() < 0.8 or w == -1 else f"{s},{d},"
                 for (s, d), w in ops]  # an empty weight is an insert
        path = tmp_path / f"changes{f}.csv"
        path.write_text("src,dst,weight\n" + "\n".join(lines) + "\n")
        inserts, deletes = read_changes(spark, "csv", str(path), EDGE, SMALL)
        want_in, want_del = last_of_each(ops)
        check_update(inserts, want_in, 1, held=n <= SMALL.driver_rows)
        check_update(deletes, want_del, -1, held=n <= SMALL.driver_rows)


@pytest.mark.parametrize("n", [6, 30, 120])
def test_json_rows_without_a_weight_are_inserts(spark, tmp_path, n):
    rng = random.Random(n)
    ops = [((rng.randrange(2), rng.choice("xy"), rng.choice([None, "a"])),
            rng.choice([1, -1, None])) for _ in range(n)]
    path = tmp_path / "changes.json"
    path.write_text("".join(json.dumps({"n": a, "name": b, "note": c, "weight": w}
                                       if w is not None else {"n": a, "name": b, "note": c})
                            + "\n" for (a, b, c), w in ops))
    inserts, deletes = read_changes(spark, "json", str(path), TAG, SMALL)
    want_in, want_del = last_of_each([(row, 1 if w is None else w) for row, w in ops])
    check_update(inserts, want_in, 1, held=n <= SMALL.driver_rows)
    check_update(deletes, want_del, -1, held=n <= SMALL.driver_rows)


@pytest.mark.parametrize("n", [6, 120])
def test_bad_rows_are_reported_however_the_file_is_read(spark, tmp_path, n):
    path = tmp_path / "bad.csv"
    path.write_text("src,dst,weight\n" + "1,2,1\n" * n + "3,x,1\n")
    with pytest.raises(ChangeFileError, match="column dst: not a bigint"):
        read_changes(spark, "csv", str(path), EDGE, SMALL)
    path.write_text("src,dst,weight\n" + "1,2,1\n" * n + "3,4,2\n")
    with pytest.raises(ChangeFileError, match="weight must be 1 .insert. or -1"):
        read_changes(spark, "csv", str(path), EDGE, SMALL)
