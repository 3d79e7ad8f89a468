"""Bounds in DEFINE on the ORDER BY key end partial matches early (`M.ts - R.ts <= INTERVAL
'30' MINUTE`): once a row's key is past the bound, no later row can be `M`, so a partial match
that needs one more `M` is dropped instead of being kept to the partition's end.

Random patterns of the reference's generator get such a bound added to one variable's DEFINE,
and must still give the reference's rows; the crime query's shape (`R Z* B Z* M`, greedy gaps,
SKIP TO NEXT ROW) gives the same rows with the bounds used and not, in batch and as a stream.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import random

import pytest

from reference import rpr
from reference.random_cases import SEARCH_BUDGET, And, Arith, Col, Compare, Lit, draw_spec
from result_compare import compare_rows
from streaming_harness import assert_stream_equals_batch

DEADLINES = "spark.sql.matchRecognize.internal.deadlines"
EXPLAIN_NOTE = "ends partial matches past"
CASES = int(os.environ.get("SMR_DEADLINE_CASES", "30"))
SEED_BASE = int(os.environ.get("SMR_PROPERTY_SEED", "20261121"))


def _with_bound(spec, rng: random.Random):
    """`spec` with a bound on `id` (its ORDER BY key) added to a later variable's DEFINE."""
    variables = rpr.pattern_variables(spec.pattern)
    if len(variables) < 2:
        return None
    i = rng.randrange(1, len(variables))
    bounded, earlier = variables[i], rng.choice(variables[:i])
    width = rng.randint(0, 12)
    kind = rng.randrange(4)
    if kind == 0:
        bound = Compare("<=", Col("id", bounded), Arith("+", Col("id", earlier), Lit(width)))
    elif kind == 1:
        bound = Compare("<", Col("id"), Arith("+", Col("id", earlier), Lit(width)))
    elif kind == 2:
        bound = Compare(">=", Arith("+", Col("id", earlier), Lit(width)), Col("id"))
    else:
        bound = Compare("<=", Col("id", bounded), Lit(5 + 3 * width))
    define = dict(spec.define)
    define[bounded] = And(define[bounded], bound) if bounded in define else bound
    return dataclasses.replace(spec, define=list(define.items()))


@pytest.mark.parametrize("level", ["basic", "full", "next_match"])
def test_random_patterns_with_bounds_match_the_reference(spark, level):
    failures, used, checked = [], 0, 0
    for i in range(CASES * 4):
        if checked == CASES or len(failures) >= 3:
            break
        seed = SEED_BASE + 300_000 + i
        rng = random.Random(f"deadline:{level}:{seed}")
        spec = _with_bound(draw_spec(seed, level), rng)
        if spec is None:
            continue
        try:
            expected = spec.run_reference(budget=SEARCH_BUDGET)
        except (rpr.SearchBudgetExceeded, rpr.MatchRecognizeError):
            continue  # run-time errors and costly searches are the other tests' business
        sql = spec.sql()
        checked += 1
        if EXPLAIN_NOTE in spark.sql(sql)._jdf.queryExecution().executedPlan().toString():
            used += 1
        diff = compare_rows(
            [tuple(r) for r in spark.sql(sql).collect()], [tuple(r) for r in expected.rows], False
        )
        if diff is not None:
            failures.append(f"seed {seed}:\n{sql}\n{diff}")
    assert not failures, "\n\n".join(failures)
    assert checked == CASES, f"only {checked} cases could be checked"
    # Most bounds apply somewhere (not where the bounded variable is optional, or where the
    # variable the bound reads can still take rows after it).
    assert used >= CASES // 3, f"only {used} of {checked} cases used their bound"


