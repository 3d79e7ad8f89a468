"""The queries and fixtures of the split matching tests (test_split_*.py): 2,400 rows in one
order, cut into sixteen ranges with splitting on, and each query's rows compared with one
task's."""

from __future__ import annotations

import pytest

from result_compare import compare_rows
from spark_match_recognize import operator_metrics

SPLIT = "spark.sql.matchRecognize.split.mode"
MIN_BYTES = "spark.sql.matchRecognize.split.minBytes"
SPLIT_NOTE = "split into ranges matched in parallel"


@pytest.fixture(scope="module")
def events(spark):
    """2,400 rows in one order: v cycles with noise; runs of 300 rows where v stays 7 make
    matches that cross several ranges of 150 rows."""
    spark.sql(
        """SELECT CAST(id % 3 AS INT) AS k, CAST(IF(id < 2000, 0, 1) AS INT) AS skewed,
                  TIMESTAMP_SECONDS(1767225600 + id * 10) AS ts, id,
                  CAST(IF(pmod(id, 700) BETWEEN 300 AND 600, 7, pmod(hash(id), 6)) AS INT) AS v
           FROM range(2400)"""
    ).createOrReplaceTempView("split_events")
    yield "split_events"
    spark.catalog.dropTempView("split_events")


@pytest.fixture
def ranges(spark):
    """Sixteen ranges, splitting on."""
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    spark.conf.set(SPLIT, "on")
    yield
    spark.conf.unset(SPLIT)
    spark.conf.unset(MIN_BYTES)
    spark.conf.set("spark.sql.shuffle.partitions", partitions)


def plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def same_rows_as_one_task(spark, sql: str, split_expected: bool = True):
    """Runs `sql` split and not split; returns the split run's operator metrics."""
    df = spark.sql(sql)
    assert (SPLIT_NOTE in plan(df)) == split_expected, plan(df)
    split_rows = [tuple(r) for r in df.collect()]
    (operator,) = [o for o in operator_metrics(df) if o.operator == "MatchRecognizeExec"]
    mode = spark.conf.get(SPLIT)
    spark.conf.set(SPLIT, "off")
    try:
        whole = spark.sql(sql)
        assert SPLIT_NOTE not in plan(whole)
        whole_rows = [tuple(r) for r in whole.collect()]
    finally:
        spark.conf.set(SPLIT, mode)
    assert whole_rows, "the query should find matches"
    assert compare_rows(split_rows, whole_rows, False) is None, compare_rows(
        split_rows, whole_rows, False
    )
    return operator


QUERIES = {
    "one_row_with_navigation": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n, PREV(A.v, 2) AS before_a,
                   NEXT(C.v) AS after_c
          ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v <> 2 AND v >= PREV(v, 2) - 5, C AS v = 2 AND PREV(v) <> 2)""",
    "all_rows": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES CLASSIFIER() AS cls, RUNNING count(*) AS n, FIRST(A.id) AS a
          ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B{2,} C?)
          DEFINE A AS v < 3, B AS v = 7 OR v > PREV(v), C AS v = 0)""",
    "long_runs": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(S.id) AS s, LAST(R.id) AS r, count(R.v) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (S R+ E)
          DEFINE S AS v = 7, R AS v = 7, E AS v <> 7)""",
    "anchors": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, count(*) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (^ A* | B $)
          DEFINE A AS v < 5, B AS v >= 0)""",
    "within": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES A.id AS a, C.id AS c
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C) WITHIN INTERVAL '90' SECOND
          DEFINE A AS v = 3, C AS v = 4 AND C.id > A.id + 2)""",
}


SKIP_QUERIES = {
    # The default skip mode: each V ends where the next may start.
    "v_shape": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(STRT.id) AS s, LAST(DOWN.id) AS bottom, LAST(UP.id) AS e, count(*) AS n
          PATTERN (STRT DOWN+ UP+)
          DEFINE DOWN AS v < PREV(v), UP AS v > PREV(v))""",
    # Runs of 300 rows of v = 7: one match covers two whole ranges and more.
    "long_runs": QUERIES["long_runs"].replace("AFTER MATCH SKIP TO NEXT ROW", ""),
    "all_rows_to_last": QUERIES["all_rows"].replace(
        "AFTER MATCH SKIP TO NEXT ROW", "AFTER MATCH SKIP TO LAST B"
    ),
    "to_first": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, FIRST(B.id) AS b, LAST(C.id) AS c
          AFTER MATCH SKIP TO FIRST B
          PATTERN (A B+ C)
          DEFINE A AS v < 4, B AS v <> 5 AND v >= A.v, C AS v < PREV(v))""",
    "anchors": QUERIES["anchors"].replace("AFTER MATCH SKIP TO NEXT ROW", ""),
    # A gap whose condition reads the match (`A.v`) and, in one conjunct, the row alone
    # (`v <> 2`): how far a match begun before a window reaches is bounded by that conjunct.
    "gap_judged_in_part": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN (A X*? C)
          DEFINE A AS v = 1, X AS v <> 2 AND X.v >= A.v - 3, C AS v = 2 AND C.id - A.id > 4)""",
    "partitioned": """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed, k ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)""",
}

ENTRY_ROWS = "spark.sql.matchRecognize.internal.splitEntryRows"


def with_match_number(sql: str, measure: str = "MATCH_NUMBER() AS m") -> str:
    return sql.replace("MEASURES ", f"MEASURES {measure}, ", 1)
