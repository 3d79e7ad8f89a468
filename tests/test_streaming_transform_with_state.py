"""Streaming MATCH_RECOGNIZE in Spark's ``transformWithState`` operator
(``spark.sql.matchRecognize.streaming.operator=transformWithState``, the RocksDB state store),
in micro-batches: the same tests as in ``flatMapGroupsWithState`` hold — a stream equals
batch on the same rows, for standard semantics, SKIP TILL ANY MATCH trees, a trailing
negation and WITHIN decided by event-time timers, and patterns planned together; a query
stopped and restarted from its checkpoint loses and repeats nothing; a changed query is
refused by name. Each test then checks that its checkpoints were written by
``transformWithStateExec``: a test that ran in the other operator fails."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException

import test_deadlines
import test_streaming
import test_streaming_any_match
import test_streaming_changed_query
import test_streaming_pattern_groups
from result_compare import compare_rows
from session_settings import settings
from spark_match_recognize import late_rows
from streaming_harness import SPARK_3, run_batch, write_batches

# Spark 3.5 has no transformWithState (test_streaming_spark3.py: the error that says so).
pytestmark = pytest.mark.skipif(SPARK_3, reason="transformWithState is Spark 4.0 and later")

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
OPERATOR = "spark.sql.matchRecognize.streaming.operator"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"


def _operators_of_checkpoints(root: Path) -> list[str]:
    """The operator named by each stateful operator's metadata under ``root``."""
    import json

    names = []
    for path in root.rglob("_metadata/v2/*"):
        if path.name.startswith("."):
            continue
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for line in text[1:]:
            names.append(json.loads(line)["operatorInfo"]["operatorName"])
    return names


@pytest.fixture
def transform_with_state(spark, tmp_path):
    """Runs the test's streams in transformWithState, then checks they did. RocksDB commits
    each micro-batch as a changelog, not a new snapshot (as it is best run)."""
    with settings(spark, {OPERATOR: "transformWithState", PROVIDER: ROCKSDB, CHANGELOG: "true"}):
        yield
    operators = _operators_of_checkpoints(tmp_path)
    assert operators, "no stateful operator wrote a checkpoint"
    assert set(operators) == {"transformWithStateExec"}, operators


@pytest.mark.smoke
def test_standard_semantics_stream_equals_batch(spark, tmp_path, transform_with_state):
    test_streaming.test_v_shape_stream_equals_batch_over_many_micro_batches(spark, tmp_path)


def test_within_closes_open_matches_by_an_event_time_timer(spark, tmp_path, transform_with_state):
    test_streaming.test_within_decides_open_matches_once_the_watermark_closes_the_window(
        spark, tmp_path
    )


def test_a_bound_in_define_decides_matches_by_an_event_time_timer(
    spark, tmp_path, transform_with_state
):
    test_deadlines.test_a_stream_decides_greedy_gaps_once_the_watermark_passes_the_bound(
        spark, tmp_path
    )


def test_standard_semantics_restart_loses_and_repeats_nothing(
    spark, tmp_path, transform_with_state
):
    test_streaming.test_restart_from_checkpoint_loses_and_repeats_nothing(spark, tmp_path)


# The random cases run in full in flatMapGroupsWithState; a share of them here, where they
# check the operator, not the matching.
RANDOM_CASES = 4


def test_random_standard_patterns_stream_equals_batch(
    spark, tmp_path, transform_with_state, monkeypatch
):
    monkeypatch.setattr(test_streaming, "CASES", min(RANDOM_CASES, test_streaming.CASES))
    test_streaming.test_random_patterns_stream_equals_batch(spark, tmp_path, "basic")


def test_long_matches_continue_across_micro_batches_and_a_restart(
    spark, tmp_path, transform_with_state
):
    test_streaming.test_long_matches_continue_across_micro_batches_and_a_restart(spark, tmp_path)


