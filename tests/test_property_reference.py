"""Differential property test: random patterns over random data, run through spark.sql()
and through the pure-Python reference matcher (tests/reference), must give the same rows.

The number of cases per level is a quick profile by default; raise it with
SMR_PROPERTY_CASES (e.g. SMR_PROPERTY_CASES=2000) for a long run.
"""

from __future__ import annotations

import os
import random

import pytest

from reference import rpr
from reference.random_cases import COLUMNS, generate
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


def _check_forced_cases(spark, wanted: int, first_seed: int, tries: int, draw, applies, label):
    """Draws cases from `first_seed` on (`draw(seed)`) until `wanted` of them pass
    `applies(case, plan)` (within `tries` seeds) and checks those: a setting forced on
    changes the plan of the cases it applies to, never their rows."""
    failures, applied, seed = [], 0, first_seed
    while applied < wanted and seed < first_seed + tries:
        seed += 1
        case = draw(seed)
        if case.expect_error:
            continue
        if not applies(case, spark.sql(case.sql)._jdf.queryExecution()):
            continue
        applied += 1
        try:
            _check(spark, case)
        except AssertionError as e:
            failures.append(f"seed {seed} ({label}): {e}")
        if len(failures) >= 3:
            break
    assert not failures, "\n\n".join(failures)
    assert applied == wanted, f"only {applied} cases: {label}"


@pytest.mark.parametrize("level", ["basic", "full", "next_match"])
def test_random_patterns_with_the_prefilter_forced_on_match_the_reference(spark, level):
    """Random cases on which the join prefilter applies (forced on, so it is used wherever
    the pattern allows it): the ranges and start flags must never change a result. Seeds
    are drawn until PREFILTER_CASES cases used it; the others are the test above's."""
    spark.conf.set(PREFILTER, "on")
    try:
        _check_forced_cases(
            spark,
            PREFILTER_CASES,
            SEED_BASE,
            60 * PREFILTER_CASES,
            lambda seed: generate(seed, level),
            lambda case, qe: "prefilter: anchor" in qe.optimizedPlan().toString(),
            "prefilter on",
        )
    finally:
        spark.conf.unset(PREFILTER)


TIME_RANGE_CASES = int(os.environ.get("SMR_TIME_RANGE_CASES", "12"))


def _with_time_window(spec, seconds: int) -> str:
    """The case's SQL ordered by a timestamp `ts` = 2026-01-01 + id seconds, with `WITHIN
    INTERVAL 'seconds' SECOND`: the reference's WithinInterval over `id` says the same."""
    sql = spec.sql()
    columns = ", ".join(COLUMNS)
    sql = sql.replace(
        "SELECT *\nFROM (VALUES",
        "SELECT *\nFROM (SELECT *, TIMESTAMP '2026-01-01 00:00:00' + "
        "make_dt_interval(0, 0, 0, id) AS ts FROM (VALUES",
    ).replace(f") AS t({columns})", f") AS t({columns}))")
    sql = sql.replace("  ORDER BY id\n", "  ORDER BY ts\n")
    pattern_line = next(line for line in sql.splitlines() if line.startswith("  PATTERN ("))
    return sql.replace(pattern_line, f"{pattern_line}\n  WITHIN INTERVAL '{seconds}' SECOND")


@pytest.mark.parametrize("level", ["basic", "full"])
def test_random_patterns_with_time_ranges_match_the_reference(spark, level):
    """The prefilter's time-range join (WITHIN INTERVAL, no PREV/NEXT), forced on, over
    random ONE ROW PER MATCH cases given a time key and a window: the ranges reach after,
    before or around the anchor row depending on where every match has it, and must never
    change a result."""
    failures, applied, tried = [], 0, 0
    spark.conf.set(PREFILTER, "on")
    try:
        while applied < TIME_RANGE_CASES and tried < 200 * TIME_RANGE_CASES:
            tried += 1
            seed = SEED_BASE + 100_000 + tried
            spec = generate(seed, level).spec
            if spec.within_rows is not None or spec.rows_per_match != "one":
                continue
            seconds = random.Random(seed).randint(2, 12)
            sql = _with_time_window(spec, seconds)
            plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString()
            if "(semi join on time ranges)" not in plan:
                continue
            kwargs = spec.reference_kwargs()
            kwargs["within"] = rpr.WithinInterval(key=lambda r: r["id"], interval=seconds)
            try:
                expected = rpr.run_partitioned(spec.input_rows(), **kwargs)
            except rpr.MatchRecognizeError:
                continue  # run-time errors are the other tests' business
            applied += 1
            diff = compare_rows(
                [tuple(r) for r in spark.sql(sql).collect()],
                [tuple(r) for r in expected.rows],
                False,
            )
            if diff is not None:
                failures.append(f"seed {seed}:\n{sql}\n{diff}")
            if len(failures) >= 3:
                break
    finally:
        spark.conf.unset(PREFILTER)
    assert not failures, "\n\n".join(failures)
    assert applied == TIME_RANGE_CASES, f"only {applied} cases used the time-range join"


SPLIT_CASES = int(os.environ.get("SMR_SPLIT_CASES", "16"))
SPLIT = "spark.sql.matchRecognize.split.mode"


@pytest.mark.parametrize("skip", ["to_next_row", "past_or_to_variable"])
def test_random_patterns_matched_in_ranges_match_the_reference(spark, skip):
    """Random cases that split matching applies to (forced on) cut into ranges of two or
    three rows, so partitions cross many range edges and matches read far into the
    following ranges: the rows must be the reference's. Under the skip modes where the
    match before decides the next start, each range finds where its matches begin from
    windows of 1, 8 and 64 rows before it, or from its partition's start."""
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set(SPLIT, "on")
    spark.conf.set("spark.sql.shuffle.partitions", "16")
    spark.conf.set("spark.sql.matchRecognize.internal.splitEntryRows", "1")
    try:
        _check_forced_cases(
            spark,
            SPLIT_CASES,
            SEED_BASE + 200_000 + (0 if skip == "to_next_row" else 50_000),
            80 * SPLIT_CASES,
            lambda seed: generate(seed, "full"),
            lambda case, qe: (
                (case.spec.skip == ("to_next_row",)) == (skip == "to_next_row")
                and "split into ranges matched in parallel" in qe.executedPlan().toString()
            ),
            "split",
        )
    finally:
        spark.conf.unset(SPLIT)
        spark.conf.unset("spark.sql.matchRecognize.internal.splitEntryRows")
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
