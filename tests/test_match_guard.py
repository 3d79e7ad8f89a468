"""The guard on top of every SKIP TILL ANY MATCH plan, through spark.sql(): past
spark.sql.matchRecognize.maxMatchesPerPartition matches of one key the query fails with an
error naming the key and the setting; its metrics count the matches and keys; EXPLAIN
FORMATTED shows how the plan was chosen as a block of its own.
"""

from __future__ import annotations

import pytest

from spark_match_recognize import operator_metrics

MAX_MATCHES = "spark.sql.matchRecognize.maxMatchesPerPartition"
EXECUTION = "spark.sql.matchRecognize.cepExecution"


@pytest.fixture(scope="module")
def guard_events(spark):
    # Per key: a row of kind 'a' then 'b' every second, alternately; every (a, b) pair in
    # order within the window is a match.
    spark.range(0, 120).selectExpr(
        "CASE WHEN id < 60 THEN 'p' ELSE 'q' END AS k",
        "timestamp_seconds(id) AS ts",
        "CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END AS e",
    ).createOrReplaceTempView("guard_events")
    yield
    spark.catalog.dropTempView("guard_events")


def _query(partition: str = "PARTITION BY k") -> str:
    return f"""
        SELECT * FROM guard_events MATCH_RECOGNIZE (
          {partition} ORDER BY ts
          MEASURES A.ts AS a_ts, B.ts AS b_ts
          SKIP TILL ANY MATCH
          PATTERN (A B)
          WITHIN INTERVAL '10' SECOND
          DEFINE A AS e = 'a', B AS e = 'b'
        )"""


@pytest.fixture(params=["tree", "joins"])
def execution(request, spark):
    spark.conf.set(EXECUTION, request.param)
    yield request.param
    spark.conf.unset(EXECUTION)
    spark.conf.unset(MAX_MATCHES)


def test_within_the_limit_the_metrics_count_matches_and_keys(spark, guard_events, execution):
    df = spark.sql(_query())
    rows = df.collect()
    # 30 'a' rows a key; each pairs with the 'b' rows 1, 3, 5, 7, 9 s later (fewer at the end).
    assert len(rows) == 2 * sum(min(5, 30 - i) for i in range(30))
    guard = next(op for op in operator_metrics(df) if op.kind == "MatchGuard")
    assert guard.operator == "MatchGuardExec"
    assert guard.metrics["numOutputRows"] == len(rows)
    assert guard.metrics["numKeys"] == 2


def test_past_the_limit_the_error_names_the_key_and_the_setting(spark, guard_events, execution):
    spark.conf.set(MAX_MATCHES, "20")
    with pytest.raises(Exception) as err:
        spark.sql(_query()).collect()
    message = str(err.value)
    assert "more than 20 matches for partition key (k=" in message
    assert "spark.sql.matchRecognize.maxMatchesPerPartition" in message


def test_past_the_limit_without_partition_by_the_error_says_so(spark, guard_events, execution):
    spark.conf.set(MAX_MATCHES, "20")
    with pytest.raises(Exception) as err:
        spark.sql(_query(partition="")).collect()
    assert "more than 20 matches for the input (no PARTITION BY)" in str(err.value)


def test_explain_formatted_shows_the_plan_report_as_a_block(spark, guard_events, execution):
    text = spark.sql("EXPLAIN FORMATTED " + _query()).collect()[0][0]
    block = text[text.index("MatchGuard\n") :].split("\n\n")[0].splitlines()
    assert block[2] == "Limit: 100000000 matches per partition key in one task", block
    assert block[3] == "Plan:", block
    report = block[4:]
    assert report[0].startswith(f"  cepExecution={execution} (requested) joinOrder="), report
    assert any(line.startswith("  rows per window: A ") for line in report), report
    assert any(line.startswith("  selectivity: A~B ") for line in report), report
    # The one-line summary stays on the node's line in the tree of plain EXPLAIN.
    plain = spark.sql("EXPLAIN " + _query()).collect()[0][0]
    line = next(x for x in plain.splitlines() if "MatchGuard" in x)
    assert "rows per window: A " in line and f"cepExecution={execution}" in line
