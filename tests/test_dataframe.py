"""match_recognize(df, ...): the same results as the SQL query, argument checks, views."""

from __future__ import annotations

import datetime

import pytest

from result_compare import compare_rows
from spark_match_recognize import match_recognize, match_recognize_sql
from spark_match_recognize.dataframe import VIEW_PREFIX, temp_view_names

TICKS = [
    ("A", datetime.datetime(2024, 3, 1, 9, m), p)
    for m, p in enumerate([10, 8, 6, 9, 12, 11, 7, 13])
] + [("B", datetime.datetime(2024, 3, 1, 9, m), p) for m, p in enumerate([5, 4, 6])]


@pytest.fixture(scope="module")
def ticks(spark):
    return spark.createDataFrame(TICKS, "sym string, ts timestamp, price int")


def _same(df_result, sql_result, ordered=False):
    assert df_result.columns == sql_result.columns
    diff = compare_rows(
        [tuple(r) for r in df_result.collect()], [tuple(r) for r in sql_result.collect()], ordered
    )
    assert diff is None, diff


def test_one_row_per_match_equals_the_sql_query(spark, ticks):
    result = match_recognize(
        ticks,
        partition_by="sym",
        order_by="ts",
        measures={
            "start_ts": "STRT.ts",
            "bottom": "LAST(DOWN.price)",
            "top": "FINAL max(UP.price)",
            "n": "count(*)",
        },
        rows_per_match="one",
        after_match_skip="PAST LAST ROW",
        pattern="STRT DOWN+ UP+",
        define={"DOWN": "price < PREV(price)", "UP": "price > PREV(price)"},
    )
    ticks.createOrReplaceTempView("df_test_ticks")
    expected = spark.sql(
        """SELECT * FROM df_test_ticks MATCH_RECOGNIZE (
             PARTITION BY sym ORDER BY ts
             MEASURES STRT.ts AS start_ts, LAST(DOWN.price) AS bottom,
                      FINAL max(UP.price) AS top, count(*) AS n
             ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
             PATTERN (STRT DOWN+ UP+)
             DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))"""
    )
    _same(result, expected)
    assert len(expected.collect()) == 3


def test_all_rows_subset_skip_and_order_tuples(spark, ticks):
    kwargs = dict(
        partition_by=["sym"],
        order_by=[("ts", "asc nulls last"), ("price", "DESC")],
        measures={"cls": "CLASSIFIER()", "mn": "MATCH_NUMBER()", "low": "min(U.price)"},
        rows_per_match="all with unmatched",
        after_match_skip="TO LAST UP",
        pattern="STRT DOWN+ UP{1,2}",
        subset={"U": ["STRT", "DOWN"]},
        define={"DOWN": "price < PREV(price)", "UP": "price > PREV(price)"},
    )
    result = match_recognize(ticks, **kwargs)
    ticks.createOrReplaceTempView("df_test_ticks")
    expected = spark.sql(
        """SELECT * FROM df_test_ticks MATCH_RECOGNIZE (
             PARTITION BY sym ORDER BY ts ASC NULLS LAST, price DESC
             MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn, min(U.price) AS low
             ALL ROWS PER MATCH WITH UNMATCHED ROWS
             AFTER MATCH SKIP TO LAST UP
             PATTERN (STRT DOWN+ UP{1,2})
             SUBSET U = (STRT, DOWN)
             DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))"""
    )
    _same(result, expected)
    assert result.columns == ["sym", "ts", "price", "cls", "mn", "low"]
    # Every row is output, some twice (SKIP TO LAST UP lets matches share a row).
    assert len(result.collect()) > len(TICKS)


def test_within_and_strategy(spark):
    df = spark.createDataFrame(
        [
            (datetime.datetime(2024, 1, 1, 10, m), k)
            for m, k in [(0, "a"), (1, "x"), (2, "b"), (30, "a"), (45, "b")]
        ],
        "ts timestamp, kind string",
    )
    result = match_recognize(
        df,
        order_by="ts",
        measures={"a_ts": "A.ts", "b_ts": "B.ts"},
        strategy="skip till next match",
        pattern="A B",
        within=datetime.timedelta(minutes=10),
        define={"A": "kind = 'a'", "B": "kind = 'b'"},
    )
    rows = [tuple(r) for r in result.collect()]
    assert rows == [(datetime.datetime(2024, 1, 1, 10, 0), datetime.datetime(2024, 1, 1, 10, 2))]
    by_rows = match_recognize(
        df, order_by="ts", measures={"n": "count(*)"}, pattern="A X? B", within=2,
        define={"A": "kind = 'a'", "B": "kind = 'b'"},
    )  # fmt: skip
    assert [r.n for r in by_rows.collect()] == [2]  # a x b spans 3 rows: only (a, b) fits
    every = match_recognize(
        df,
        order_by="ts",
        measures={"a_ts": "A.ts", "b_ts": "B.ts"},
        strategy="skip till any match",
        pattern="A B",
        within=datetime.timedelta(minutes=50),
        define={"A": "kind = 'a'", "B": "kind = 'b'"},
    )
    # Every (a, b) pair within the window, the b at minute 45 with both a rows.
    assert sorted(r.a_ts.minute for r in every.collect()) == [0, 0, 30]


