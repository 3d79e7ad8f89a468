"""Trees per key over a stream (spark.sql.matchRecognize.treesPerKey.*): a SKIP TILL ANY MATCH
pattern of one alternative runs, per key, the tree the rates of the key's latest rows make
cheapest, and moves to another as they drift, in the middle of micro-batches and across them.
Whatever the moves, the stream writes the batch rows; its progress counts the moves and the
rows each variable admitted (the rates it plans by); a checkpoint written while keys are
moving restarts losing and repeating nothing, in both stateful operators; a checkpoint
written before the query had trees per key restarts under them; one written under other
trees is refused, naming the settings.
"""

from __future__ import annotations

import datetime
import random

import pytest

from result_compare import compare_rows
from session_settings import settings
from streaming_harness import (
    SPARK_3,
    STATEFUL_OPERATORS,
    arrival_batches,
    explain_running,
    operator_settings,
    run_batch,
    run_restarted,
    run_stream,
    write_batches,
)

EPOCH = datetime.datetime(2024, 1, 1)
SCHEMA = "id INT, part STRING, kind STRING, v INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "kind", "v", "ts"]
FLUSH = (100_000, "zz_flush", None, None, EPOCH + datetime.timedelta(days=30))
MAX_TREES = "spark.sql.matchRecognize.treesPerKey.max"
PREFIX_ROWS = "spark.sql.matchRecognize.treesPerKey.prefixRows"
FORCED_KEY_TREES = "spark.sql.matchRecognize.internal.keyTrees"