CRIME = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES R.ts AS r_ts, B.ts AS b_ts, M.ts AS m_ts, count(Z.ts) AS gap
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (R Z* B Z* M)
  DEFINE
    R AS R.kind = 'robbery',
    B AS B.kind = 'battery' AND B.x BETWEEN R.x - 3 AND R.x + 3,
    M AS M.kind = 'theft' AND M.x BETWEEN R.x - 3 AND R.x + 3
         AND M.ts - R.ts <= INTERVAL '30' SECOND
)
"""
SCHEMA = "ts TIMESTAMP, part STRING, kind STRING, x INT"
COLUMNS = ["ts", "part", "kind", "x"]
EPOCH = datetime.datetime(2026, 1, 1)


def _crime_rows(n: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    kinds = ["robbery"] * 2 + ["battery"] * 4 + ["theft"] * 3 + ["other"] * 11
    return [
        (
            EPOCH + datetime.timedelta(seconds=i + rng.random()),
            f"p{rng.randint(1, 2)}",
            rng.choice(kinds),
            rng.randint(0, 8),
        )
        for i in range(n)
    ]


def test_the_crime_query_shape_gives_the_same_rows_with_and_without_its_bound(spark):
    spark.createDataFrame(_crime_rows(1500, 5), SCHEMA).createOrReplaceTempView("events")
    plan = spark.sql(CRIME)._jdf.queryExecution().executedPlan().toString()
    note = plan.split(EXPLAIN_NOTE, 1)[1].split(", measures", 1)[0]
    assert "M." in note and "R." in note and "INTERVAL '0 00:00:30' DAY TO SECOND" in note, plan
    used = sorted(tuple(r) for r in spark.sql(CRIME).collect())
    spark.conf.set(DEADLINES, "false")
    try:
        assert EXPLAIN_NOTE not in spark.sql(CRIME)._jdf.queryExecution().executedPlan().toString()
        kept = sorted(tuple(r) for r in spark.sql(CRIME).collect())
    finally:
        spark.conf.unset(DEADLINES)
    assert used == kept
    assert len(used) > 20
    # Greedy gaps: each match runs to the last theft within 30 seconds of its robbery.
    assert all((m - r).total_seconds() <= 30 for _, r, _, m, _ in used)


@pytest.mark.parametrize(
    "bound",
    [
        "M.ts <= R.ts + INTERVAL '30' SECOND",
        "R.ts + INTERVAL '30' SECOND > ts",
        "M.ts - R.ts < INTERVAL '30' SECOND",
    ],
)
def test_each_form_of_the_bound_is_used(spark, bound):
    _assert_bound_used_and_rows_kept(
        spark, CRIME.replace("M.ts - R.ts <= INTERVAL '30' SECOND", bound), seed=9
    )


def test_a_bound_descending_is_a_lower_bound(spark):
    sql = CRIME.replace("ORDER BY ts", "ORDER BY ts DESC").replace(
        "M.ts - R.ts <= INTERVAL '30' SECOND", "M.ts >= R.ts - INTERVAL '30' SECOND"
    )
    _assert_bound_used_and_rows_kept(spark, sql, seed=11)


def _assert_bound_used_and_rows_kept(spark, sql: str, seed: int) -> None:
    """EXPLAIN lists the bound, and the rows (some) are those without it used."""
    spark.createDataFrame(_crime_rows(600, seed), SCHEMA).createOrReplaceTempView("events")
    assert EXPLAIN_NOTE in spark.sql(sql)._jdf.queryExecution().executedPlan().toString()
    used = sorted(tuple(r) for r in spark.sql(sql).collect())
    spark.conf.set(DEADLINES, "false")
    try:
        kept = sorted(tuple(r) for r in spark.sql(sql).collect())
    finally:
        spark.conf.unset(DEADLINES)
    assert used == kept and used


def test_a_stream_decides_greedy_gaps_once_the_watermark_passes_the_bound(spark, tmp_path):
    """A greedy `Z*` keeps looking for a later `M` until the partition ends, which a stream
    never sees: without the bound a stream could not decide these matches at all. With it,
    each is decided once the watermark is past its robbery's 30 seconds (the flush row moves
    it past the last ones), and the stream writes the batch query's rows."""
    rows = _crime_rows(300, 13)
    last = max(r[0] for r in rows)
    # Each partition ends with a match that only its bound (or the partition's end) decides.
    for part in ["p1", "p2"]:
        rows += [
            (last + datetime.timedelta(seconds=s), part, kind, 4)
            for s, kind in [(5, "robbery"), (10, "battery"), (15, "theft")]
        ]
    flush = (last + datetime.timedelta(days=1), "zz_flush", "other", 0)
    _, batch = assert_stream_equals_batch(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        rows,
        CRIME,
        time_of=lambda r: (r[0] - EPOCH).total_seconds(),
        flush=flush,
        seed=3,
        max_batch=40,
    )
    assert len(batch) > 3
    assert sum(1 for r in batch if r[3] == last + datetime.timedelta(seconds=15)) == 2


PREFILTER = "spark.sql.matchRecognize.prefilter"
SPAN_TEMPLATES = ["R Z* B Z* M", "R (B | Z)* M", "R B+ M", "R Z*? B Z*? M", "R (Z Z)* B? M+"]


@pytest.mark.parametrize("seed", range(6))
def test_a_bound_spanning_the_match_gives_the_prefilter_its_ranges(spark, seed):
    """Random templates whose matches start with one R and end with an M bounded by R's
    time: the join prefilter (forced on) takes the bound as its span, and the rows equal
    those without the prefilter and without the bound used."""
    rng = random.Random(seed)
    pattern = rng.choice(SPAN_TEMPLATES)
    width = rng.randint(3, 40)
    skip = rng.choice(["AFTER MATCH SKIP PAST LAST ROW", "AFTER MATCH SKIP TO NEXT ROW"])
    op = rng.choice(["<=", "<"])
    sql = (
        CRIME.replace("PATTERN (R Z* B Z* M)", f"PATTERN ({pattern})")
        .replace("AFTER MATCH SKIP TO NEXT ROW", skip)
        .replace("count(Z.ts) AS gap", "count(*) AS n")
        .replace(
            "M.ts - R.ts <= INTERVAL '30' SECOND", f"M.ts - R.ts {op} INTERVAL '{width}' SECOND"
        )
    )
    spark.createDataFrame(_crime_rows(800, 100 + seed), SCHEMA).createOrReplaceTempView("events")
    results = {}
    for name, conf in [
        ("prefilter", {PREFILTER: "on"}),
        ("automaton", {PREFILTER: "off"}),
        ("no bound", {PREFILTER: "off", DEADLINES: "false"}),
    ]:
        for k, v in conf.items():
            spark.conf.set(k, v)
        try:
            if name == "prefilter":
                plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString()
                assert f"anchor R and {float(width)}s after (semi join" in plan, plan
            results[name] = sorted(tuple(r) for r in spark.sql(sql).collect())
        finally:
            for k in conf:
                spark.conf.unset(k)
    assert results["prefilter"] == results["automaton"] == results["no bound"], sql
    assert results["automaton"], sql
