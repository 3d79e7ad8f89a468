"""Differential property test for patterns planned together: random groups of random SKIP
TILL ANY MATCH patterns (those of the ANY MATCH property test's generator, every form)
over one random input, as a UNION ALL, must return the rows of the same union with every
pattern planned alone (spark.sql.matchRecognize.planPatternsTogether = false), which that
property test checks against the brute-force reference. Some patterns of a group share
its PARTITION BY and window kind and are planned together, the others alone beside them;
each group runs under a join-order algorithm in rotation, so the trees, and what they
share, differ from group to group.

Quick profile by default; SMR_GROUP_CASES=100 (and SMR_PROPERTY_SEED) for a long run.
"""

from __future__ import annotations

import datetime
import os
import random

import pytest

from reference.cep_random_cases import generate
from result_compare import compare_rows

GROUPS = int(os.environ.get("SMR_GROUP_CASES", "6"))
SEED_BASE = int(os.environ.get("SMR_PROPERTY_SEED", "20261127"))
TOGETHER = "spark.sql.matchRecognize.planPatternsTogether"
ORDER_CONF = "spark.sql.matchRecognize.joinOrder"
ALGORITHMS = ("auto", "trivial", "greedy", "dp_bushy", "zstream", "dp_left_deep")
BASE = datetime.datetime(2024, 1, 1)


def _input(spark, rng: random.Random) -> None:
    rows = []
    for k in (1, 2):
        minute = 0
        for _ in range(rng.randint(25, 45)):
            minute += rng.choice([0, 1, 1, 1, 2, 3])
            ts = None if rng.random() < 0.03 else BASE + datetime.timedelta(minutes=minute)
            v = None if rng.random() < 0.05 else rng.randint(0, 9)
            rows.append((len(rows) + 1, k, ts, v, rng.choice("abc")))
    rng.shuffle(rows)
    spark.createDataFrame(
        rows, "id int, k int, ts timestamp, v int, sym string"
    ).createOrReplaceTempView("pg_input")


def _member(case_sql: str, i: int) -> str:
    """The case's MATCH_RECOGNIZE over the shared input, its row as one JSON column."""
    clause = case_sql[case_sql.index("MATCH_RECOGNIZE (") :]  # without the case's own input
    return f"SELECT {i} AS p, to_json(struct(*)) AS r FROM pg_input\n{clause}"


def _collect(spark, sql: str, together: bool, algorithm: str):
    spark.conf.set(TOGETHER, str(together).lower())
    spark.conf.set(ORDER_CONF, algorithm)
    try:
        return [tuple(r) for r in spark.sql(sql).collect()]
    finally:
        spark.conf.unset(TOGETHER)
        spark.conf.unset(ORDER_CONF)


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_random_pattern_groups_return_the_rows_of_each_pattern_alone(spark):
    failures, grouped = [], 0
    seed = SEED_BASE
    for g in range(GROUPS):
        rng = random.Random(SEED_BASE * 7 + g)
        _input(spark, rng)
        members = []
        while len(members) < rng.randint(3, 6):
            seed += 1
            case = generate(seed, budget=20_000)
            if case is not None:
                members.append(_member(case.sql, len(members) + 1))
        sql = "\nUNION ALL\n".join(members)
        algorithm = ALGORITHMS[g % len(ALGORITHMS)]
        try:
            together = _collect(spark, sql, True, algorithm)
            alone = _collect(spark, sql, False, algorithm)
        except Exception as e:  # noqa: BLE001 - reported with the group
            failures.append(f"group {g} ({algorithm}): {type(e).__name__}: {e}\n{sql}")
            continue
        diff = compare_rows(together, alone, False)
        if diff is not None:
            failures.append(f"group {g} ({algorithm}):\n{sql}\n{diff}")
        spark.conf.set(TOGETHER, "true")
        try:
            plan = spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
        finally:
            spark.conf.unset(TOGETHER)
        if "pattern 2: " in plan:
            grouped += 1
    assert not failures, "\n\n".join(failures[:3])
    # The generator's patterns share PARTITION BY and window kind often enough that some
    # groups run in one operator.
    assert grouped > 0