def test_generated_sql_quotes_odd_names():
    sql = match_recognize_sql(
        "t",
        order_by=["ts"],
        measures={"first price": "FIRST(`Up`.price)", "n": "count(*)"},
        pattern="`Up`+",
        define={"Up": "price > PREV(price)"},
        within="INTERVAL '5' MINUTE",
    )
    assert sql == (
        "SELECT * FROM t MATCH_RECOGNIZE (\n"
        "  ORDER BY ts\n"
        "  MEASURES\n"
        "    FIRST(`Up`.price) AS `first price`,\n"
        "    count(*) AS n\n"
        "  PATTERN (`Up`+)\n"
        "  WITHIN INTERVAL '5' MINUTE\n"
        "  DEFINE\n"
        "    Up AS price > PREV(price)\n"
        ")"
    )
    assert "AFTER MATCH SKIP TO FIRST `my var`" in match_recognize_sql(
        "t", pattern="A", after_match_skip="to first `my var`"
    )
    assert "WITHIN INTERVAL '1.500000' SECOND" in match_recognize_sql(
        "t", pattern="A", within=datetime.timedelta(seconds=1.5)
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"pattern": 5}, TypeError, "pattern must be SQL text"),
        ({"pattern": "  "}, ValueError, "pattern must not be empty"),
        ({"pattern": "A", "define": ["A"]}, TypeError, "define must be a dict"),
        ({"pattern": "A", "define": {"A": 1}}, TypeError, "the DEFINE condition of 'A'"),
        ({"pattern": "A", "measures": {"": "count(*)"}}, ValueError, "a measure name"),
        ({"pattern": "A", "order_by": [("ts", "up")]}, ValueError, "order_by direction 'up'"),
        ({"pattern": "A", "order_by": 3}, TypeError, "order_by must be"),
        ({"pattern": "A", "order_by": [("ts", "asc", 1)]}, TypeError, "each item of order_by"),
        ({"pattern": "A", "partition_by": 3}, TypeError, "partition_by"),
        ({"pattern": "A", "rows_per_match": "some"}, ValueError, "rows_per_match='some'"),
        ({"pattern": "A", "after_match_skip": "somewhere else"}, ValueError, "after_match_skip"),
        ({"pattern": "A", "strategy": "skip till every match"}, ValueError, "strategy="),
        ({"pattern": "A", "within": 0}, ValueError, "must be positive"),
        ({"pattern": "A", "within": True}, TypeError, "within must be"),
        ({"pattern": "A", "subset": {"U": []}}, ValueError, "SUBSET 'U' needs"),
    ],
)
def test_arguments_are_checked_before_spark(kwargs, error, fragment):
    with pytest.raises(error) as caught:
        match_recognize_sql("t", **kwargs)
    assert str(caught.value).startswith("match_recognize(): ")
    assert fragment in str(caught.value)


def test_clause_errors_are_reported_in_sparks_words(ticks):
    with pytest.raises(ValueError) as caught:
        match_recognize(ticks, order_by="ts", pattern="A B{3,1}")
    assert "invalid quantifier: lower bound 3 is greater than upper bound 1" in str(caught.value)
    assert "[PARSE_SYNTAX_ERROR]" in str(caught.value)
    with pytest.raises(ValueError, match="DEFINE names pattern variable `C`"):
        match_recognize(ticks, order_by="ts", pattern="A B", define={"C": "price > 0"})


def test_spark_judges_columns(ticks):
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException):
        match_recognize(ticks, order_by="ts", pattern="A", define={"A": "no_such_column > 0"})


def test_input_must_be_a_dataframe():
    with pytest.raises(TypeError, match="df must be a pyspark DataFrame"):
        match_recognize([1, 2], pattern="A")  # type: ignore[arg-type]


def test_each_call_registers_its_own_view(spark, ticks):
    before = set(temp_view_names(spark))
    first = match_recognize(ticks, order_by="ts", pattern="A", measures={"n": "count(*)"})
    second = match_recognize(ticks, order_by="ts", pattern="A", measures={"n": "count(*)"})
    added = set(temp_view_names(spark)) - before
    assert len(added) == 2 and all(v.startswith(VIEW_PREFIX) for v in added)
    # Both results stay usable: each refers to its own view.
    assert first.count() == second.count() == len(TICKS)
