"""Split matching: one large partition (or a key holding most rows) cut into ranges of the
order, each matched by its own task reading on into the next ranges, through spark.sql()
and the settings a user sets. Every query is also run with splitting off (one task per
partition) and must give the same rows; the random-case property test in
test_property_reference.py checks the same against the reference matcher."""

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
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    spark.conf.set(SPLIT, "on")
    yield
    spark.conf.unset(SPLIT)
    spark.conf.unset(MIN_BYTES)
    spark.conf.set("spark.sql.shuffle.partitions", "4")


def _plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def _same_rows_as_one_task(spark, sql: str, split_expected: bool = True):
    """Runs `sql` split and not split; returns the split run's operator metrics."""
    df = spark.sql(sql)
    assert (SPLIT_NOTE in _plan(df)) == split_expected, _plan(df)
    split_rows = [tuple(r) for r in df.collect()]
    (operator,) = [o for o in operator_metrics(df) if o.operator == "MatchRecognizeExec"]
    mode = spark.conf.get(SPLIT)
    spark.conf.set(SPLIT, "off")
    try:
        whole = spark.sql(sql)
        assert SPLIT_NOTE not in _plan(whole)
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


READS_BACK = {"one_row_with_navigation", "all_rows", "anchors"}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_one_partition_in_ranges_gives_the_rows_of_one_task(spark, events, ranges, name):
    operator = _same_rows_as_one_task(spark, QUERIES[name])
    if name in READS_BACK:
        # PREV and `^` read the rows before each range's first: its neighbour's last rows.
        assert operator.metrics["neighbourRows"] > 0, operator.metrics


def test_matches_longer_than_a_range_read_several_ranges_on(spark, events, ranges):
    operator = _same_rows_as_one_task(spark, QUERIES["long_runs"])
    # A run of 300 rows of v = 7 starts a match at each of its rows: the first ones read
    # past at least one whole range of 150 rows.
    assert operator.metrics["neighbourRows"] > 300, operator.metrics


@pytest.mark.adaptive("off")
def test_tasks_group_the_ranges_and_the_plan_says_how_many(spark, events, ranges):
    df = spark.sql(QUERIES["long_runs"])
    plan = df._jdf.queryExecution().executedPlan()
    assert "rangepartitioning" in plan.toString() and ", 32), REPARTITION_BY_NUM" in plan.toString()
    # 32 ranges (eight per task), two tasks per core of local[2]: four tasks.
    assert plan.outputPartitioning().numPartitions() == 4
    assert df.rdd.getNumPartitions() == 4


def test_skewed_and_small_keys_in_ranges(spark, events, ranges):
    sql = """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed, k ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c, count(*) AS n
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)"""
    _same_rows_as_one_task(spark, sql)


def test_auto_splits_a_large_query_without_partition_by(spark, events, ranges):
    spark.conf.set(SPLIT, "auto")
    df = spark.sql(QUERIES["one_row_with_navigation"])
    assert SPLIT_NOTE not in _plan(df), "below split.minBytes the partition is one task"
    spark.conf.set(MIN_BYTES, "1")
    _same_rows_as_one_task(spark, QUERIES["one_row_with_navigation"])
    keyed = QUERIES["one_row_with_navigation"].replace("ORDER BY ts", "PARTITION BY k ORDER BY ts")
    assert SPLIT_NOTE not in _plan(spark.sql(keyed)), "auto leaves PARTITION BY queries alone"


def test_auto_leaves_partitioned_queries_to_on(spark, events, ranges):
    spark.conf.set(SPLIT, "auto")
    spark.conf.set(MIN_BYTES, "1")
    sql = """
        SELECT * FROM split_events MATCH_RECOGNIZE (
          PARTITION BY skewed ORDER BY ts
          MEASURES FIRST(A.id) AS a, LAST(C.id) AS c
          AFTER MATCH SKIP TO NEXT ROW
          PATTERN (A B* C)
          DEFINE A AS v = 1, B AS v > PREV(v) OR v = 7, C AS v = 2)"""
    assert SPLIT_NOTE not in _plan(spark.sql(sql))
    spark.conf.set(SPLIT, "on")
    _same_rows_as_one_task(spark, sql)


@pytest.mark.parametrize(
    "change, reason",
    [
        ("AFTER MATCH SKIP PAST LAST ROW", "AFTER MATCH SKIP PAST LAST ROW needs the match before"),
        ("AFTER MATCH SKIP TO LAST C", "AFTER MATCH SKIP TO LAST C needs the match before"),
        ("MATCH_NUMBER", "MATCH_NUMBER()"),
    ],
)
def test_what_cannot_be_split_says_why_and_runs_one_task(spark, events, ranges, change, reason):
    sql = QUERIES["one_row_with_navigation"]
    if change == "MATCH_NUMBER":
        sql = sql.replace("count(*) AS n,", "count(*) AS n, MATCH_NUMBER() AS m,")
    else:
        sql = sql.replace("AFTER MATCH SKIP TO NEXT ROW", change)
    df = spark.sql(sql)
    assert f"one task per partition (not split: {reason})" in _plan(df), _plan(df)
    _same_rows_as_one_task(spark, sql, split_expected=False)


def test_with_unmatched_rows_is_not_split(spark, events, ranges):
    sql = QUERIES["all_rows"].replace(
        "ALL ROWS PER MATCH", "ALL ROWS PER MATCH WITH UNMATCHED ROWS"
    )
    assert "not split: WITH UNMATCHED ROWS" in _plan(spark.sql(sql))


def test_split_settings_are_checked(spark):
    with pytest.raises(Exception, match="split.mode"):
        spark.conf.set(SPLIT, "sometimes")
    with pytest.raises(Exception, match="split.minBytes"):
        spark.conf.set(MIN_BYTES, "0")
