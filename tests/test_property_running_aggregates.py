"""Running aggregates in DEFINE: random cases against the reference, the workloads whose
partial matches differ only by an aggregate's value (checked against the reference at
thousands of rows), and the limit on matching steps per row.

The automaton keeps each partial match's DEFINE aggregates as running state and merges
partial matches on it; the random cases (``reference/aggregate_cases.py``) are drawn so
that merges happen often. SMR_PROPERTY_CASES raises their number for a long run.
"""

from __future__ import annotations

import os
import sys
import threading

import pytest

from reference import rpr
from reference.aggregate_cases import generate
from result_compare import compare_rows
from spark_match_recognize.metrics import operator_metrics

CASES = int(os.environ.get("SMR_PROPERTY_CASES", "40"))
SEED_BASE = int(os.environ.get("SMR_PROPERTY_SEED", "20261121"))
STEPS = "spark.sql.matchRecognize.maxStepsPerRow"


@pytest.mark.parametrize("level", ["standard", "next_match"])
def test_random_running_aggregates_match_the_reference(spark, level):
    failures = []
    for i in range(CASES):
        case = generate(SEED_BASE + i, level)
        df = spark.sql(case.sql)
        assert df.columns == case.columns, case.sql
        diff = compare_rows([tuple(r) for r in df.collect()], [tuple(r) for r in case.rows], False)
        if diff is not None:
            failures.append(f"seed {SEED_BASE + i}:\n{case.sql}\n{diff}")
        if len(failures) >= 3:
            break
    assert not failures, "\n\n".join(failures)


def _reference(rows: list[dict], **kwargs) -> rpr.Result:
    """The reference over long partitions: its search nests a few generators per matched
    row, so it runs on a thread with a deep stack."""
    result: list = []

    def run():
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(200_000)
        try:
            result.append(rpr.run_partitioned(rows, **kwargs))
        except BaseException as e:  # handed to the test below
            result.append(e)
        finally:
            sys.setrecursionlimit(limit)

    size = threading.stack_size(1 << 30)
    try:
        thread = threading.Thread(target=run)
        thread.start()
    finally:
        threading.stack_size(size)
    thread.join()
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def _check(spark, sql: str, rows: list[dict], **kwargs) -> list[tuple]:
    df = spark.sql(sql)
    actual = [tuple(r) for r in df.collect()]
    expected = _reference(rows, **kwargs)
    assert df.columns == expected.columns
    diff = compare_rows(actual, [tuple(r) for r in expected.rows], False)
    assert diff is None, diff
    return actual


def _steps(df) -> int:
    return sum(m.metrics.get("matchingSteps", 0) for m in operator_metrics(df))


# A+ C with a running sum in A and C on one row in 500: every start row is a partial match
# whose sum differs from the others', until the first attempt's match covers it.
def _sum_then_rare_rows(n: int) -> list[dict]:
    return [
        {"g": "p", "ts": i, "price": (i * 37) % 11, "v": 7 if i % 500 == 499 else i % 7}
        for i in range(n)
    ]


SUM_THEN_RARE = """
    SELECT * FROM (SELECT 'p' AS g, id AS ts, (id * 37) % 11 AS price,
                          CASE WHEN id % 500 = 499 THEN 7 ELSE id % 7 END AS v
                   FROM range({rows}))
    MATCH_RECOGNIZE (
      PARTITION BY g ORDER BY ts
      MEASURES CLASSIFIER() AS cls, RUNNING sum(A.price) AS s, MATCH_NUMBER() AS m
      ALL ROWS PER MATCH
      PATTERN (A+ C)
      DEFINE A AS sum(A.price) >= 0, C AS v = 7
    )"""


def test_a_running_sum_before_a_rare_row_matches_the_reference_at_4000_rows(spark):
    rows = _sum_then_rare_rows(4000)
    actual = _check(
        spark,
        SUM_THEN_RARE.format(rows=4000),
        rows,
        partition_by=["g"],
        order_by=["ts"],
        pattern=rpr.parse_pattern("A+ C"),
        define={
            "A": lambda c: rpr.sql_compare(">=", c.sum("price", "A"), 0),
            "C": lambda c: c.col("v") == 7,
        },
        measures={
            "cls": lambda c: c.classifier(),
            "s": lambda c: c.sum("price", "A"),
            "m": lambda c: c.match_number(),
        },
        rows_per_match="all_show",
        columns=["g", "ts", "price", "v"],
    )
    assert len(actual) == 4000  # one match: every row (the last is a C)


def test_a_running_sum_before_a_rare_row_is_linear_in_the_rows(spark):
    """Steps per row stay flat from 5,000 to 20,000 rows: an attempt covered by the first
    attempt's match is dropped, and each test reads the running sum, not the rows."""
    sql = """
        SELECT * FROM (SELECT 'p' AS g, id AS ts, (id * 37) % 11 AS price,
                              CASE WHEN id % 500 = 499 THEN 7 ELSE id % 7 END AS v
                       FROM range({n}))
        MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY ts
          MEASURES count(*) AS n, sum(A.price) AS s
          PATTERN (A+ C)
          DEFINE A AS sum(A.price) >= 0, C AS v = 7
        )"""
    per_row = []
    for n in (5000, 20000):
        df = spark.sql(sql.format(n=n))
        # One match: every row, A's prices summed (the last row is the C).
        assert [tuple(r) for r in df.collect()] == [
            ("p", n, sum((i * 37) % 11 for i in range(n - 1)))
        ]
        per_row.append(_steps(df) / n)
    assert per_row[1] < 1.2 * per_row[0], per_row