@pytest.mark.smoke
def test_any_match_stream_equals_batch(spark, tmp_path, transform_with_state):
    test_streaming_any_match.test_a_sequence_stream_equals_batch_and_reports_its_work(
        spark, tmp_path
    )


def test_a_trailing_negation_is_decided_by_an_event_time_timer(
    spark, tmp_path, transform_with_state
):
    test_streaming_any_match.test_a_trailing_negation_holds_a_match_until_the_watermark_closes_its_window(
        spark, tmp_path
    )


def test_any_match_restart_loses_and_repeats_nothing(spark, tmp_path, transform_with_state):
    test_streaming_any_match.test_restart_from_checkpoint_loses_and_repeats_nothing(spark, tmp_path)


def test_random_any_match_patterns_stream_equals_batch(
    spark, tmp_path, transform_with_state, monkeypatch
):
    cases = min(RANDOM_CASES, test_streaming_any_match.CASES)
    monkeypatch.setattr(test_streaming_any_match, "CASES", cases)
    test_streaming_any_match.test_random_any_match_patterns_stream_equals_batch(spark, tmp_path)


def test_patterns_planned_together_share_one_operator(spark, tmp_path, transform_with_state):
    test_streaming_pattern_groups.test_patterns_of_one_stream_run_in_one_stateful_operator(
        spark, tmp_path
    )


def test_a_changed_query_is_refused_by_name(spark, tmp_path, transform_with_state):
    test_streaming_changed_query.test_a_changed_query_is_refused_naming_the_change(
        spark, tmp_path, "DEFINE"
    )


