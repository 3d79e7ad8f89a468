"""Split matching: one large partition (or a key holding most rows) cut into ranges of the
order, each matched by its own task reading on into the next ranges, through spark.sql()
and the settings a user sets. Every query is also run with splitting off (one task per
partition) and must give the same rows; the random-case property test in
test_property_reference.py checks the same against the reference matcher."""

from __future__ import annotations

import pytest

from split_queries import (  # noqa: F401
    ENTRY_ROWS,
    MIN_BYTES,
    QUERIES,
    SKIP_QUERIES,
    SPLIT,
    SPLIT_NOTE,
    events,
    plan,
    ranges,
    same_rows_as_one_task,
    with_match_number,
)

pytestmark = pytest.mark.usefixtures("events", "ranges")

READS_BACK = {"one_row_with_navigation", "all_rows", "anchors"}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_one_partition_in_ranges_gives_the_rows_of_one_task(spark, name):
    operator = same_rows_as_one_task(spark, QUERIES[name])
    if name in READS_BACK:
        # PREV and `^` read the rows before each range's first: its neighbour's last rows.
        assert operator.metrics["neighbourRows"] > 0, operator.metrics


def test_matches_longer_than_a_range_read_several_ranges_on(spark):
    operator = same_rows_as_one_task(spark, QUERIES["long_runs"])
    # A run of 300 rows of v = 7 starts a match at each of its rows: the first ones read
    # past at least one whole range of 150 rows.
    assert operator.metrics["neighbourRows"] > 300, operator.metrics


@pytest.mark.adaptive("off")
def test_tasks_group_the_ranges_and_the_plan_says_how_many(spark):
    df = spark.sql(QUERIES["long_runs"])
    plan = df._jdf.queryExecution().executedPlan()
    assert "rangepartitioning" in plan.toString() and ", 32), REPARTITION_BY_NUM" in plan.toString()
    # 32 ranges (eight per task), two tasks per core of local[2]: four tasks.
    assert plan.outputPartitioning().numPartitions() == 4
    assert df.rdd.getNumPartitions() == 4


def test_skewed_and_small_keys_in_ranges(spark):
    sql = """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed, k ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)"""
    same_rows_as_one_task(spark, sql)


def test_auto_splits_a_large_query_without_partition_by(spark):
    spark.conf.set(SPLIT, "auto")
    df = spark.sql(QUERIES["one_row_with_navigation"])
    assert SPLIT_NOTE not in plan(df), "below split.minBytes the partition is one task"
    spark.conf.set(MIN_BYTES, "1")
    same_rows_as_one_task(spark, QUERIES["one_row_with_navigation"])
    keyed = QUERIES["one_row_with_navigation"].replace("ORDER BY ts", "PARTITION BY k ORDER BY ts")
    assert SPLIT_NOTE not in plan(spark.sql(keyed)), "auto leaves PARTITION BY queries alone"


def test_auto_leaves_partitioned_queries_to_on(spark):
    spark.conf.set(SPLIT, "auto")
    spark.conf.set(MIN_BYTES, "1")
    sql = """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)"""
    assert SPLIT_NOTE not in plan(spark.sql(sql))
    spark.conf.set(SPLIT, "on")
    same_rows_as_one_task(spark, sql)


@pytest.mark.parametrize("entry_rows", ["1024", "2"])
@pytest.mark.parametrize("name", sorted(SKIP_QUERIES))
def test_skip_modes_that_follow_the_match_before_split_exactly(spark, name, entry_rows):
    """Under PAST LAST ROW, TO FIRST and TO LAST a match begun in an earlier range may
    cover a range's first rows: each task finds where the one-task matcher enters its
    range (with windows of a few rows too, so that they grow and run out)."""
    spark.conf.set(ENTRY_ROWS, entry_rows)
    try:
        operator = same_rows_as_one_task(spark, SKIP_QUERIES[name])
    finally:
        spark.conf.unset(ENTRY_ROWS)
    assert operator.metrics["neighbourRows"] > 0, operator.metrics
    if name == "v_shape" and entry_rows == "1024":
        # The chains of V shapes meet within a few rows: no range reads its partition whole.
        assert operator.metrics["rangesReadFromStart"] == 0, operator.metrics


def test_chains_that_never_meet_read_the_partition_from_its_start(spark):
    """Runs of 300 equal rows are longer than windows of 2, 16 and 128 rows: a range inside
    one cannot tell from them where the match covering it began."""
    spark.conf.set(ENTRY_ROWS, "2")
    try:
        operator = same_rows_as_one_task(spark, SKIP_QUERIES["long_runs"])
    finally:
        spark.conf.unset(ENTRY_ROWS)
    assert operator.metrics["rangesReadFromStart"] > 0, operator.metrics


def test_a_skip_error_is_raised_as_in_one_task(spark):
    """TO FIRST of the first variable would find the same match again: the standard's error,
    raised by the task where that match starts, not by a range exploring where it enters."""
    sql = SKIP_QUERIES["to_first"].replace("SKIP TO FIRST B", "SKIP TO FIRST A")
    assert SPLIT_NOTE in plan(spark.sql(sql))
    with pytest.raises(Exception, match="cannot skip to first row of match"):
        spark.sql(sql).collect()


GAP_ANY_ROW = """
    SELECT * FROM split_events MATCH_RECOGNIZE (
      ORDER BY ts
      MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
      AFTER MATCH SKIP PAST LAST ROW
      PATTERN (A X*? C)
      DEFINE A AS v = 1, C AS v = 2 AND C.id - A.id > 40)"""


@pytest.mark.parametrize(
    "sql, reason",
    [
        (
            with_match_number(QUERIES["one_row_with_navigation"], "FIRST(MATCH_NUMBER()) AS m"),
            "MATCH_NUMBER() inside a measure's navigation or aggregate",
        ),
        (
            QUERIES["within"].replace("C.id > A.id + 2", "C.id > A.id + MATCH_NUMBER() % 3"),
            "MATCH_NUMBER() in DEFINE",
        ),
        # X is undefined: a match may stay open over any rows, so no rows before a range
        # could tell where the one-task matcher enters it.
        (GAP_ANY_ROW, "X may go on over any row, under AFTER MATCH SKIP PAST LAST ROW"),
    ],
    ids=["match_number_in_a_navigation", "match_number_in_define", "gap_any_row"],
)
def test_what_cannot_be_split_says_why_and_runs_one_task(spark, sql, reason):
    df = spark.sql(sql)
    assert f"one task per partition (not split: {reason})" in plan(df), plan(df)
    same_rows_as_one_task(spark, sql, split_expected=False)


def test_split_settings_are_checked(spark):
    with pytest.raises(Exception, match="split.mode"):
        spark.conf.set(SPLIT, "sometimes")
    with pytest.raises(Exception, match="split.minBytes"):
        spark.conf.set(MIN_BYTES, "0")
