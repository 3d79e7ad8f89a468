"""Queries over cached inputs under adaptive execution (Spark's default, on in the test
session): the query must finish. A column the matcher does not need is pruned in the
logical plan, so each re-planning pass links the cached input's stage back to the same
logical node instead of planning the stage anew forever."""

from __future__ import annotations

import threading

import pytest
from pyspark import InheritableThread

# Cached inputs under adaptive execution: its re-planning passes must link the cached stage
# back to its logical node, the subject of this module.
pytestmark = pytest.mark.adaptive("on")

TIMEOUT_SECONDS = 180


def _collect_within(spark, sql: str, timeout: float = TIMEOUT_SECONDS) -> list:
    """The query's rows; fails (and cancels the query's jobs) when it does not finish."""
    sc = spark.sparkContext
    group = f"smr-timeout-{threading.get_ident()}-{abs(hash(sql))}"
    result: dict = {}

    def run() -> None:
        sc.setJobGroup(group, "MATCH_RECOGNIZE test with a timeout", interruptOnCancel=True)
        try:
            result["rows"] = spark.sql(sql).collect()
        except Exception as e:  # reported below
            result["error"] = e

    worker = InheritableThread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        sc.cancelJobGroup(group)
        pytest.fail(f"query did not finish within {timeout:.0f}s: {sql}")
    if "error" in result:
        raise result["error"]
    return result["rows"]


@pytest.fixture(scope="module")
def cached(spark):
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    df = spark.sql(
        "SELECT CAST(id AS INT) ts, CAST(id * 7 % 10 AS INT) price, 1 AS unused FROM range(100)"
    ).cache()
    df.count()
    df.createOrReplaceTempView("cached_prices")
    yield "cached_prices"
    df.unpersist()


def _reference(spark, sql: str) -> list:
    """The same query over the input as an uncached view."""
    spark.sql(
        "SELECT CAST(id AS INT) ts, CAST(id * 7 % 10 AS INT) price, 1 AS unused FROM range(100)"
    ).createOrReplaceTempView("uncached_prices")
    return sorted(map(tuple, spark.sql(sql.replace("cached_prices", "uncached_prices")).collect()))


def test_standard_semantics_over_a_cached_input_with_an_unused_column(spark, cached):
    sql = """
        SELECT * FROM cached_prices MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES FIRST(ts) AS start, LAST(price) AS top
          PATTERN (A B)
          DEFINE B AS price > PREV(price))"""
    rows = _collect_within(spark, sql)
    # ts runs 0..99 with price = ts * 7 % 10: a rise from each ts ≡ 0, 3, 6 (mod 10) to the next.
    assert sorted(map(tuple, rows)) == sorted(
        (t, (t + 1) * 7 % 10) for t in range(100) if t % 10 in (0, 3, 6)
    )
    assert sorted(map(tuple, rows)) == _reference(spark, sql)
    # The pruning is in the optimized plan: the matcher's input reads ts and price only.
    plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString().splitlines()
    below = next(i for i, line in enumerate(plan) if "MatchRecognize" in line) + 1
    assert "Project [ts#" in plan[below] and "unused" not in plan[below], plan


def test_partitioned_and_all_rows_over_a_cached_input(spark, cached):
    sql = """
        SELECT * FROM cached_prices MATCH_RECOGNIZE (
          PARTITION BY ts % 3
          ORDER BY ts
          MEASURES CLASSIFIER() AS cls
          ALL ROWS PER MATCH
          PATTERN (A B)
          DEFINE B AS price > PREV(price))"""
    rows = _collect_within(spark, sql)
    assert rows and sorted(map(tuple, rows)) == _reference(spark, sql)


def test_skip_till_any_match_over_a_cached_input(spark, cached):
    sql = """
        SELECT * FROM cached_prices MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES A.ts AS a, B.ts AS b
          SKIP TILL ANY MATCH
          PATTERN (A B)
          WITHIN 3 ROWS
          DEFINE A AS price >= 7, B AS B.price < A.price)"""
    rows = _collect_within(spark, sql)
    price = {t: t * 7 % 10 for t in range(100)}
    expected = sorted(
        (a, b)
        for a in range(100)
        for b in range(a + 1, min(a + 3, 100))
        if price[a] >= 7 and price[b] < price[a]
    )
    assert sorted(map(tuple, rows)) == expected