QUERY = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, B.id AS b_id, C.id AS c_id
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B C{negation}) WITHIN INTERVAL '120' SECOND
  DEFINE A AS kind = 'A', B AS kind = 'B' AND v > A.v, C AS kind = 'C' AND v < B.v{define}
)"""
SEQUENCE = QUERY.format(negation="", define="")
NEGATED = QUERY.format(negation=" !N", define=", N AS kind = 'N' AND v = 9")


def _drifting(n: int, parts: list[str], rng: random.Random) -> list[tuple]:
    """Rows a second or two apart whose rates flip every `n // 3` rows per key: A rare and C
    frequent, then the reverse, then as at first (N now and then, for a negation)."""
    rows, t = [], 0
    for i in range(1, n + 1):
        t += rng.choice([1, 1, 2])
        phase = (i * 3 // n) % 2
        rare, common = ("A", "C") if phase == 0 else ("C", "A")
        h = rng.random()
        kind = rare if h < 0.05 else "B" if h < 0.4 else "N" if h < 0.45 else common
        rows.append(
            (i, rng.choice(parts), kind, rng.randint(0, 9), EPOCH + datetime.timedelta(seconds=t))
        )
    return rows


def _batches(rows: list[tuple], seed: int, max_batch: int) -> list[list[tuple]]:
    return arrival_batches(rows, lambda r: r[4].timestamp(), 5, random.Random(seed), max_batch)


def _stream_plan(spark, tmp_path, sql: str) -> str:
    """The plan of `sql` run over a stream of `events` (its stateful operator's line)."""
    source = tmp_path / "plan-source"
    write_batches(source, COLUMNS, [[FLUSH]])
    spark.readStream.schema(SCHEMA).json(str(source)).withWatermark(
        "ts", "5 seconds"
    ).createOrReplaceTempView("events")
    return explain_running(spark, sql, tmp_path / "plan-checkpoint")


def _stream_equals_batch(spark, tmp_path, rows, sql, seed=0, max_batch=25):
    stream = run_stream(
        spark, tmp_path, SCHEMA, COLUMNS, _batches(rows, seed, max_batch) + [[FLUSH]], sql
    )
    expected = run_batch(spark, SCHEMA, rows, sql)
    assert stream.dropped_by_watermark() == 0
    diff = compare_rows(stream.rows, expected, ordered=False)
    assert diff is None, f"{sql}\n{diff}"
    assert len(expected) > 20, "the data exercise too little"
    return stream, expected


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_keys_move_between_trees_as_their_rates_drift_and_the_stream_equals_batch(spark, tmp_path):
    rows = _drifting(1500, ["p", "q"], random.Random(5))
    with settings(spark, {PREFIX_ROWS: "40"}):
        plan = _stream_plan(spark, tmp_path, SEQUENCE)
        # Under 100 micro-batches: the progress Spark keeps is the last 100.
        stream, expected = _stream_equals_batch(
            spark, tmp_path, rows, SEQUENCE, seed=5, max_batch=60
        )
    assert "trees per key:" in plan, plan
    metrics = stream.observed()
    assert sum(m["matches"] for m in metrics) == len(expected)
    moves = sum(m.get("tree_moves") or 0 for m in metrics)
    # Once C turns rare, each key moves to the tree that joins it first; when A turns rare
    # again the two trees cost about the same (the last join dominates), so it may stay.
    assert moves >= 2, f"{moves} moves: each key's rates flip"
    # The rates the keys plan by: every row a variable's own condition admits, counted once.
    for variable in "ABC":
        admitted = sum(1 for r in rows if r[2] == variable)
        counted = sum(m.get(f"rows_{variable}") or 0 for m in metrics)
        if SPARK_3:  # no metrics for the micro-batches without rows: those rows go uncounted
            assert 0.8 * admitted <= counted <= admitted, (variable, counted, admitted)
        else:
            assert counted == admitted, variable
    # The pass rates they plan by: B.v > A.v and C.v < B.v hold for 45 % of ordered pairs.
    for a, b in (("A", "B"), ("B", "C")):
        tested = sum(m.get(f"pairs_tested_{a}_{b}") or 0 for m in metrics)
        passed = sum(m.get(f"pairs_passed_{a}_{b}") or 0 for m in metrics)
        assert tested > 200, (a, b, tested)
        assert 0.3 < passed / tested < 0.6, (a, b, passed, tested)


def _drifting_conditions(n: int, parts: list[str], rng: random.Random) -> list[tuple]:
    """Rows whose rates stay even while the conditions' pass rates trade places every `n // 3`
    rows: B.v > A.v nearly always and C.v < B.v nearly never, then the reverse, then as at
    first (a row in ten has a random v, so that some matches are found all along)."""
    rows, t = [], 0
    for i in range(1, n + 1):
        t += rng.choice([1, 1, 2])
        kind = rng.choice("ABC")
        flipped = (i * 3 // n) % 2 == 1
        v = {"A": 9 if flipped else 0, "B": 5, "C": 0 if flipped else 9}[kind]
        if rng.random() < 0.1:
            v = rng.randint(0, 9)
        rows.append((i, rng.choice(parts), kind, v, EPOCH + datetime.timedelta(seconds=t)))
    return rows


def test_keys_move_as_the_pass_rates_of_their_conditions_drift(spark, tmp_path):
    """The rates never change; what the rows show of each condition's pass rate does: a key
    starting on the pattern order, which joins A to B first, moves to the tree joining B to C
    first while A-B pairs nearly all pass and B-C pairs nearly none, and back."""
    rows = _drifting_conditions(1500, ["p", "q"], random.Random(11))
    with settings(spark, {PREFIX_ROWS: "40"}):
        stream, _ = _stream_equals_batch(spark, tmp_path, rows, SEQUENCE, seed=11, max_batch=60)
    metrics = stream.observed()
    moves = sum(m.get("tree_moves") or 0 for m in metrics)
    assert moves >= 4, f"{moves} moves: each key's pass rates flip twice"


def test_trees_per_key_off_plans_one_tree_and_writes_the_same_rows(spark, tmp_path):
    rows = _drifting(300, ["p", "q"], random.Random(6))
    with settings(spark, {MAX_TREES: "1"}):
        stream, _ = _stream_equals_batch(spark, tmp_path, rows, SEQUENCE, seed=6)
    metrics = stream.observed()
    assert all("tree_moves" not in m for m in metrics), metrics[0]


@pytest.mark.parametrize("sql", [SEQUENCE, NEGATED], ids=["sequence", "trailing_negation"])
def test_keys_moving_every_few_rows_write_the_batch_rows(spark, tmp_path, sql):
    """Trees forced to change every few rows, whatever the rates (a test setting): moves
    inside micro-batches, across them, and while the tree left still holds matches for the
    trailing negation."""
    rows = _drifting(500, ["p", "q", "r"], random.Random(7))
    forced = {FORCED_KEY_TREES: "(A (B C)); ((A C) B)", PREFIX_ROWS: "4"}
    with settings(spark, forced):
        stream, _ = _stream_equals_batch(spark, tmp_path, rows, sql, seed=7, max_batch=20)
    # A key moves again once the tree it left has seen its window out: two or more each.
    assert sum(m.get("tree_moves") or 0 for m in stream.observed()) >= 6


def _restarted(spark, tmp_path, sql, conf_before, conf_after, seed=8):
    rows = _drifting(600, ["p", "q"], random.Random(seed))
    batches = _batches(rows, seed, 40)
    cut = len(batches) // 2
    parts = [batches[:cut], batches[cut:] + [[FLUSH]]]
    with settings(spark, conf_before):
        first, error = run_restarted(spark, tmp_path, SCHEMA, COLUMNS, [sql], parts[:1])
    assert error is None, error
    with settings(spark, conf_after):
        got, error = run_restarted(spark, tmp_path, SCHEMA, COLUMNS, [sql], parts[1:])
    return rows, got, error


@pytest.mark.parametrize("operator", STATEFUL_OPERATORS)
def test_a_restart_while_keys_move_loses_and_repeats_nothing(spark, tmp_path, operator):
    forced = {
        FORCED_KEY_TREES: "(A (B C)); ((A C) B)",
        PREFIX_ROWS: "4",
        **operator_settings(operator),
    }
    rows, got, error = _restarted(spark, tmp_path, NEGATED, forced, forced)
    assert error is None, error
    expected = run_batch(spark, SCHEMA, rows, NEGATED)
    assert len(expected) > 20
    assert compare_rows(got, expected, ordered=False) is None


@pytest.mark.parametrize("operator", STATEFUL_OPERATORS)
def test_a_checkpoint_from_before_trees_per_key_restarts_under_them(spark, tmp_path, operator):
    one_tree = {MAX_TREES: "1", **operator_settings(operator)}
    moving = {
        FORCED_KEY_TREES: "(A (B C)); ((A C) B)",
        PREFIX_ROWS: "4",
        **operator_settings(operator),
    }
    rows, got, error = _restarted(spark, tmp_path, NEGATED, one_tree, moving, seed=9)
    assert error is None, error
    expected = run_batch(spark, SCHEMA, rows, NEGATED)
    assert compare_rows(got, expected, ordered=False) is None


def test_a_checkpoint_of_other_trees_per_key_is_refused_by_name(spark, tmp_path):
    before = {FORCED_KEY_TREES: "(A (B C)); ((A C) B)", PREFIX_ROWS: "4"}
    after = {FORCED_KEY_TREES: "((A C) B); (A (B C))", PREFIX_ROWS: "4"}
    _, _, error = _restarted(spark, tmp_path, SEQUENCE, before, after, seed=10)
    assert error is not None
    assert "other trees per key than this query's" in str(error), error
    assert "treesPerKey.max" in str(error), error


def test_random_patterns_moving_between_trees_stream_equals_batch(spark, tmp_path):
    """Random cases of the ANY MATCH property test whose pattern is one sequence (with
    closures, negations, ties, windows of rows and of time), streamed with each key moving
    among the default tree, the reverse order and the pattern order every 2 to 4 rows: the
    rows of the batch query, whose keys run one tree."""
    import test_property_any_match
    import test_streaming_any_match

    def forced(case, number: int) -> dict | None:
        trees = test_property_any_match._key_trees(case.pattern_text, number)
        if not trees:
            return None
        prefix, others = trees[0].removeprefix("keyTrees:").split(":", 1)
        return {FORCED_KEY_TREES: others, PREFIX_ROWS: prefix}

    test_streaming_any_match.random_cases_stream_equals_batch(spark, tmp_path, forced)
