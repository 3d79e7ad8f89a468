"""Patterns whose partial matches cannot merge keep one per start row until the partition
ends: their state is quadratic in the rows. They must finish within the session's default
driver memory at 12k rows, and past spark.sql.matchRecognize.maxMatcherBytes fail with an
error naming that key and the partition -- never an OutOfMemoryError, which would take the
SparkContext down with it.
"""

from __future__ import annotations

import pytest

KEY = "spark.sql.matchRecognize.maxMatcherBytes"
STEPS = "spark.sql.matchRecognize.maxStepsPerRow"
ROWS = 12000


@pytest.fixture(autouse=True, scope="module")
def _no_step_limit(spark):
    """These patterns' work is quadratic too, and the limit on steps per row stops them
    first at these sizes (tests/test_property_running_aggregates.py tests that); here the
    memory is under test, so the step limit is off."""
    spark.conf.set(STEPS, "0")
    yield
    spark.conf.unset(STEPS)


# (A | B)* C where only the last row is a C: every start row stays open until the end, and
# A's DEFINE reads FIRST(ts), which differs per start row, so no two partial matches merge.
NO_MERGE = """
    SELECT * FROM (SELECT 'p' AS g, id AS ts,
                          CASE WHEN id = {last} THEN 2 ELSE id % 2 END AS v
                   FROM range({rows}))
    MATCH_RECOGNIZE (
      PARTITION BY g
      ORDER BY ts
      MEASURES count(*) AS n, FIRST(ts) AS first_ts, count(A.*) AS a_rows
      PATTERN ((A | B)* C)
      DEFINE A AS v = 0 AND ts >= FIRST(ts), B AS v = 1, C AS v = 2
    )"""

# Every start row matches up to the last row, and none is decided before that row arrives.
NEXT_ROW = """
    SELECT count(*) AS matches, sum(n) AS mapped, min(n) AS shortest FROM (
      SELECT * FROM (SELECT 'p' AS g, id AS ts FROM range({rows}))
      MATCH_RECOGNIZE (
        PARTITION BY g
        ORDER BY ts
        MEASURES count(*) AS n
        AFTER MATCH SKIP TO NEXT ROW
        PATTERN (X+)
        DEFINE X AS ts >= 0
      ))"""


# The same with ALL ROWS PER MATCH: the output is quadratic (n (n + 1) / 2 rows), decided at
# the last row; each match's rows are handed out before the next match is decided, so they
# are never all held at once.
NEXT_ROW_ALL_ROWS = """
    SELECT count(*) AS rows_out, max(m) AS matches, sum(k) AS running_counts FROM (
      SELECT * FROM (SELECT 'p' AS g, id AS ts FROM range({rows}))
      MATCH_RECOGNIZE (
        PARTITION BY g
        ORDER BY ts
        MEASURES MATCH_NUMBER() AS m, count(*) AS k
        ALL ROWS PER MATCH
        AFTER MATCH SKIP TO NEXT ROW
        PATTERN (X+)
        DEFINE X AS ts >= 0
      ))"""
ALL_ROWS = 4000


def _run(spark, sql: str, rows: int = ROWS) -> list[tuple]:
    return [tuple(r) for r in spark.sql(sql.format(rows=rows, last=rows - 1)).collect()]


def test_partial_matches_that_cannot_merge_finish(spark):
    # The only match starts at the first row and takes every row; the other start rows are
    # skipped by it.
    assert _run(spark, NO_MERGE) == [("p", ROWS, 0, ROWS // 2)]


def test_skip_to_next_row_over_a_match_to_the_end_finishes(spark):
    assert _run(spark, NEXT_ROW) == [(ROWS, ROWS * (ROWS + 1) // 2, 1)]


def test_all_rows_of_matches_decided_together_are_handed_out_one_match_at_a_time(spark):
    n = ALL_ROWS
    # Match i (from row i) has n - i rows; its running count(*) goes 1 .. n - i.
    assert _run(spark, NEXT_ROW_ALL_ROWS, rows=n) == [
        (n * (n + 1) // 2, n, n * (n + 1) * (n + 2) // 6)
    ]


@pytest.mark.parametrize("query", [NO_MERGE, NEXT_ROW], ids=["no_merge", "next_row"])
def test_past_the_byte_limit_the_query_fails_naming_the_key_and_partition(spark, query):
    spark.conf.set(KEY, "1m")
    try:
        with pytest.raises(Exception) as info:
            _run(spark, query, rows=5000)
    finally:
        spark.conf.unset(KEY)
    message = str(info.value)
    assert KEY in message and "PARTITION BY g = p" in message, message
    assert "OutOfMemoryError" not in message
    # The session is still usable, and with the default limit the same query answers.
    assert _run(spark, NEXT_ROW, rows=100) == [(100, 100 * 101 // 2, 1)]


def test_the_limit_must_not_be_negative(spark):
    with pytest.raises(Exception, match="must be 0"):
        spark.conf.set(KEY, "-1")