def test_update_output_mode_writes_the_rows_of_append(spark, tmp_path, transform_with_state):
    """Each match is written once in either mode: update (what Real-Time Mode requires)
    writes the rows append writes."""
    rows = test_streaming._walk_rows(60, ["a", "b"], random.Random(3))
    closed = rows + test_streaming._closing_rows(rows, test_streaming.V_SHAPE)[0]
    written = {}
    for mode in ("append", "update"):
        source = tmp_path / f"source-{mode}"
        write_batches(
            source, test_streaming.COLUMNS, [closed[:30], closed[30:], [test_streaming._flush()]]
        )
        spark.readStream.schema(test_streaming.SCHEMA).option("maxFilesPerTrigger", 1).json(
            str(source)
        ).withWatermark("ts", "5 seconds").createOrReplaceTempView("events")
        query = (
            spark.sql(test_streaming.V_SHAPE)
            .writeStream.format("memory")
            .queryName(f"tws_{mode}")
            .outputMode(mode)
            .option("checkpointLocation", str(tmp_path / f"checkpoint-{mode}"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        assert query.exception() is None
        written[mode] = sorted(tuple(r) for r in spark.table(f"tws_{mode}").collect())
    assert len(written["append"]) >= 3
    assert written["update"] == written["append"]


def test_complete_output_mode_is_refused(spark, tmp_path):
    stream = test_streaming._analyze_over_stream(spark, tmp_path, test_streaming.V_SHAPE)
    with settings(spark, {OPERATOR: "transformWithState", PROVIDER: ROCKSDB}):
        with pytest.raises(AnalysisException) as info:
            stream.writeStream.format("memory").queryName("tws_complete").outputMode(
                "complete"
            ).option("checkpointLocation", str(tmp_path / "checkpoint")).start().stop()
    message = str(info.value)
    assert "MATCH_RECOGNIZE.STREAMING_OUTPUT_MODE" in message, message
    assert "append or update output mode" in message, message


def test_without_the_rocksdb_state_store_the_error_says_what_to_set(spark, tmp_path):
    stream = test_streaming._analyze_over_stream(spark, tmp_path, test_streaming.V_SHAPE)
    with settings(spark, {OPERATOR: "transformWithState"}):
        with pytest.raises(AnalysisException) as info:
            stream.writeStream.format("memory").queryName("tws_hdfs").option(
                "checkpointLocation", str(tmp_path / "checkpoint")
            ).start().stop()
    message = str(info.value)
    assert "MATCH_RECOGNIZE.STREAMING_STATE_STORE" in message, message
    assert ROCKSDB in message, message


def test_a_checkpoint_of_the_other_operator_is_refused(spark, tmp_path):
    """A checkpoint belongs to the operator that wrote it: restarted in the other one,
    Spark refuses it by its state metadata, before any row is matched."""
    query = test_streaming_changed_query.query(test_streaming_changed_query.BASE)
    with settings(spark, {PROVIDER: ROCKSDB}):
        _, error = test_streaming_changed_query.restarted(spark, tmp_path, query, query)
        assert error is None, error  # the same operator goes on
        with settings(spark, {OPERATOR: "transformWithState"}):
            _, error = test_streaming_changed_query.restarted(spark, tmp_path, query, query)
    assert error is not None, "a checkpoint of flatMapGroupsWithState ran in transformWithState"
    assert "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA" in str(error), str(error)


TTL = "spark.sql.matchRecognize.streaming.stateTtlMs"

ANY_MATCH_HELD = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.ts AS a_ts, B.ts AS b_ts
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B !N) WITHIN 4 ROWS
  DEFINE A AS A.x > 5, B AS B.x < A.x, N AS N.x = 0)
"""


@pytest.mark.parametrize(
    "sql", [test_streaming.V_SHAPE, ANY_MATCH_HELD], ids=["standard", "any_match"]
)
def test_a_key_past_its_time_to_live_ends_as_a_batch_partition_ends(
    spark, tmp_path, transform_with_state, sql
):
    """Once the watermark is the time to live past a key's last row, the key's partition
    ends: the stream then holds the batch result, with what only the end of a partition
    decides (a last V's UP+; under WITHIN 4 ROWS, the matches a trailing negation holds
    for the rows after them), and the key's state is gone."""
    row = test_streaming._row
    # a: a V whose UP+ runs to a's last row; b: the same shape, 4 rows. Times are the ids.
    keys_rows = [row(i, "a", x, 0) for i, x in zip(range(1, 6), [5, 4, 3, 4, 6], strict=True)]
    keys_rows += [row(i, "b", x, 0) for i, x in zip(range(11, 15), [9, 7, 8, 9], strict=True)]
    # z (no x: it starts no match) moves the watermark past a's and b's last rows plus 10 s.
    later = [row(1000, "z", None, None), row(1001, "z", None, None)]
    checkpoint = tmp_path / "checkpoint"
    with settings(spark, {TTL: "10000"}):
        stream = test_streaming.run_stream(
            spark,
            tmp_path,
            test_streaming.SCHEMA,
            test_streaming.COLUMNS,
            [keys_rows, later[:1], later[1:]],
            sql,
            checkpoint=checkpoint,
        )
    expected = run_batch(spark, test_streaming.SCHEMA, keys_rows + later, sql)
    assert len(expected) >= 2
    assert compare_rows(stream.rows, expected, ordered=False) is None
    if sql == test_streaming.V_SHAPE:
        # Each key's one V takes all its rows: only the partition's end decides its UP+.
        assert {(r[0], r[-1]) for r in expected} == {("a", 5), ("b", 4)}, expected
    state = (
        spark.read.format("statestore")
        .option("stateVarName", "match_recognize")
        .load(str(checkpoint))
    )
    assert sorted(r.key.part for r in state.collect()) == ["z"]


LATE_KEPT = "spark.sql.matchRecognize.streaming.lateRowsKept"


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_late_rows_are_kept_for_reading_back(spark, tmp_path, transform_with_state):
    """With late rows kept, a row behind rows of its key already matched is dropped from the
    matching (the stream still holds the batch result without it), counted in the progress,
    and kept in the key's state, from where the state data source reads it back. A row
    behind the watermark whose key has matched nothing after it is not late: it is matched,
    as in the batch query (Spark would have dropped it before the operator)."""
    row = test_streaming._row
    rows = test_streaming._walk_rows(40, ["a"], random.Random(4))
    late = [row(3, "a", 1000, 0), row(4, "a", 1001, 1)]  # behind a's matched rows
    # b's V, all behind the watermark when it arrives; b has no rows before it.
    # (Its last row, equal to the one before, ends the V's UP+.)
    late_key = [row(i, "b", x, 0) for i, x in zip(range(5, 11), [9, 7, 5, 8, 9, 9], strict=True)]
    tail = [row(10_000, "a", None, None)]
    checkpoint = tmp_path / "checkpoint"
    with settings(spark, {LATE_KEPT: "1"}):
        stream = test_streaming.run_stream(
            spark,
            tmp_path,
            test_streaming.SCHEMA,
            test_streaming.COLUMNS,
            [rows[:20], rows[20:], late + late_key, tail, [test_streaming._flush()]],
            test_streaming.V_SHAPE,
            checkpoint=checkpoint,
        )
    expected = run_batch(
        spark, test_streaming.SCHEMA, rows + late_key + tail, test_streaming.V_SHAPE
    )
    assert [r for r in expected if r[0] == "b"], "b's V must match"
    assert compare_rows(stream.rows, expected, ordered=False) is None
    metrics = [p.get("observedMetrics", {}).get("match_recognize") for p in stream.progress]
    counted = [m["late_rows"] for m in metrics if m is not None and m["late_rows"] is not None]
    assert sum(counted) == 2, counted
    kept = late_rows(spark, checkpoint)
    # One kept per key: the most recent, with the columns the query reads.
    assert [tuple(r) for r in kept.collect()] == [("a", 1001, late[1][4])]
    assert kept.columns == ["part", "x", "ts"]


def test_without_the_setting_reading_late_rows_says_what_to_set(
    spark, tmp_path, transform_with_state
):
    """Without the setting no late row is kept, and reading them back says why."""
    rows = [test_streaming._row(i, "a", 50 - i, 0) for i in range(1, 9)]
    checkpoint = tmp_path / "checkpoint"
    test_streaming.run_stream(
        spark,
        tmp_path,
        test_streaming.SCHEMA,
        test_streaming.COLUMNS,
        [rows, [test_streaming._flush()]],
        test_streaming.V_SHAPE,
        checkpoint=checkpoint,
    )
    with pytest.raises(ValueError, match="lateRowsKept"):
        late_rows(spark, checkpoint).collect()


@pytest.mark.parametrize(
    "setting, value, code",
    [(TTL, "60000", "STREAMING_STATE_TTL"), (LATE_KEPT, "10", "STREAMING_LATE_ROWS_KEPT")],
    ids=["time_to_live", "late_rows_kept"],
)
def test_a_setting_only_transform_with_state_serves_is_refused_in_the_other(
    spark, tmp_path, setting, value, code
):
    stream = test_streaming._analyze_over_stream(spark, tmp_path, test_streaming.V_SHAPE)
    with settings(spark, {setting: value}):
        with pytest.raises(AnalysisException) as info:
            stream.writeStream.format("memory").queryName("fmgws_refused").option(
                "checkpointLocation", str(tmp_path / "checkpoint")
            ).start().stop()
    message = str(info.value)
    assert f"MATCH_RECOGNIZE.{code}" in message, message
    assert "streaming.operator=transformWithState" in message, message


@pytest.mark.parametrize(
    "arguments", [{"operator_id": -1}, {"operator_id": "0"}, {"batch_id": True}, {"batch_id": 1.5}]
)
def test_late_rows_refuses_a_bad_argument_by_name(arguments):
    name = next(iter(arguments))
    with pytest.raises(ValueError, match=name):
        late_rows(None, "/nowhere", **arguments)
