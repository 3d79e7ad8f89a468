"""The one shuffle of a SKIP TILL ANY MATCH plan, through spark.sql(): on a small input it
runs in one task whatever spark.sql.shuffle.partitions says, and over an input cached with
`df.cache()` it is still executed once for every variable of the pattern under adaptive
execution; the rows are those of the former choice (spark.sql.shuffle.partitions tasks).
Under both executions: the join operators' four leaves read the one exchange (three reuse
it), the one-pass tree reads it once."""

from __future__ import annotations

import re

import pytest

TARGET = "spark.sql.matchRecognize.targetRowsPerTask"
EXECUTION = "spark.sql.matchRecognize.cepExecution"
# The exchanges each execution reuses on top of the one it runs.
REUSED = {"joins": 3, "tree": 0}

TICKS = """
    SELECT element_at(array('AAPL', 'AMZN', 'AVID', 'GOOG'), CAST(id % 4 AS INT) + 1) AS sym,
           TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, 0, (id DIV 4) * 60) AS ts,
           CAST(100 + pmod(hash(id, 1), 2000) / 100.0 AS DOUBLE) AS peak
    FROM range(800)"""

QUERY = """
SELECT * FROM {view} MATCH_RECOGNIZE (
  PARTITION BY sym ORDER BY ts
  MEASURES A.ts AS a_ts, D.ts AS d_ts, D.peak - A.peak AS gain
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B C D) WITHIN INTERVAL '10' MINUTE
  DEFINE B AS B.peak > A.peak, C AS C.peak > B.peak, D AS D.peak > C.peak + 1
)"""


@pytest.fixture()
def many_partitions(spark):
    old = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    spark.sql(TICKS).createOrReplaceTempView("task_ticks")
    yield
    spark.conf.set("spark.sql.shuffle.partitions", old)
    spark.conf.unset(TARGET)


def _run(spark, view: str) -> tuple[list, str]:
    """The sorted rows and the final executed plan's text."""
    df = spark.sql(QUERY.format(view=view))
    rows = sorted(map(tuple, df.collect()))
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    return rows, plan.split("== Initial Plan ==")[0]


def _shuffles(plan: str) -> list[int]:
    """The partitions of each shuffle the plan executes (a reused one is not executed)."""
    return [
        int(n)
        for n in re.findall(r"^[\s:+\-|]*Exchange hashpartitioning\(.*?, (\d+)\)", plan, re.M)
    ]


def _former_rows(spark, view: str) -> list:
    spark.conf.set(TARGET, "0")
    try:
        return _run(spark, view)[0]
    finally:
        spark.conf.unset(TARGET)


@pytest.fixture(params=sorted(REUSED))
def execution(request, spark):
    spark.conf.set(EXECUTION, request.param)
    yield request.param
    spark.conf.unset(EXECUTION)


def _check_operators(plan: str, execution: str) -> None:
    assert plan.count("ReusedExchange") == REUSED[execution], plan
    assert ("CepTreeMatch" in plan) == (execution == "tree"), plan


def test_a_small_input_runs_in_one_task(spark, many_partitions, execution):
    expected = _former_rows(spark, "task_ticks")
    assert expected, "the case must match something"
    rows, plan = _run(spark, "task_ticks")
    assert _shuffles(plan) == [1], plan
    _check_operators(plan, execution)
    assert rows == expected


def test_the_former_choice_is_spark_sql_shuffle_partitions(spark, many_partitions):
    spark.conf.set(TARGET, "0")
    _, plan = _run(spark, "task_ticks")
    assert _shuffles(plan) == [200], plan


# Adaptive execution used to run a cached input's stage once per pattern variable; this
# asserts the one shuffle under it.
@pytest.mark.adaptive("on")
def test_a_cached_input_is_shuffled_once(spark, many_partitions, execution):
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    expected = _former_rows(spark, "task_ticks")
    # A plan of its own: Spark would serve the queries over task_ticks from the cache too.
    cached = spark.sql(TICKS).where("peak IS NOT NULL").cache()
    try:
        cached.count()
        cached.createOrReplaceTempView("task_ticks_cached")
        rows, plan = _run(spark, "task_ticks_cached")
        assert "InMemoryTableScan" in plan
        assert _shuffles(plan) == [1], plan
        _check_operators(plan, execution)
        assert rows == expected
    finally:
        cached.unpersist()
