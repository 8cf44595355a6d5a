"""DDlog's `json` library on Spark against its Python meaning (ddlog/builtins/jsons.py: on
Spark, concatenation of Columns and Spark's VARIANT; in Python, a writer of its own and the
`json` module): random values of types of every kind written, texts written by hand (each of
serde's errors) and the written texts, some of them damaged, read back."""
from __future__ import annotations

import json
import math
import random

from ddlog.builtins.jsons import JSON, read, write
from ddlog.plan import exprs as ir
from ddlog.types import (BOOL, DOUBLE, FLOAT, STRING, TCtor, TInt, TMap, TOption, TSet,
                         TStruct, TTuple, TVec, result_type)
from ddlog.values import Record
from tests.differential.harness import ValueGen

U8, S8, U32, U64, U128 = TInt(False, 8), TInt(True, 8), TInt(False, 32), TInt(False, 64), \
    TInt(False, 128)
NESTED = TStruct("Nested", (TCtor("Nested", (("x", STRING), ("z", U64))),))
ALT = TStruct("m::Alt", (TCtor("m::A", ()), TCtor("m::B", (("b", BOOL),)),
                         TCtor("m::C", (("f", DOUBLE), ("v", TVec(TTuple((S8, FLOAT))))))))
TOP = TStruct("Top", (TCtor("Top", (("t", STRING), ("id", TOption(STRING)), ("n", NESTED),
                                    ("alt", ALT), ("big", U128))),))
TYPES = [TOP, ALT, TMap(U32, TSet(STRING)), TVec(TOption(U8)), TTuple((BOOL, DOUBLE, S8)),
         TMap(STRING, TVec(ALT)), U64, STRING]

TEXTS = ['nope', '"A"', '{"A": null}', '{"A": 1}', '{"B": {"b": true}}', '{"B": {}}',
         '{"B": {"b": 1}}', '{"D": 1}', '{"B": {"b": true}, "C": {}}',
         '{"C": {"f": 1, "v": [[-3, 2.5], [127, 1e3]]}}', '{"C": {"f": 1, "v": [[-129, 2]]}}',
         '{"C": {"f": "1", "v": []}}', '{"C": {"f": 1, "v": [[1]]}}', '[1, null, 255, 256]',
         '[1.0]', '[true, 2.5e300, -128]', '[true, 1, 2, 3]', '{"1": ["b", "a", "b"], "7": []}',
         '{"-1": []}', '{"x": [], "1": [1]}', '{"a": 1, "a": 2}', '18446744073709551615',
         '18446744073709551616', '-1', '"\\u0001é\\n"', 'null', 'NaN', '[]', '{}',
         '{"t": "a", "n": {"x": "x", "z": 5}, "alt": "A", "big": ' + str(2 ** 128 - 1) + '}',
         '{"t": "a", "id": null, "n": {"x": "x", "z": 5}, "alt": "A", "big": 1}',
         '{"t": "a", "n": {"x": "x"}, "alt": "A", "big": 1}',
         '{"t": "a", "id": 3, "n": {"x": "x", "z": 5}, "alt": "A", "big": 1}',
         '{"t": "a", "n": {"x": "x", "z": 5}, "alt": "A", "big": -1, "extra": [1]}']
FLOATS = (0.0, -0.0, 0.5, 299792458.0, 1e16, 1e15, 1.2e-6, 0.000012, -2.5, 1e300, 5e-324,
          float("nan"), float("inf"), 0.1, 123456.789, 3.4028234663852886e38)
VALUES = ValueGen(ints=(0, 1, 5, 127, 200, 255), floats=FLOATS,
                  strings=("", "a", 'q"\\', "é\n\t\x01\x1f\x7f", "x y"), max_len=3)


def _spark_values(spark, name: str, t, arg_t, rows: list) -> list:
    from ddlog.runtime.expr import compile_expr
    from ddlog.runtime.schema import from_spark, spark_type, to_spark
    from pyspark.sql.types import StructField, StructType
    schema = StructType([StructField("c0", spark_type(arg_t), True)])
    df = spark.createDataFrame([(to_spark(v, arg_t),) for v in rows], schema)
    column = compile_expr(ir.Call(name, (ir.Col("c0", arg_t),), t))
    return [from_spark(r[0], t) for r in df.select(column).collect()]


def _same(a, b) -> bool:
    return a == b or repr(a) == repr(b)  # NaN inside


def test_written_values_agree(spark):
    rng = random.Random(5)
    for t in TYPES + [FLOAT, DOUBLE, TVec(FLOAT)]:
        rows = [VALUES.value(rng, t) for _ in range(30)]
        res = result_type(STRING, STRING)
        got = _spark_values(spark, "to_json_string", res, t, rows)
        for v, g in zip(rows, got):
            want = JSON["to_json_string"].python([v], [t], res)
            assert g == want, (t, v, g, want)


def test_read_texts_agree(spark):
    rng = random.Random(6)
    for t in TYPES:
        texts = list(TEXTS)
        for _ in range(25):
            text = write(VALUES.value(rng, t), t)
            texts.append(text)
            cut = rng.randrange(len(text) + 1)  # damaged: a character dropped
            texts.append(text[:cut] + text[cut + 1:])
        res = result_type(t, STRING)
        got = _spark_values(spark, "from_json_string", res, STRING, texts)
        for text, g in zip(texts, got):
            want = JSON["from_json_string"].python([text], [STRING], res)
            assert _same(g, want), (text, g, want)


def test_reading_what_was_written_gives_the_value():
    rng = random.Random(7)
    finite = ValueGen(ints=VALUES.ints, strings=VALUES.strings, max_len=3,
                      floats=tuple(f for f in FLOATS if math.isfinite(f) and abs(f) < 3e38))
    for t in TYPES:
        for _ in range(40):
            v = finite.value(rng, t)
            text = write(v, t)  # a float's value as a `float` (32 bits) is rounded on the way
            assert write(read(json.loads(text), t), t) == text, (t, v)


def test_serde_s_texts():
    res = result_type(ALT, STRING)
    meaning = JSON["from_json_string"].python
    assert meaning(['{"C": {"f": "1", "v": []}}'], [STRING], res) == Record(
        "Err", ("invalid type: string, expected f64",))
    assert meaning(['{"D": 1}'], [STRING], res) == Record(
        "Err", ("unknown variant `D`, expected one of `A`, `B`, `C`",))
    assert meaning(['{"B": {}}'], [STRING], res) == Record("Err", ("missing field `b`",))
    assert meaning(['"A"'], [STRING], res) == Record("Ok", (Record("m::A", ()),))
    assert write(Record("m::C", (1.0, ((-3, 2.5),))), ALT) == '{"C":{"f":1.0,"v":[[-3,2.5]]}}'
    assert write(Record("m::A", ()), ALT) == '"A"'
    assert meaning(["300"], [STRING], result_type(U8, STRING)) == Record(
        "Err", ("invalid value: integer `300`, expected u8",))
