"""count(DISTINCT x) (and min and max with DISTINCT) and aggregates with FILTER (WHERE ...)
in MEASURES and DEFINE, through spark.sql: the distinct non-NULL values of a match's rows,
compared as GROUP BY compares them, and the rows the filter keeps, RUNNING and FINAL in ALL
ROWS PER MATCH, under SKIP TILL ANY MATCH and over a stream too; other aggregates with
DISTINCT or FILTER are refused by name."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from pyspark.errors import AnalysisException

from sql_rows import sorted_rows
from streaming_harness import run_batch, run_stream

# A session of user u: home, list, home, (no page), item, buy; user v: home, buy.
VISITS = """
    SELECT * FROM VALUES ('u', 1, 'home', 1.5D), ('u', 2, 'list', -0.0D), ('u', 3, 'home', 0.0D),
                         ('u', 4, NULL, NULL), ('u', 5, 'item', 2.5D), ('u', 6, 'buy', 2.5D),
                         ('v', 1, 'home', 1.5D), ('v', 2, 'buy', 1.5D) AS v(uid, ts, page, x)"""


def test_count_distinct_in_measures_equals_group_by(spark):
    matched = sorted_rows(
        spark,
        f"""
        SELECT uid, pages, xs, n, low FROM ({VISITS}) MATCH_RECOGNIZE (
          PARTITION BY uid ORDER BY ts
          MEASURES count(DISTINCT page) AS pages, count(DISTINCT V.x) AS xs, count(*) AS n,
                   min(DISTINCT V.x) AS low
          PATTERN (V* B) DEFINE B AS page = 'buy')""",
    )
    grouped = sorted_rows(
        spark,
        f"""
        SELECT uid, count(DISTINCT page),
               count(DISTINCT x) FILTER (WHERE page IS NULL OR page <> 'buy'),
               count(*), min(x) FILTER (WHERE page IS NULL OR page <> 'buy')
        FROM ({VISITS}) GROUP BY uid""",
    )
    # -0.0 and 0.0 are one value; the row without a page counts in count(*) only.
    assert matched == grouped == [("u", 4, 3, 6, 0.0), ("v", 2, 1, 2, 1.5)]


def test_running_and_final_in_all_rows_per_match(spark):
    got = sorted_rows(
        spark,
        f"""
        SELECT uid, ts, r, f FROM ({VISITS}) MATCH_RECOGNIZE (
          PARTITION BY uid ORDER BY ts
          MEASURES RUNNING count(DISTINCT page) AS r, FINAL count(DISTINCT page) AS f
          ALL ROWS PER MATCH PATTERN (V* B) DEFINE B AS page = 'buy')""",
    )
    running = [1, 2, 2, 2, 3, 4]
    assert got == [("u", t, r, 4) for t, r in zip(range(1, 7), running, strict=True)] + [
        ("v", 1, 1, 2),
        ("v", 2, 2, 2),
    ]


def test_in_define_a_variable_ends_at_its_third_distinct_page(spark):
    got = sorted_rows(
        spark,
        f"""
        SELECT uid, n FROM ({VISITS}) MATCH_RECOGNIZE (
          PARTITION BY uid ORDER BY ts MEASURES count(*) AS n
          PATTERN (V+) DEFINE V AS count(DISTINCT V.page) <= 2)""",
    )
    assert got == [("u", 2), ("u", 4), ("v", 2)]


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_under_skip_till_any_match(spark, execution):
    got = sorted_rows(
        spark,
        f"""
        SELECT a, d, count(*) FROM ({VISITS}) MATCH_RECOGNIZE (
          PARTITION BY uid ORDER BY ts MEASURES A.ts AS a, count(DISTINCT X.page) AS d
          ONE ROW PER MATCH SKIP TILL ANY MATCH PATTERN (A X* B) WITHIN 10 ROWS
          DEFINE A AS page = 'home', B AS page = 'buy')
        WHERE uid = 'u' GROUP BY a, d""",
        execution,
    )
    # From ts 1, X is any subset of rows 2-5 (16); from ts 3, of rows 4-5 (4).
    assert got == [(1, 0, 2), (1, 1, 6), (1, 2, 6), (1, 3, 2), (3, 0, 2), (3, 1, 2)]


def test_filtered_aggregates_equal_group_by(spark):
    matched = sorted_rows(
        spark,
        f"""
        SELECT uid, homes, later, sx, l FROM ({VISITS}) MATCH_RECOGNIZE (
          PARTITION BY uid ORDER BY ts
          MEASURES count(*) FILTER (WHERE page = 'home') AS homes,
                   count(DISTINCT page) FILTER (WHERE ts > 1) AS later,
                   sum(V.x) FILTER (WHERE V.page <> 'list') AS sx,
                   collect_list(page) FILTER (WHERE page LIKE '%i%') AS l
          PATTERN (V* B) DEFINE B AS page = 'buy')""",
    )
    grouped = sorted_rows(
        spark,
        f"""
        SELECT uid, count(*) FILTER (WHERE page = 'home'),
               count(DISTINCT page) FILTER (WHERE ts > 1),
               sum(x) FILTER (WHERE page <> 'list' AND page <> 'buy'),
               collect_list(page) FILTER (WHERE page LIKE '%i%')
        FROM ({VISITS}) GROUP BY uid""",
    )
    assert matched == grouped == [("u", 2, 4, 4.0, ["list", "item"]), ("v", 1, 1, 1.5, [])]


def test_a_filtered_running_count_in_define(spark):
    got = sorted_rows(
        spark,
        f"""
        SELECT uid, n FROM ({VISITS}) MATCH_RECOGNIZE (
          PARTITION BY uid ORDER BY ts MEASURES count(*) AS n
          PATTERN (V+) DEFINE V AS count(*) FILTER (WHERE V.page = 'home') <= 1)""",
    )
    # u: home, list, then a second home ends the first match.
    assert got == [("u", 2), ("u", 4), ("v", 2)]


@pytest.mark.parametrize(
    ("aggregate", "word"),
    [
        ("sum(DISTINCT x)", "DISTINCT"),
        ("count(DISTINCT page, x)", "DISTINCT"),
        ("max_by(ts, x) FILTER (WHERE x > 0)", "FILTER"),
    ],
)
def test_other_aggregates_with_distinct_or_filter_are_refused_by_name(spark, aggregate, word):
    with pytest.raises(AnalysisException) as error:
        spark.sql(f"""
            SELECT * FROM ({VISITS}) MATCH_RECOGNIZE (
              PARTITION BY uid ORDER BY ts MEASURES {aggregate} AS a
              PATTERN (V+) DEFINE V AS true)""").collect()
    message = str(error.value)
    assert "MATCH_RECOGNIZE.UNSUPPORTED_FEATURE" in message and word in message, message


def test_a_stream_counting_distinct_values_equals_batch(spark, tmp_path):
    # a rises 1, 5, 7 and falls to 2 over pages x, y, x, z: A B+ C of 4 rows and 3 pages.
    start = datetime(2024, 1, 1)
    events = [
        (k, start + timedelta(seconds=t), v, p)
        for k, t, v, p in [
            ("a", 1, 1, "x"),
            ("a", 2, 5, "y"),
            ("a", 3, 7, "x"),
            ("a", 4, 2, "z"),
            ("z", 1000, 0, "q"),
        ]
    ]
    sql = """
        SELECT k, n, d FROM events MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts MEASURES count(*) AS n, count(DISTINCT p) AS d
          PATTERN (A B+ C) DEFINE B AS v > PREV(v), C AS v < PREV(v))"""
    schema = "k STRING, ts TIMESTAMP, v INT, p STRING"
    batch = sorted(run_batch(spark, schema, events, sql))
    streamed = run_stream(
        spark, tmp_path, schema, ["k", "ts", "v", "p"], [events[:2], events[2:]], sql
    )
    assert batch == [("a", 4, 3)]
    assert sorted(streamed.rows) == batch
