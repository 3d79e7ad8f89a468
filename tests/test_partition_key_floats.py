"""PARTITION BY keys of type DOUBLE and FLOAT, through spark.sql: -0.0 and 0.0 are one
partition, as are NaNs, as they are one group of GROUP BY and one partition of a window,
under both semantics, every ANY MATCH execution, counting and over a stream."""

from datetime import datetime, timedelta

import pytest

from sql_rows import sorted_rows
from streaming_harness import run_batch, run_stream

# Key -0.0 then 0.0 (rising 1, 2, 3), two NaNs of different bits (sqrt(-1) and 0/0 under
# ANSI off would differ; double('NaN') and 'Infinity' - 'Infinity' are both NaN), then 1.5.
KEYED = """
    SELECT k, ts, TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, ts) AS t, v
    FROM VALUES (-0.0D, 1, 1), (0.0D, 2, 2), (-0.0D, 3, 3),
                (double('NaN'), 4, 5), (double('Infinity') - double('Infinity'), 5, 6),
                (1.5D, 6, 7) AS e(k, ts, v)"""


def test_minus_zero_and_zero_are_one_partition_as_in_group_by(spark):
    groups = sorted_rows(spark, f"SELECT k, count(*) FROM ({KEYED}) GROUP BY k")
    matched = sorted_rows(
        spark,
        f"""
        SELECT n FROM ({KEYED}) MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES count(*) AS n
          PATTERN (A B*) DEFINE B AS v > PREV(v))""",
    )
    assert sorted(n for _, n in groups) == sorted(n for (n,) in matched) == [1, 2, 3]


def test_all_rows_per_match_numbers_the_rows_of_one_partition(spark):
    got = sorted_rows(
        spark,
        f"""
        SELECT ts, m, r FROM ({KEYED}) MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES MATCH_NUMBER() AS m, RUNNING count(*) AS r
          ALL ROWS PER MATCH PATTERN (A B*) DEFINE B AS v > PREV(v))""",
    )
    assert got == [(1, 1, 1), (2, 1, 2), (3, 1, 3), (4, 1, 1), (5, 1, 2), (6, 1, 1)]


def test_float_keys_and_doubles_inside_a_struct(spark):
    got = sorted_rows(
        spark,
        f"""
        SELECT n FROM (SELECT CAST(k AS FLOAT) AS f, named_struct('k', k, 'g', 1) AS s, ts, v
                       FROM ({KEYED}))
        MATCH_RECOGNIZE (PARTITION BY f, s ORDER BY ts MEASURES count(*) AS n
          PATTERN (A B*) DEFINE B AS v > PREV(v))""",
    )
    assert got == [(1,), (2,), (3,)]


ANY_MATCH = f"""
    SELECT a, c FROM ({KEYED}) MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY t MEASURES A.ts AS a, C.ts AS c
      ONE ROW PER MATCH SKIP TILL ANY MATCH
      PATTERN (A B C) WITHIN 10 ROWS
      DEFINE B AS B.v > A.v, C AS C.v > B.v)"""


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_any_match_under_every_execution(spark, execution):
    # Only the -0.0/0.0 partition has three rising rows.
    assert sorted_rows(spark, ANY_MATCH, execution) == [(1, 3)]


def test_counting_without_building_the_matches(spark):
    assert sorted_rows(spark, f"SELECT count(*) FROM ({ANY_MATCH})") == [(1,)]


@pytest.mark.parametrize("execution", [None, "tree", "joins"])
def test_an_equality_between_doubles_of_two_rows_holds_for_minus_zero_and_zero(spark, execution):
    # B's x equals A's as SQL's = says: (-0.0, 0.0), (-0.0, 0.0 later), (0.0, 0.0), NaN = NaN.
    sql = """
        SELECT a, b FROM (
          SELECT 1 AS p, TIMESTAMP'2024-01-01' + make_interval(0, 0, 0, 0, 0, 0, ts) AS t, ts, x
          FROM VALUES (1, -0.0D), (2, 0.0D), (3, double('NaN')),
                      (4, double('Infinity') - double('Infinity')), (5, 0.0D) AS e(ts, x))
        MATCH_RECOGNIZE (PARTITION BY p ORDER BY t MEASURES A.ts AS a, B.ts AS b
          ONE ROW PER MATCH SKIP TILL ANY MATCH PATTERN (A B) WITHIN 10 ROWS
          DEFINE B AS B.x = A.x)"""
    expected = [(1, 2), (1, 5), (2, 5), (3, 4)]
    assert sorted_rows(spark, sql, execution) == expected
    assert sorted_rows(spark, f"SELECT count(*) FROM ({sql})", execution) == [(len(expected),)]


def test_a_stream_partitioned_by_a_double_key_equals_batch(spark, tmp_path):
    # -0.0/0.0 rise 1, 2, 3 then fall: A B+ C of 4 rows. The last row, of another key far
    # later, moves the watermark past every other row.
    start = datetime(2024, 1, 1)
    events = [
        (k, start + timedelta(seconds=t), v)
        for k, t, v in [(-0.0, 1, 1), (0.0, 2, 2), (-0.0, 3, 3), (0.0, 4, 0), (9.0, 1000, 0)]
    ]
    schema = "k DOUBLE, ts TIMESTAMP, v INT"
    sql = """
        SELECT n FROM events MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES count(*) AS n
          PATTERN (A B+ C) DEFINE B AS v > PREV(v), C AS v < PREV(v))"""
    batch = sorted(run_batch(spark, schema, events, sql))
    streamed = run_stream(spark, tmp_path, schema, ["k", "ts", "v"], [events[:2], events[2:]], sql)
    assert batch == [(4,)]
    assert sorted(streamed.rows) == batch


def test_a_partition_split_into_ranges_keeps_minus_zero_and_zero_together(spark):
    # One key, written -0.0 and 0.0 by turns, holds 2,000 rising rows: split into sixteen
    # ranges, it is still one match of them all, as with splitting off.
    sql = """
        SELECT k, n FROM (SELECT IF(id % 2 = 0, -0.0D, 0.0D) AS k, id AS ts, id AS v
                          FROM range(2000))
        MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES count(*) AS n
          PATTERN (A B*) DEFINE B AS v > PREV(v))"""
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    try:
        for mode in ("on", "off"):
            spark.conf.set("spark.sql.matchRecognize.split.mode", mode)
            df = spark.sql(sql)
            plan = df._jdf.queryExecution().executedPlan().toString()
            assert ("split into ranges matched in parallel" in plan) == (mode == "on"), plan
            assert [n for _, n in sorted_rows(spark, sql)] == [2000], mode
    finally:
        spark.conf.unset("spark.sql.matchRecognize.split.mode")
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
