"""DDlog's `json` library (serde_json's JSON of values, both ways) and `hashset` (a HashSet is
a Set) through programs, on the oracle; tests/differential/test_json.py compares the Spark
lowering with the Python meaning."""
from __future__ import annotations

import pytest

from ddlog.check import check_text
from ddlog.errors import TypeCheckError
from ddlog.values import Record
from tests.unit.test_oracle import run
from tests.unit.test_typecheck import where

PROGRAM = """
import json
typedef Object = Object { field: u128, name: Option<string> }
typedef Shape = Dot | Circle { r: double }
input relation Chunk(json: string)
output relation Parsed(json: string, r: Result<Object, string>)
Parsed(json, from_json_string(json)) :- Chunk(json).
output relation Back(json: string)
Back(json) :- Parsed(_, Ok{o}), Ok{var json} = to_json_string(o).
output relation Shapes(json: string)
Shapes(to_json_string((Dot, Circle{2.5}, [1e16, 0.5], ["k" -> true])).unwrap_or_default()).
"""


def test_json_both_ways():
    texts = ['{"field": 12345678901234567890123, "name": "a\\"b"}', '{"field": 1}',
             '{"name": "x"}', '{"field": -1}', '{"field": 1} x']
    out = run(PROGRAM, Chunk={(t,) for t in texts})
    parsed = dict(out["Parsed"])
    assert parsed[texts[0]] == Record("Ok", (Record("Object", (12345678901234567890123,
                                                               'a"b')),))
    assert parsed[texts[2]] == Record("Err", ("missing field `field`",))
    assert parsed[texts[3]] == Record("Err", ("invalid value: integer `-1`, expected u128",))
    assert parsed[texts[4]] == Record("Err", ("invalid JSON",))
    assert out["Back"] == {('{"field":12345678901234567890123,"name":"a\\"b"}',),
                           ('{"field":1,"name":null}',)}
    assert out["Shapes"] == {('["Dot",{"Circle":{"r":2.5}},[1e16,0.5],{"k":true}]',)}


@pytest.mark.parametrize("src,message,at", [
    ("output relation O(s: string)\nO(to_json_string(|x: u8| x).unwrap_or_default()).",
     "expects a value that has a JSON form; function(bit<8>): bit<8> has none", "|x"),
    ("typedef K = K{a: u8}\noutput relation O(s: string)\n"
     "O(to_json_string(map_empty(): Map<K, u8>).unwrap_or_default()).",
     "the keys of Map<K, bit<8>> are K (JSON's are strings or integers)", "map_empty"),
    ("output relation O(b: bool)\nO(from_json_string(\"1\").is_ok()).",
     "needs its type from the context: a Result<T, string>", "from_json_string"),
])
def test_json_refusals(src, message, at):
    with pytest.raises(TypeCheckError) as info:
        check_text("import json\n" + src, "t.dl")
    assert message in info.value.message, info.value.message
    assert (info.value.span.line, info.value.span.col) == where("import json\n" + src, at)


def test_hashset_is_a_set():
    src = """
import hashset
input relation S(k: bigint, x: u128)
output relation U(k: bigint, s: HashSet<u128>)
U(k, all) :- S(k, x), var s = hashset_singleton(x), var all = s.group_by(k).union().
output relation N(k: bigint, n: usize, has5: bool)
N(k, s.size(), hashset_contains(s, 5)) :- U(k, s).
output relation W(s: Set<bigint>)
W(unions([set_singleton(1), set_singleton(3), set_singleton(1)])).
W(group_set_unions(s)) :- S(k, _), var s = set_singleton(k).group_by(()).
"""
    out = run(src, S={(1, 7), (1, 5), (2, 7)})
    assert out["U"] == {(1, (5, 7)), (2, (7,))}
    assert out["N"] == {(1, 2, True), (2, 1, False)}
    assert out["W"] == {((1, 3),), ((1, 2),)}


def test_a_bound_record_in_brackets_is_a_record_the_relation_holds():
    src = """
typedef W = W{start: bigint, end: bigint}
input relation Win[W]
input relation Hit(w: W)
output relation Kept(w: W)
Kept(w) :- Hit(w), Win[w].
"""
    w1, w2 = Record("W", (1, 5)), Record("W", (5, 10))
    assert run(src, Win={(1, 5)}, Hit={(w1,), (w2,)})["Kept"] == {(w1,)}
