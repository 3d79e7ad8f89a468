"""SQL UDFs (`CREATE FUNCTION ... RETURN <expression>`, Spark 4.0 and later) in DEFINE and
MEASURES, through spark.sql: each result equals the same query with the function's
expression written in place, under both semantics; a SQL UDF in DEFINE over a value that
depends on the match is refused by name, as a Python UDF is."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.errors import AnalysisException

from streaming_harness import SPARK_3, run_batch, run_stream

pytestmark = pytest.mark.skipif(SPARK_3, reason="SQL UDFs are Spark 4.0 and later")


@pytest.fixture(scope="module")
def prices(spark):
    spark.sql("CREATE OR REPLACE TEMPORARY FUNCTION sql_plus1(x INT) RETURNS INT RETURN x + 1")
    spark.sql(
        "CREATE OR REPLACE TEMPORARY FUNCTION sql_tag(s STRING) RETURNS STRING "
        "RETURN concat('<', s, '>')"
    )
    spark.sql("""
        CREATE OR REPLACE TEMPORARY VIEW sql_udf_prices AS
        SELECT CAST(id % 2 AS INT) AS k, CAST(id AS INT) AS ts, CAST(id * 7 % 10 AS INT) AS price,
               TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS t
        FROM range(40)""")
    yield "sql_udf_prices"
    spark.sql("DROP TEMPORARY FUNCTION IF EXISTS sql_plus1")
    spark.sql("DROP TEMPORARY FUNCTION IF EXISTS sql_tag")


def _rows(spark, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


def _same_as_in_place(spark, template: str) -> list[tuple]:
    """The query with `{f}` as the SQL UDF, checked against `1 + ` in its place."""
    rows = _rows(spark, template.format(f="sql_plus1"))
    assert rows, "the query should have matches"
    assert rows == _rows(spark, template.format(f="1 + "))
    return rows


def test_in_define_over_the_row_being_matched_and_inside_navigation(spark, prices):
    _same_as_in_place(
        spark,
        """
        SELECT * FROM sql_udf_prices MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES FIRST(A.ts) AS s, count(*) AS n
          PATTERN (A B+) DEFINE A AS {f}(price) > 3, B AS {f}(B.price) < PREV({f}(price)))""",
    )


def test_in_measures_over_navigation_aggregates_and_the_classifier(spark, prices):
    rows = _same_as_in_place(
        spark,
        """
        SELECT * FROM sql_udf_prices MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES {f}(LAST(B.price)) AS last_b, sum({f}(B.price)) AS total, {f}(count(*)) AS n
          PATTERN (A B+) DEFINE B AS price < PREV(price))""",
    )
    tagged = _rows(
        spark,
        """
        SELECT DISTINCT c FROM sql_udf_prices MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES sql_tag(CLASSIFIER()) AS c
          PATTERN (A B+) DEFINE B AS price < PREV(price))""",
    )
    assert len(rows) > 2 and tagged == [("<B>",)]


def test_all_rows_with_unmatched_rows_keep_null_measures(spark, prices):
    rows = _same_as_in_place(
        spark,
        """
        SELECT ts, m FROM sql_udf_prices MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES {f}(RUNNING count(*)) AS m
          ALL ROWS PER MATCH WITH UNMATCHED ROWS
          PATTERN (A B) DEFINE B AS price < PREV(price))""",
    )
    assert len(rows) == 40 and any(m is None for _, m in rows)


def test_under_skip_till_any_match(spark, prices):
    _same_as_in_place(
        spark,
        """
        SELECT * FROM sql_udf_prices MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY t MEASURES A.ts AS a, B.ts AS b, {f}(B.price) AS p
          ONE ROW PER MATCH SKIP TILL ANY MATCH PATTERN (A B) WITHIN 6 ROWS
          DEFINE A AS {f}(A.price) > 8, B AS {f}(B.price) < 3)""",
    )


@pytest.mark.parametrize(
    ("clauses", "condition", "name"),
    [
        (
            "MEASURES count(*) AS n DEFINE B AS sql_plus1(PREV(price)) > 3",
            "SQL_UDF_IN_DEFINE",
            "sql_plus1",
        ),
        (
            "MEASURES count(*) AS n DEFINE B AS sql_plus1(A.price) > price",
            "SQL_UDF_IN_DEFINE",
            "sql_plus1",
        ),
        (
            "MEASURES FIRST(sql_tag(CLASSIFIER())) AS c DEFINE B AS price > 0",
            "SQL_UDF_OVER_PATTERN",
            "sql_tag",
        ),
    ],
)
def test_a_sql_udf_over_the_match_where_it_cannot_run_is_refused_by_name(
    spark, prices, clauses, condition, name
):
    measures, define = clauses.split(" DEFINE ")
    with pytest.raises(AnalysisException) as error:
        spark.sql(f"""
            SELECT * FROM sql_udf_prices MATCH_RECOGNIZE (
              PARTITION BY k ORDER BY ts {measures}
              PATTERN (A B+) DEFINE {define})""").collect()
    message = str(error.value)
    assert f"MATCH_RECOGNIZE.{condition}" in message and f"`{name}`" in message, message


def test_a_stream_with_a_sql_udf_equals_batch(spark, prices, tmp_path):
    # a rises 1, 5, 7 and falls to 2: A B+ C of 4 rows. The last row, of another key far
    # later, moves the watermark past every other row.
    start = datetime(2024, 1, 1)
    events = [
        (k, start + timedelta(seconds=t), v)
        for k, t, v in [("a", 1, 1), ("a", 2, 5), ("a", 3, 7), ("a", 4, 2), ("z", 1000, 0)]
    ]
    sql = """
        SELECT k, n, m FROM events MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES count(*) AS n, sql_plus1(LAST(B.v)) AS m
          PATTERN (A B+ C) DEFINE B AS sql_plus1(v) > PREV(sql_plus1(v)), C AS v < PREV(v))"""
    schema = "k STRING, ts TIMESTAMP, v INT"
    batch = sorted(run_batch(spark, schema, events, sql))
    streamed = run_stream(spark, tmp_path, schema, ["k", "ts", "v"], [events[:2], events[2:]], sql)
    assert batch == [("a", 4, 8)]
    assert sorted(streamed.rows) == batch