# The bin-packing workload: each item goes into the bin (X) while the bin's running sum
# allows it, else it is left out (REST, excluded from the output).
def _bin_rows(partitions: int, per: int) -> list[dict]:
    return [
        {"g": i // per, "ts": i, "w": (i * 7919 + 13) % 10 + 1} for i in range(partitions * per)
    ]


BIN_PACKING = """
    SELECT * FROM (SELECT id DIV {per} AS g, id AS ts, (id * 7919 + 13) % 10 + 1 AS w
                   FROM range({rows}))
    MATCH_RECOGNIZE (
      PARTITION BY g ORDER BY ts
      MEASURES RUNNING sum(X.w) AS filled, RUNNING count(X.*) AS items, CLASSIFIER() AS cls
      ALL ROWS PER MATCH
      PATTERN ((X | {{- REST -}})+)
      DEFINE X AS sum(X.w) <= 20
    )"""


def test_bin_packing_matches_the_reference_over_ten_partitions_of_1000_rows(spark):
    rows = _bin_rows(10, 1000)
    _check(
        spark,
        BIN_PACKING.format(rows=10000, per=1000),
        rows,
        partition_by=["g"],
        order_by=["ts"],
        pattern=rpr.parse_pattern("(X | {- REST -})+"),
        define={"X": lambda c: rpr.sql_compare("<=", c.sum("w", "X"), 20)},
        measures={
            "filled": lambda c: c.sum("w", "X"),
            "items": lambda c: c.count("X"),
            "cls": lambda c: c.classifier(),
        },
        rows_per_match="all_show",
        columns=["g", "ts", "w"],
    )


def test_bin_packing_takes_a_few_steps_per_row(spark):
    sql = """
        SELECT * FROM (SELECT id DIV 1000 AS g, id AS ts, (id * 7919 + 13) % 10 + 1 AS w
                       FROM range(50000))
        MATCH_RECOGNIZE (
          PARTITION BY g ORDER BY ts
          MEASURES sum(X.w) AS filled, count(X.*) AS items
          PATTERN ((X | {- REST -})+)
          DEFINE X AS sum(X.w) <= 20
        )"""
    df = spark.sql(sql)
    assert len(df.collect()) == 50
    assert _steps(df) < 50 * 50000


# (A | B)* C where only the last row is a C and A reads FIRST(ts): no two partial matches
# share a state, so every start row stays open until the end.
NO_MERGE = """
    SELECT * FROM (SELECT 'p' AS g, id AS ts, CASE WHEN id = {last} THEN 2 ELSE id % 2 END AS v
                   FROM range({rows}))
    MATCH_RECOGNIZE (
      PARTITION BY g ORDER BY ts
      MEASURES count(*) AS n, count(A.*) AS a_rows
      PATTERN ((A | B)* C)
      DEFINE A AS v = 0 AND ts >= FIRST(ts), B AS v = 1, C AS v = 2
    )"""

NEXT_ROW = """
    SELECT count(*) AS matches, sum(n) AS mapped FROM (
      SELECT * FROM (SELECT 'p' AS g, id AS ts FROM range({rows}))
      MATCH_RECOGNIZE (
        PARTITION BY g ORDER BY ts
        MEASURES count(*) AS n
        AFTER MATCH SKIP TO NEXT ROW
        PATTERN (X+)
        DEFINE X AS ts >= 0
      ))"""

SUM_NEVER_RARE = """
    SELECT * FROM (SELECT 'p' AS g, id AS ts, id % 5 AS price, 0 AS v FROM range({rows}))
    MATCH_RECOGNIZE (
      PARTITION BY g ORDER BY ts
      MEASURES count(*) AS n
      PATTERN (A+ C)
      DEFINE A AS sum(A.price) >= 0, C AS v = 7
    )"""


@pytest.mark.parametrize(
    "query", [NO_MERGE, NEXT_ROW, SUM_NEVER_RARE], ids=["no_merge", "next_row", "sum_no_c"]
)
def test_work_growing_faster_than_the_rows_fails_naming_the_setting_and_partition(spark, query):
    with pytest.raises(Exception) as info:
        spark.sql(query.format(rows=50000, last=49999)).collect()
    message = str(info.value)
    assert STEPS in message and "PARTITION BY g = p" in message, message


def test_the_step_limit_can_be_raised_or_turned_off(spark):
    sql = NO_MERGE.format(rows=3000, last=2999)
    spark.conf.set(STEPS, "100")
    try:
        with pytest.raises(Exception, match=STEPS.replace(".", r"\.")):
            spark.sql(sql).collect()
        spark.conf.set(STEPS, "0")
        assert [tuple(r) for r in spark.sql(sql).collect()] == [("p", 3000, 1500)]
    finally:
        spark.conf.unset(STEPS)


def test_the_step_limit_must_not_be_negative(spark):
    with pytest.raises(Exception, match="must be 0"):
        spark.conf.set(STEPS, "-1")
