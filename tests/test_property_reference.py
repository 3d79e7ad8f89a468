"""Differential property test: random patterns over random data, run through spark.sql()
and through the pure-Python reference matcher (tests/reference), must give the same rows.

The number of cases per level is a quick profile by default; raise it with
SMR_PROPERTY_CASES (e.g. SMR_PROPERTY_CASES=2000) for a long run.
"""

from __future__ import annotations

import os

import pytest

from reference.random_cases import generate
from result_compare import compare_rows

CASES = int(os.environ.get("SMR_PROPERTY_CASES", "40"))
SEED_BASE = int(os.environ.get("SMR_PROPERTY_SEED", "20261121"))


def _check(spark, case) -> None:
    if case.expect_error:
        with pytest.raises(Exception) as info:
            spark.sql(case.sql).collect()
        assert case.expect_error in str(info.value).lower(), f"{case.sql}\n{info.value}"
        return
    df = spark.sql(case.sql)
    assert df.columns == case.columns, case.sql
    diff = compare_rows(
        [tuple(r) for r in df.collect()], [tuple(r) for r in case.rows], case.ordered
    )
    assert diff is None, f"{case.sql}\n{diff}"


@pytest.mark.parametrize("level", ["basic", "full", "next_match"])
def test_random_patterns_match_the_reference(spark, level):
    failures = []
    for i in range(CASES):
        case = generate(SEED_BASE + i, level)
        try:
            _check(spark, case)
        except AssertionError as e:
            failures.append(f"seed {SEED_BASE + i}: {e}")
        if len(failures) >= 3:
            break
    assert not failures, "\n\n".join(failures)


PREFILTER = "spark.sql.matchRecognize.prefilter"


PREFILTER_CASES = int(os.environ.get("SMR_PREFILTER_CASES", "12"))


@pytest.mark.parametrize("level", ["basic", "full", "next_match"])
def test_random_patterns_with_the_prefilter_forced_on_match_the_reference(spark, level):
    """Random cases on which the join prefilter applies (forced on, so it is used wherever
    the pattern allows it): the ranges and start flags must never change a result. Seeds
    are drawn until PREFILTER_CASES cases used it; the others are the test above's."""
    failures, applied, seed = [], 0, SEED_BASE
    spark.conf.set(PREFILTER, "on")
    try:
        while applied < PREFILTER_CASES and seed < SEED_BASE + 60 * PREFILTER_CASES:
            seed += 1
            case = generate(seed, level)
            if case.expect_error:
                continue
            plan = spark.sql(case.sql)._jdf.queryExecution().optimizedPlan().toString()
            if "prefilter: anchor" not in plan:
                continue
            applied += 1
            try:
                _check(spark, case)
            except AssertionError as e:
                failures.append(f"seed {seed} (prefilter on): {e}")
            if len(failures) >= 3:
                break
    finally:
        spark.conf.unset(PREFILTER)
    assert not failures, "\n\n".join(failures)
    assert applied == PREFILTER_CASES, f"only {applied} cases could use the prefilter"
