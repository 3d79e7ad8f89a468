"""``PATTERNS FROM table`` over a stream: SKIP TILL ANY MATCH patterns, and late rows.

Under ``SKIP TILL ANY MATCH`` each pattern of the table runs its own one-pass trees, with its
own state in each key's: a pattern added starts with the rows that arrive from then on, a
removed one stops, a changed one starts over, and an unchanged one keeps its partial matches
across the changes and across a restart from the checkpoint, so that its rows equal the batch
query's over the same rows. A row whose pattern the stream cannot run is left out with the
reason, and ``pattern_table_status`` names it. A key's late rows are counted once, however
many patterns the table holds.
"""

from __future__ import annotations

import datetime
import uuid

import pytest

from result_compare import compare_rows
from session_settings import settings
from spark_match_recognize import pattern_table_status
from streaming_harness import SPARK_3
from test_pattern_tables import (
    EPOCH,
    SCHEMA,
    _await_watermark,
    _by_pattern,
    _collect,
    _feed,
    _observed,
    _start,
    _write_rules,
    run_table_schedule,
)
from test_pattern_tables import (
    SHARED as STANDARD_SHARED,
)

SHARED = """PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, LAST(B.id) AS b_id, COUNT(B.id) AS n
  ONE ROW PER MATCH SKIP TILL ANY MATCH"""
AFTER = "WITHIN INTERVAL '6' SECOND"
RULES = {
    "fall": ("A B", "A AS x > 6, B AS x < A.x - 3", None),
    "fall_rise": ("A B C", "A AS x > 5, B AS x < A.x, C AS x > B.x", None),
    "rally": ("A B+", "A AS x < 3, B AS x > A.x", None),
    "climb": ("A B", "A AS x < 3, B AS x > A.x + 4", None),
}
UNCHANGED = {"fall_rise": RULES["fall_rise"], "rally": RULES["rally"]}


@pytest.fixture
def rules(spark):
    """A global temporary view of patterns, which a running stream sees replaced at once."""
    name = f"global_temp.mr_any_rules_{uuid.uuid4().hex[:8]}"
    yield name
    spark.sql(f"DROP VIEW IF EXISTS {name}")


def _one(name: str, spec: tuple, source: str) -> str:
    pattern, define, subset = spec
    return (
        f"SELECT '{name}' AS pattern, * FROM {source} MATCH_RECOGNIZE ({SHARED} "
        f"PATTERN ({pattern}) {AFTER} {'SUBSET ' + subset if subset else ''} DEFINE {define})"
    )


def _query(table: str) -> str:
    return f"SELECT * FROM stream_events MATCH_RECOGNIZE ({SHARED} PATTERNS FROM {table} {AFTER})"


def _batch(spark, name: str, spec: tuple, rows: list[tuple]) -> list[tuple]:
    spark.createDataFrame(rows, SCHEMA).createOrReplaceTempView("segment")
    return _collect(spark, _one(name, spec, "segment"))


ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
OPERATORS = {
    "flatMapGroupsWithState": {},
    "transformWithState": {
        "spark.sql.matchRecognize.streaming.operator": "transformWithState",
        "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
    },
}


@pytest.mark.smoke
@pytest.mark.parametrize(
    "operator",
    [
        # The lines' own stateful API (shims) is transformWithState: each line runs it; the
        # older operator's run is shared out among the other lines' smoke runs.
        pytest.param("flatMapGroupsWithState", marks=pytest.mark.shared_smoke),
        "transformWithState",
    ],
)
def test_any_match_patterns_of_a_stream_follow_their_table(spark, tmp_path, rules, operator):
    if operator == "transformWithState" and SPARK_3:
        pytest.skip("transformWithState is Spark 4.0 and later")
    with settings(spark, OPERATORS[operator]):
        _follow_the_table(spark, tmp_path, rules)
    metadata = "".join(
        p.read_text(errors="replace") for p in (tmp_path / "chk" / "state").rglob("_metadata/v2/*")
    )
    assert ("transformWithStateExec" in metadata) == (operator == "transformWithState")


