"""Plan stability: golden files of the plans of a fixed set of MATCH_RECOGNIZE queries.

For each query, tests/goldens/plans/<query>/analyzed.txt holds its analyzed logical plan; for
each SKIP TILL ANY MATCH query, explain-<algorithm>[-<execution>].txt holds its physical
plan (EXPLAIN) under every join-order algorithm, and under both cepExecution modes when the
one-pass tree can evaluate the pattern. The physical plan shows the chosen tree and the
statistics it was chosen from (the MatchGuard line) and the operators that run it, so a
change in the analyzer, the statistics, an algorithm's choice or the plan builder shows up
as a diff of these files.

The plans are compared after the parts that differ between two runs are normalized
(expression and plan ids, whether the statistics came from the cache); adaptive execution
is off, so the physical plan is the one that runs. Spark prints plans differently on each
line: the files are those of the default Spark line, and the tests skip on the others.

Regenerate every file with one command (and review the diff):

    SMR_UPDATE_GOLDENS=1 .venv/bin/python -m pytest tests/test_plan_goldens.py
"""

from __future__ import annotations

import difflib
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from project_settings import pyproject_value
from session_settings import settings
from spark_match_recognize import JOIN_ORDERS
from spark_match_recognize.jars import installed_spark_line

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = Path(__file__).resolve().parent / "goldens" / "plans"
UPDATE_COMMAND = "SMR_UPDATE_GOLDENS=1 .venv/bin/python -m pytest tests/test_plan_goldens.py"
GOLDEN_LINE = pyproject_value("default-spark-line")

pytestmark = pytest.mark.skipif(
    installed_spark_line() != GOLDEN_LINE,
    reason=f"the plan goldens are printed by Spark {GOLDEN_LINE} (the default line); "
    f"pyspark of the Spark line {installed_spark_line()} prints plans differently",
)

ADAPTIVE = "spark.sql.adaptive.enabled"
ORDER = "spark.sql.matchRecognize.joinOrder"
EXECUTION = "spark.sql.matchRecognize.cepExecution"
VIEW = "plan_golden_events"

# Settings the plans depend on, set by each test (and restored after it): no adaptive
# execution (its plans change as they run), a fixed shuffle width, and Spark's and the
# extension's defaults for the rest, whatever other tests of the session set.
PINNED = {
    ADAPTIVE: "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.codegen.wholeStage": "true",
    "spark.sql.exchange.reuse": "true",
    "spark.sql.matchRecognize.internal.joinTree": "",
    "spark.sql.matchRecognize.internal.ownSort": "true",
    "spark.sql.matchRecognize.auto.dpThreshold": "10",
    "spark.sql.matchRecognize.maxMatchesPerPartition": "100000000",
    "spark.sql.matchRecognize.statistics.sampleRows": "20000",
    "spark.sql.matchRecognize.statistics.seed": "20260521",
    "spark.sql.matchRecognize.explainCandidates": "false",
    "spark.sql.matchRecognize.costModel": "spark",
    "spark.sql.matchRecognize.latencyWeight": "0.0",
    "spark.sql.matchRecognize.candidateWeight": "0.1",
    "spark.sql.matchRecognize.targetRowsPerTask": "10000",
    "spark.sql.matchRecognize.prefilter": "auto",
    ORDER: "auto",
    EXECUTION: "auto",
}

# The input: 3 keys x 120 rows, 1-3 minutes apart, in 2 input partitions. Kind e: 'a' 6%,
# 'b' 16%, 'c' 28%, 'd' 40%, 'n' 10%, so the variables' rates differ and the algorithms
# order them differently; v is uniform in 0..9 and price a random walk.
KEYS, ROWS_PER_KEY, INPUT_PARTITIONS = 3, 120, 2
KINDS = [(0.06, "a"), (0.22, "b"), (0.50, "c"), (0.90, "d"), (1.0, "n")]  # cumulative


def _rows() -> list[tuple[int, int, str, int, int]]:
    rng = random.Random(2026)  # random() is reproducible across Python versions
    rows = []
    for k in range(KEYS):
        minute, price = 0, 50
        for _ in range(ROWS_PER_KEY):
            minute += 1 + int(rng.random() * 3)
            r = rng.random()
            e = next(kind for bound, kind in KINDS if r < bound)
            price += int(rng.random() * 7) - 3
            rows.append((k, minute, e, int(rng.random() * 10), price))
    return rows


