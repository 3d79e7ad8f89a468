"""Python UDFs (registered row-at-a-time UDFs and pandas UDFs) in DEFINE and MEASURES,
through spark.sql: each result equals the same query with the UDF written as a SQL
expression; a UDF in DEFINE over a value that depends on the match is refused by name."""

from __future__ import annotations

import pandas as pd
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql.functions import pandas_udf


@pytest.fixture(scope="module")
def prices(spark):
    spark.udf.register("py_plus1", lambda x: None if x is None else x + 1, "int")
    spark.udf.register("py_is_null", lambda x: x is None, "boolean")

    @pandas_udf("int")
    def pd_plus1(s: pd.Series) -> pd.Series:
        return s + 1

    spark.udf.register("pd_plus1", pd_plus1)
    spark.sql("""
        CREATE OR REPLACE TEMPORARY VIEW udf_prices AS
        SELECT CAST(id % 2 AS INT) AS k, CAST(id AS INT) AS ts, CAST(id * 7 % 10 AS INT) AS price
        FROM range(40)""")
    return "udf_prices"


def _rows(spark, sql: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.sql(sql).collect())


def _same_as_sql(spark, template: str) -> list[tuple]:
    """The query with the UDFs (`{py}` and `{pd}` in the template), checked against the
    same query with `1 + ` in their place (both UDFs add one)."""
    rows = _rows(spark, template.format(py="py_plus1", pd="pd_plus1"))
    assert rows, "the query should have matches"
    assert rows == _rows(spark, template.format(py="1 + ", pd="1 + "))
    return rows


STANDARD = """
    SELECT * FROM udf_prices MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY ts
      MEASURES {py}(FIRST(ts)) AS first_ts, {pd}(LAST(B.price)) AS top,
               {py}(CAST(count(*) AS INT)) AS n, MATCH_NUMBER() AS m, CLASSIFIER() AS c
      %s
      PATTERN (A B+)
      DEFINE A AS {pd}(price) < 5,
             B AS {py}(B.price) > PREV({pd}(price)))"""


@pytest.mark.parametrize(
    "rows", ["ONE ROW PER MATCH", "ALL ROWS PER MATCH", "ALL ROWS PER MATCH WITH UNMATCHED ROWS"]
)
def test_udfs_in_define_and_measures_standard_semantics(spark, prices, rows):
    _same_as_sql(spark, STANDARD % rows)


def test_measures_of_unmatched_rows_stay_null(spark, prices):
    # py_is_null(NULL) is true: the UDF must not be applied to the measure of a row that
    # belongs to no match.
    got = _rows(
        spark,
        """
        SELECT ts, flag FROM udf_prices MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES py_is_null(FIRST(price)) AS flag
          ALL ROWS PER MATCH WITH UNMATCHED ROWS
          PATTERN (B)
          DEFINE B AS py_plus1(price) > 8)""",
    )
    assert got == [(t, False if t * 7 % 10 + 1 > 8 else None) for t in range(40)]


def test_udf_over_a_navigation_in_measures_sees_null_like_a_sql_function(spark, prices):
    # PREV of the first row is NULL; the UDF is applied to that NULL, as IS NULL is.
    got = _rows(
        spark,
        """
        SELECT * FROM udf_prices MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES py_is_null(PREV(FIRST(price))) AS a, PREV(FIRST(price)) IS NULL AS b
          PATTERN (X)
          DEFINE X AS ts < 3)""",
    )
    assert got == [(False, False), (False, False), (True, True)]


def test_udfs_with_skip_till_any_match(spark, prices):
    _same_as_sql(
        spark,
        """
        SELECT * FROM udf_prices MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES A.ts AS a, {py}(B.ts) AS b, {pd}(B.price - A.price) AS d
          SKIP TILL ANY MATCH
          PATTERN (A B)
          WITHIN 4 ROWS
          DEFINE A AS {pd}(price) >= 8, B AS {py}(B.price) < A.price)""",
    )


def test_udf_in_define_over_another_variable_is_refused_by_name(spark, prices):
    with pytest.raises(AnalysisException) as e:
        spark.sql("""
            SELECT * FROM udf_prices MATCH_RECOGNIZE (
              ORDER BY ts MEASURES FIRST(ts) AS s
              PATTERN (A B)
              DEFINE B AS py_plus1(A.price) > price)""").collect()
    message = str(e.value)
    assert "PYTHON_UDF_IN_DEFINE" in message and "`py_plus1`" in message
    assert "DEFINE of `B`" in message and "reads A.price" in message


@pytest.mark.parametrize("udf", ["py_plus1", "pd_plus1"])
def test_udf_in_define_over_navigation_is_refused_with_the_alternative(spark, prices, udf):
    with pytest.raises(AnalysisException) as e:
        spark.sql(f"""
            SELECT * FROM udf_prices MATCH_RECOGNIZE (
              ORDER BY ts MEASURES FIRST(ts) AS s
              PATTERN (A B)
              DEFINE B AS {udf}(PREV(price)) < price)""").collect()
    message = str(e.value)
    assert f"`{udf}`" in message and f"PREV({udf}(price))" in message
    assert "INTERNAL_ERROR" not in message


def test_navigation_over_a_udf_in_define_is_the_supported_form(spark, prices):
    rows = _rows(
        spark,
        """
        SELECT * FROM udf_prices MATCH_RECOGNIZE (
          ORDER BY ts MEASURES FIRST(ts) AS s
          PATTERN (A B)
          DEFINE B AS PREV(py_plus1(price)) < py_plus1(price))""",
    )
    assert rows == _rows(
        spark,
        """
        SELECT * FROM udf_prices MATCH_RECOGNIZE (
          ORDER BY ts MEASURES FIRST(ts) AS s
          PATTERN (A B)
          DEFINE B AS PREV(price) < price)""",
    )


def test_udf_over_classifier_inside_navigation_is_refused(spark, prices):
    with pytest.raises(AnalysisException) as e:
        spark.sql("""
            SELECT * FROM udf_prices MATCH_RECOGNIZE (
              ORDER BY ts MEASURES FIRST(py_is_null(CLASSIFIER())) AS c
              PATTERN (A B)
              DEFINE B AS price > 0)""").collect()
    assert "PYTHON_UDF_OVER_PATTERN" in str(e.value) and "`py_is_null`" in str(e.value)