def _follow_the_table(spark, tmp_path, rules) -> None:
    changed_fall = ("A B", "A AS x > 7, B AS x < A.x - 5", None)
    # Changed: fall (its DEFINE); added, then removed: climb; the others unchanged.
    tables = [
        {"fall": RULES["fall"], **UNCHANGED},
        {"fall": changed_fall, **UNCHANGED, "climb": RULES["climb"]},
        {"fall": changed_fall, **UNCHANGED},
    ]
    segments, written, progress = run_table_schedule(
        spark, tmp_path, _query(rules), rules, tables, 21
    )
    everything = [r for s in segments for r in s]
    # Unchanged the whole time: their partial matches (and the matches a closure holds until
    # its window closes) lived across the changes and the restart.
    for name, spec in UNCHANGED.items():
        expected = _batch(spark, name, spec, everything)
        assert expected and compare_rows(written[name], expected, ordered=False) is None
        assert any(r[2] < 40 <= r[3] for r in expected), f"{name}: a match must span a change"
    # Changed before segment 1: the new DEFINE over the rows from then on ...
    new_fall = _batch(spark, "fall", changed_fall, everything[40:])
    assert new_fall
    assert compare_rows([r for r in written["fall"] if r[2] >= 40], new_fall, ordered=False) is None
    # ... and before it the old DEFINE's matches only.
    old_fall = set(_batch(spark, "fall", RULES["fall"], segments[0]))
    assert {r for r in written["fall"] if r[2] < 40} <= old_fall
    # Added before segment 1, removed before segment 3: the matches the watermark decided
    # before the removal (every row up to id 116 released).
    climb = _batch(spark, "climb", RULES["climb"], segments[1] + segments[2])
    decided = [r for r in climb if r[3] <= 116]
    assert decided and compare_rows(written["climb"], decided, ordered=False) is None
    metrics = _observed(progress)
    assert metrics
    if not SPARK_3:  # 3.5 reports nothing for the micro-batches that read no rows
        assert sum(m["matches"] for m in metrics) > 0
        assert {m["patterns"] for m in metrics} == {3, 4}
        assert sum(m["patterns_stopped"] for m in metrics) == 1


def test_a_pattern_its_trees_cannot_run_is_left_out_and_status_says_why(spark, tmp_path, rules):
    """ALL ROWS PER MATCH under SKIP TILL ANY MATCH writes several rows per match, which a
    table's patterns over a stream do not run: the status names the reason for each row."""
    table = rules
    _write_rules(spark, table, {"fall": RULES["fall"], "climb": RULES["climb"]})
    source = tmp_path / "src"
    source.mkdir()
    stream = spark.readStream.schema(SCHEMA).json(str(source)).withWatermark("ts", "3 seconds")
    shared = {
        "partition_by": "part",
        "order_by": "ts",
        "measures": {"a_id": "A.id"},
        "strategy": "SKIP TILL ANY MATCH",
        "within": "INTERVAL '6' SECOND",
    }
    runs = {
        r["name"]: (r["runs"], r["problem"])
        for r in pattern_table_status(stream, table, **shared).collect()
    }
    assert runs == {"fall": (True, None), "climb": (True, None)}
    every_row = dict(shared, rows_per_match="ALL ROWS PER MATCH")
    status = pattern_table_status(stream, table, **every_row).collect()
    assert {r["name"] for r in status} == {"fall", "climb"}
    for r in status:
        assert not r["runs"] and "ALL ROWS PER MATCH" in r["problem"], r


@pytest.mark.skipif(SPARK_3, reason="late rows are kept in transformWithState, Spark 4.0 and later")
def test_a_keys_late_rows_are_counted_once_whatever_the_patterns(spark, tmp_path, rules):
    _write_rules(
        spark, rules, {"low": ("L", "L AS x < 2", None), "high": ("H", "H AS x > 7", None)}
    )
    source, checkpoint, sink = tmp_path / "src", tmp_path / "chk", tmp_path / "sink"
    sql = f"SELECT * FROM stream_events MATCH_RECOGNIZE ({STANDARD_SHARED} PATTERNS FROM {rules})"
    at = [EPOCH + datetime.timedelta(seconds=s) for s in range(30)]
    late_kept = {"spark.sql.matchRecognize.streaming.lateRowsKept": "5"}
    with settings(spark, {**OPERATORS["transformWithState"], **late_kept}):
        query = _start(spark, source, sql, checkpoint, sink)
        try:
            _feed(query, source, [(i, "p", i % 10, at[i]) for i in range(20)])
            _feed(query, source, [(25, "p", 5, at[25])])
            _await_watermark(query, at[22])
            # Behind rows of p already matched: late, for every pattern of the table.
            _feed(query, source, [(100, "p", 1, at[3]), (101, "p", 9, at[4])])
            progress = list(query.recentProgress)
        finally:
            query.stop()
    metrics = _observed(progress)
    assert metrics and max(m["patterns"] for m in metrics) == 2
    assert sum(m["late_rows"] for m in metrics) == 2, metrics
    written = _by_pattern([tuple(r) for r in spark.read.parquet(str(sink)).collect()])
    assert {r[2] for r in written["low"]} == {0, 1, 10, 11}, written["low"]