def _any_match(measures: str, pattern: str, within: str, define: str) -> str:
    return f"""SELECT * FROM {VIEW} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES {measures}
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN ({pattern}) WITHIN INTERVAL '{within}' MINUTE
  DEFINE {define})"""


# name -> (query, the cepExecution modes its physical plan is recorded under: none for
# standard semantics, which has no join tree; ("auto",) where only one execution applies).
QUERIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "one_row_per_match": (
        f"""SELECT * FROM {VIEW} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
           count(*) AS n, min(DOWN.price) AS low, FINAL max(UP.price) AS high
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))""",
        (),
    ),
    "all_rows_per_match": (
        f"""SELECT * FROM {VIEW} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS match_no, RUNNING count(B.ts) AS bs
  ALL ROWS PER MATCH
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A B* C) WITHIN INTERVAL '20' MINUTE
  DEFINE A AS e = 'a', B AS e <> 'c', C AS e = 'c' AND C.v > A.v)""",
        (),
    ),
    # Written frequent variable first, rarest last: the algorithms disagree on the order.
    "any_sequence_within": (
        _any_match(
            "W.ts AS w_ts, Z.ts AS z_ts, Z.v - W.v AS dv",
            "W X Y Z",
            "30",
            "W AS e = 'd', X AS e = 'b' AND X.v > W.v, Y AS e = 'c', Z AS e = 'a' AND Z.v < Y.v",
        ),
        ("tree", "joins"),
    ),
    "any_permute": (
        _any_match(
            "A.ts AS a_ts, B.ts AS b_ts, C.ts AS c_ts",
            "PERMUTE(A, B) C",
            "20",
            "A AS e = 'd', B AS e = 'a', C AS e = 'c' AND C.v > A.v",
        ),
        ("tree", "joins"),
    ),
    "any_alternation": (
        _any_match(
            "A.ts AS a_ts, B.ts AS b_ts, C.ts AS c_ts, D.ts AS d_ts",
            "A (B | C) D",
            "20",
            "A AS e = 'd', B AS e = 'b' AND B.v > A.v, C AS e = 'c', D AS e = 'a'",
        ),
        ("tree", "joins"),
    ),
    # A closure and a negation in one pattern, under both executions.
    "any_negation_kleene": (
        _any_match(
            "A.ts AS a_ts, count(B.ts) AS bs, C.ts AS c_ts, D.ts AS d_ts",
            "A B+ C !N D",
            "20",
            "A AS e = 'd', B AS e = 'b', C AS e = 'c' AND C.v > A.v, N AS e = 'n', D AS e = 'a'",
        ),
        ("tree", "joins"),
    ),
}


def _explain_cases() -> Iterator[tuple[str, str, str]]:
    for name, (_, modes) in QUERIES.items():
        for algorithm in JOIN_ORDERS:
            for mode in modes:
                yield name, algorithm, mode


def _explain_file(algorithm: str, mode: str) -> str:
    return f"explain-{algorithm}.txt" if mode == "auto" else f"explain-{algorithm}-{mode}.txt"


# ---------------------------------------------------------------------------------------
# Normalization and comparison

_NORMALIZE = [
    # expression ids: k#12, #slice#40L, A#c1#7 (the name stays, the number goes)
    (re.compile(r"#\d+L?\b"), "#x"),
    (re.compile(r"\bplan_id=\d+"), "plan_id=x"),
    (re.compile(r"isFinalPlan=(true|false)"), "isFinalPlan=x"),
    # object hashes (Class@1a2b3c) and temporary paths
    (re.compile(r"@[0-9a-f]{6,}\b"), "@x"),
    (re.compile(r"(file:)?/tmp/[^\s,\]\)]*"), "<tmp>"),
    (re.compile(r"Statistics\(sizeInBytes=[^)]*\)"), "Statistics(x)"),
    # whether the statistics were sampled for this plan or taken from the cache
    (re.compile(r"(sample \d+ rows in \d+ block\(s\)[^|\n]*?), cached"), r"\1"),
]


def normalize(text: str) -> str:
    for pattern, replacement in _NORMALIZE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines()) + "\n"


