"""SKIP TILL ANY MATCH in one pass where a condition compares a value of each row: past 32
buffered partial matches a probing row looks its partners up by that value
(`NodeValueIndex`) instead of testing each, and returns the rows of the join operators
(cepExecution = joins), match numbers included, whatever the comparison and whatever nulls,
NaN or -0.0 the values hold.
"""

from __future__ import annotations

import random

import pytest

EXECUTION = "spark.sql.matchRecognize.cepExecution"


def _rows(spark, sql: str, execution: str):
    spark.conf.set(EXECUTION, execution)
    try:
        return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)
    finally:
        spark.conf.unset(EXECUTION)


@pytest.fixture(scope="module")
def wide_events(spark):
    """Two keys of 700 rows, a second apart: a 300-second window buffers hundreds of `A`s, so
    a probing row looks its partners up by value. `d` has nulls, NaN and -0.0 among its
    values."""
    rng = random.Random(5)
    rows = []
    for k in ("k1", "k2"):
        for t in range(700):
            d = rng.choice([None, float("nan"), -0.0] + [x / 2 for x in range(-20, 21)])
            rows.append((k, t, rng.choice("ab"), rng.randint(0, 99), d))
    spark.createDataFrame(rows, "k string, t long, e string, v int, d double").selectExpr(
        "k", "timestamp_seconds(t) AS ts", "t", "e", "v", "d"
    ).createOrReplaceTempView("wide_events")
    yield
    spark.catalog.dropTempView("wide_events")


@pytest.mark.parametrize(
    "condition",
    [
        "B.v < A.v - 90",
        "B.v >= A.v + 95 AND B.e = 'b'",
        "B.v = A.v",
        "B.d > A.d",
        "A.d = B.d",
        "B.d <= A.d - 9",
        "B.v * 2 < A.v AND B.d <> A.d",
    ],
)
def test_rows_looked_up_by_a_compared_value_equal_the_joins(spark, wide_events, condition):
    """Each B extends the A's of its window that its condition's comparison admits, found by
    value among hundreds (`NodeValueIndex`): the one pass returns the joins' rows, match
    numbers included."""
    sql = f"""
        SELECT * FROM wide_events MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES A.t AS a_t, B.t AS b_t, MATCH_NUMBER() AS n
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B) WITHIN INTERVAL '300' SECOND
          DEFINE A AS e = 'a', B AS {condition})"""
    tree = _rows(spark, sql, "tree")
    assert tree == _rows(spark, sql, "joins")
    assert len(tree) > 20
