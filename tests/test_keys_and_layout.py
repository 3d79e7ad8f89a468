"""PARTITION BY without ORDER BY (rows in any order, as Trino allows), and the ALL ROWS PER
MATCH layout when a key is named twice: partition columns, order columns, measures, then the
remaining columns, each key as often as the clause names it (Trino's layout)."""

from __future__ import annotations

from collections import Counter

import pytest

PREFILTER = "spark.sql.matchRecognize.prefilter"


def test_partition_by_without_order_by_over_a_filtering_cte(spark):
    # Trino's own example: the CTE filters its input.
    rows = spark.sql("""
        WITH t(a, b) AS (VALUES (1, 1)),
             u AS (SELECT * FROM t WHERE b = 1)
        SELECT * FROM u
          MATCH_RECOGNIZE (
            PARTITION BY a
            PATTERN (X)
            DEFINE X AS (b = 1))""").collect()
    assert [tuple(r) for r in rows] == [(1,)]


@pytest.mark.parametrize("mode", ["off", "auto", "on"])
def test_order_free_pattern_without_order_by_matches_a_reference(spark, mode):
    # Every row of the filtered input qualifies, so each partition of n rows has n // 2
    # matches of two rows whatever order its rows come in.
    spark.conf.set(PREFILTER, mode)
    try:
        sql = """
            WITH src AS (SELECT id % 5 AS k, id AS v FROM range(200)),
                 kept AS (SELECT * FROM src WHERE v % 3 <> 0)
            SELECT * FROM kept
              MATCH_RECOGNIZE (
                PARTITION BY k
                MEASURES count(*) AS n, MATCH_NUMBER() AS m
                PATTERN (X Y)
                DEFINE X AS v % 3 <> 0, Y AS v % 3 <> 0)"""
        got = Counter(tuple(r) for r in spark.sql(sql).collect())
    finally:
        spark.conf.unset(PREFILTER)
    sizes = Counter(v % 5 for v in range(200) if v % 3 != 0)
    expected = Counter((k, 2, m) for k, n in sizes.items() for m in range(1, n // 2 + 1))
    assert got == expected


_ONE_ROW = "(VALUES ('ordering', 'partitioning', 90)) AS t(id, part, value)"


def _all_rows(partition: str, order: str) -> str:
    return f"""
        SELECT * FROM {_ONE_ROW}
          MATCH_RECOGNIZE (
            {partition}
            ORDER BY {order}
            MEASURES CLASSIFIER() AS classy
            ALL ROWS PER MATCH
            PATTERN (A)
            DEFINE A AS true)"""


@pytest.mark.parametrize(
    "partition, order, columns, row",
    [
        (
            "PARTITION BY part",
            "id",
            ["part", "id", "classy", "value"],
            ("partitioning", "ordering", "A", 90),
        ),
        (
            "PARTITION BY part",
            "id ASC, id DESC",
            ["part", "id", "id", "classy", "value"],
            ("partitioning", "ordering", "ordering", "A", 90),
        ),
        (
            "PARTITION BY part",
            "id, id",
            ["part", "id", "id", "classy", "value"],
            ("partitioning", "ordering", "ordering", "A", 90),
        ),
        (
            "PARTITION BY part",
            "part, id",
            ["part", "part", "id", "classy", "value"],
            ("partitioning", "partitioning", "ordering", "A", 90),
        ),
        (
            "",
            "id, id",
            ["id", "id", "classy", "part", "value"],
            ("ordering", "ordering", "A", "partitioning", 90),
        ),
    ],
)
def test_all_rows_layout_repeats_a_key_named_twice(spark, partition, order, columns, row):
    df = spark.sql(_all_rows(partition, order))
    assert df.columns == columns
    assert [tuple(r) for r in df.collect()] == [row]


def test_a_repeated_key_can_still_be_selected_by_name(spark):
    rows = spark.sql(f"SELECT id, classy FROM ({_all_rows('', 'id, id')})").collect()
    assert [tuple(r) for r in rows] == [("ordering", "A")]


def test_one_row_per_match_repeats_a_partition_key_named_twice(spark):
    df = spark.sql(f"""
        SELECT * FROM {_ONE_ROW}
          MATCH_RECOGNIZE (
            PARTITION BY part, part
            ORDER BY id
            MEASURES CLASSIFIER() AS classy
            PATTERN (A)
            DEFINE A AS true)""")
    assert df.columns == ["part", "part", "classy"]
    assert [tuple(r) for r in df.collect()] == [("partitioning", "partitioning", "A")]