def check_golden(path: Path, actual: str) -> None:
    """Compares `actual` with the golden file (rewriting it first under SMR_UPDATE_GOLDENS=1)."""
    shown = path.relative_to(ROOT)
    if os.environ.get("SMR_UPDATE_GOLDENS") == "1":
        if not path.is_file() or path.read_text(encoding="utf-8") != actual:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
    assert path.is_file(), f"{shown} is missing: run {UPDATE_COMMAND}"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile=f"{shown} (golden)",
                tofile=f"{shown} (this run)",
            )
        )
        pytest.fail(
            f"the plan differs from {shown}:\n{diff}\n"
            f"If the change is intended, regenerate the goldens and review their diff:\n"
            f"  {UPDATE_COMMAND}",
            pytrace=False,
        )


# ---------------------------------------------------------------------------------------
# Settings and the input


@pytest.fixture(scope="module")
def plan_session(spark):
    """The session with the input view."""
    rdd = spark.sparkContext.parallelize(_rows(), INPUT_PARTITIONS)
    spark.createDataFrame(rdd, "k INT, minute BIGINT, e STRING, v INT, price INT").selectExpr(
        "k", "timestamp_seconds(minute * 60) AS ts", "e", "v", "price"
    ).createOrReplaceTempView(VIEW)
    yield spark
    spark.catalog.dropTempView(VIEW)


def _seq(java_seq) -> list:
    return [java_seq.apply(i) for i in range(java_seq.size())]


def _resolved_clause(analyzed) -> str:
    """The MatchRecognize node's resolved MEASURES and DEFINE, which its line in the plan
    leaves out."""
    node = analyzed
    while node.nodeName() != "MatchRecognize":
        node = node.children().apply(0)
    measures = zip(_seq(node.measureOutput()), _seq(node.measures()), strict=True)
    defines = zip(_seq(node.options().definedVariables()), _seq(node.defines()), strict=True)
    return "\n".join(
        ["MEASURES", *(f"  {out} = {expr}" for out, expr in measures)]
        + ["DEFINE", *(f"  {var} = {expr}" for var, expr in defines)]
    )


# ---------------------------------------------------------------------------------------
# Tests


@pytest.mark.parametrize("name", list(QUERIES))
def test_analyzed_plan(plan_session, name):
    with settings(plan_session, PINNED):
        df = plan_session.sql(QUERIES[name][0])
        analyzed = df._jdf.queryExecution().analyzed()
        schema = ", ".join(f"{f.name}: {f.dataType.simpleString()}" for f in df.schema.fields)
        text = (
            f"== Analyzed Logical Plan ==\n{schema}\n{analyzed.toString().rstrip()}\n"
            f"== MatchRecognize clause (resolved) ==\n{_resolved_clause(analyzed)}"
        )
    check_golden(GOLDENS / name / "analyzed.txt", normalize(text))


@pytest.mark.parametrize(
    ("name", "algorithm", "mode"),
    list(_explain_cases()),
    ids=[f"{n}/{_explain_file(a, m)[:-4]}" for n, a, m in _explain_cases()],
)
def test_physical_plan(plan_session, name, algorithm, mode):
    with settings(plan_session, {**PINNED, ORDER: algorithm, EXECUTION: mode}):
        text = plan_session.sql("EXPLAIN " + QUERIES[name][0]).collect()[0][0]
    guard = next(line for line in text.splitlines() if "MatchGuard" in line)
    # The settings took effect: the plan is the one asked for, with no adaptive execution.
    assert not text.startswith("== Physical Plan ==\nAdaptiveSparkPlan"), text[:200]
    assert f"joinOrder={'auto→' if algorithm == 'auto' else algorithm}" in guard, guard
    if mode != "auto":
        assert f"cepExecution={mode} (requested)" in guard, guard
    check_golden(GOLDENS / name / _explain_file(algorithm, mode), normalize(text))


def test_no_stale_goldens():
    """Every file under tests/goldens/plans belongs to a case above (SMR_UPDATE_GOLDENS=1
    deletes the others)."""
    expected = {GOLDENS / name / "analyzed.txt" for name in QUERIES}
    expected |= {GOLDENS / n / _explain_file(a, m) for n, a, m in _explain_cases()}
    stale = sorted(p for p in GOLDENS.rglob("*") if p.is_file() and p not in expected)
    if os.environ.get("SMR_UPDATE_GOLDENS") == "1":
        for path in stale:
            path.unlink()
        stale = []
    shown = [str(p.relative_to(ROOT)) for p in stale]
    assert not stale, f"files of no case: {shown}; run {UPDATE_COMMAND}"
