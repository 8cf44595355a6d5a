"""Reading bound sources (runtime/io): typed by the relation's declaration, matched by column
name, every value checked (these use the session's SparkSession)."""
from __future__ import annotations

import pytest

from ddlog.plan import load_text
from ddlog.runtime.io import BindingError, parse_spec, read_source
from tests.unit.test_state_layout import PROGRAM

@pytest.fixture(scope="module")
def relations():
    return load_text(PROGRAM).program.relations


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_csv_source_is_typed_by_the_relation(spark, relations, tmp_path):
    t = relations["T"]
    path = tmp_path / "t.csv"
    path.write_text("o,name,ok,n,x,b\n,a,true,1,0.5,255\n7,\"b,c\",FALSE,-2,3,0\n")
    df = read_source(spark, parse_spec(f"csv:{path}"), t)  # matched by name, any order
    assert _rows(df) == [("a", True, 1, 0.5, 255, None), ("b,c", False, -2, 3.0, 0, 7)]
    for body, why in [("x,true,one,0.5,1,", "column n: not a bigint"),
                      ("x,true,1,0.5,256,", "column b: out of range for bit<8>"),
                      (",true,1,0.5,1,", "column name: missing value"),
                      ("x,yes,1,0.5,1,", "column ok: not a bool")]:
        path.write_text("name,ok,n,x,b,o\n" + body + "\n")
        with pytest.raises(BindingError, match=why):
            read_source(spark, parse_spec(f"csv:{path}"), t)
    with pytest.raises(BindingError, match="CSV cannot hold"):
        read_source(spark, parse_spec(f"csv:{path}"), relations["V"])


def test_json_parquet_and_table_sources(spark, relations, tmp_path):
    v = relations["V"]
    path = tmp_path / "v.json"
    path.write_text('{"k": {"_tag": "Small"}, "v": ["p"], "t": {"_0": 1, "_1": true}}\n')
    got = _rows(read_source(spark, parse_spec(f"json:{path}"), v))
    assert got[0][1] == ["p"] and tuple(got[0][2]) == (1, True) and got[0][0]["_tag"] == "Small"
    u = relations["U"]
    spark.createDataFrame([("x",), ("y",)], "Name string").write.parquet(str(tmp_path / "p"))
    assert _rows(read_source(spark, parse_spec(f"parquet:{tmp_path / 'p'}"), u)) == \
        [("x",), ("y",)]  # matched by name, ignoring case
    spark.createDataFrame([("x",)], "who string").write.parquet(str(tmp_path / "q"))
    with pytest.raises(BindingError, match="no column name.*matched by column name"):
        read_source(spark, parse_spec(f"parquet:{tmp_path / 'q'}"), u)  # never by position
    spark.createDataFrame([(1, "z")], "id int, name string").createOrReplaceTempView("unit_src")
    assert _rows(read_source(spark, parse_spec("table:unit_src"), u)) == [("z",)]
    with pytest.raises(BindingError, match="relation U has columns name; the source has"):
        spark.createDataFrame([(1, 2)], "a int, b int").createOrReplaceTempView("unit_bad")
        read_source(spark, parse_spec("table:unit_bad"), u)


