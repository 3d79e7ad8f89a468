"""Which input columns the operator reads: ties on the ORDER BY keys are broken by the
other columns, but with ONE ROW PER MATCH only the columns the clause reads matter, so the
rest are not scanned, shuffled or sorted; ALL ROWS PER MATCH outputs (and so keeps) all."""

from __future__ import annotations

import re

import pytest

DATA = """SELECT * FROM VALUES
  (1, 1, 10, 'x'), (1, 2, 8, 'y'), (1, 2, 7, 'z'), (1, 3, 9, 'w'), (1, 4, 12, 'v'),
  (2, 1, 5, 'a'), (2, 1, 5, 'b'), (2, 2, 4, 'c'), (2, 3, 6, 'd')
  AS t(k, ts, price, note)"""

QUERY = """SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS a_ts, LAST(B.price) AS low, count(*) AS n
  {rows}
  PATTERN (A B+ C)
  DEFINE B AS B.price < PREV(B.price), C AS C.price > PREV(C.price)
)"""


@pytest.fixture(scope="module")
def ticks(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ticks") / "ticks.parquet")
    spark.sql(DATA).write.parquet(path)
    spark.read.parquet(path).createOrReplaceTempView("ticks")
    yield
    spark.catalog.dropTempView("ticks")


def read_schema(df) -> str:
    plan = df._jdf.queryExecution().executedPlan().toString()
    found = re.findall(r"ReadSchema: (struct<[^>]*>)", plan)
    assert found, plan
    return found[0]


def test_one_row_per_match_reads_only_the_columns_the_clause_uses(spark, ticks):
    df = spark.sql(QUERY.format(rows="ONE ROW PER MATCH"))
    assert read_schema(df) == "struct<k:int,ts:int,price:int>"
    # Rows tied on ts within k = 1 differ in price (read, so they still break the tie) and in
    # note (not read): the result is that of ordering ts ties by price.
    assert sorted(tuple(r) for r in df.collect()) == [(1, 1, 7, 3), (2, 1, 4, 3)]


def test_all_rows_per_match_keeps_every_column(spark, ticks):
    df = spark.sql(QUERY.format(rows="ALL ROWS PER MATCH"))
    assert "note" in read_schema(df)
    assert "note" in df.columns
