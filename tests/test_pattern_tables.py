"""``MATCH_RECOGNIZE (... PATTERNS FROM table)``: the patterns are rows of a table.

Over a batch input the result is the union of one MATCH_RECOGNIZE per row, read when the
query is analysed (a view reads the table again whenever it is read); a row that cannot be
a pattern fails the query, naming it. Over a stream the table is read again at every
micro-batch: a pattern added starts with the rows that arrive from then on, a removed one
stops, a changed one starts over, and the patterns left as they were keep their state (a
match in progress across the change, or across a restart from the checkpoint, completes):
each unchanged pattern's rows equal the batch query's over the same rows. A row that
cannot be a pattern is left out and counted in the progress; the others keep running.

Over 400 lines: batch and stream share the tables of patterns, the rows and the checks.
"""

from __future__ import annotations

import datetime
import random
import time
import uuid
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException, ParseException

from result_compare import compare_rows
from session_settings import settings
from spark_match_recognize import match_pattern_table, match_pattern_table_sql
from streaming_harness import SPARK_3, write_batches

EPOCH = datetime.datetime(2024, 1, 1)
# A row far in the future, in a key of its own, whose watermark releases every other row.
FLUSH_TS = EPOCH + datetime.timedelta(days=10)
SCHEMA = "id INT, part STRING, x INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "x", "ts"]
SHARED = """PARTITION BY part ORDER BY ts
  MEASURES FIRST(id) AS first_id, LAST(id) AS last_id, COUNT(*) AS n"""
RULES = {
    "rise": ("A B C", "B AS x > PREV(x), C AS x > PREV(x)", None),
    "low": ("L", "L AS x < 2", None),
    "peak": ("U D", "U AS x > 6, D AS x < 3", None),
    "either": ("E", "E AS x = 5", None),
}


def _rows(n: int, seed: int, start: int = 0) -> list[tuple]:
    rng = random.Random(seed)
    return [
        (i, rng.choice(["p", "q"]), rng.randint(0, 9), EPOCH + datetime.timedelta(seconds=i))
        for i in range(start, start + n)
    ]


def _write_rules(spark, table: str, rules: dict) -> None:
    values = ", ".join(
        "({}, {}, {}, {})".format(
            *("NULL" if v is None else "'" + v.replace("'", "''") + "'" for v in (name, *spec))
        )
        for name, spec in rules.items()
    )
    if table.startswith("global_temp."):
        # Replaced at once, where a running stream's session sees it.
        body = f"VALUES {values}" if values else "SELECT NULL, NULL, NULL, NULL WHERE false"
        spark.sql(
            f"CREATE OR REPLACE GLOBAL TEMP VIEW {table.split('.')[1]} "
            f"(name, pattern, define, subset) AS {body}"
        )
        return
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(
        f"CREATE TABLE {table} (name STRING, pattern STRING, define STRING, subset STRING) "
        "USING parquet"
    )
    if values:
        spark.sql(f"INSERT INTO {table} VALUES {values}")


def _one(name: str, spec: tuple, source: str = "events") -> str:
    pattern, define, subset = spec
    return (
        f"SELECT '{name}' AS pattern, * FROM {source} MATCH_RECOGNIZE ({SHARED} "
        f"PATTERN ({pattern}) {'SUBSET ' + subset if subset else ''} DEFINE {define})"
    )


def _table_query(table: str, source: str = "events", after: str = "") -> str:
    return f"SELECT * FROM {source} MATCH_RECOGNIZE ({SHARED} PATTERNS FROM {table} {after})"


def _collect(spark, sql: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(sql).collect()]


@pytest.fixture
def rules_table(spark):
    name = f"mr_rules_{uuid.uuid4().hex[:8]}"
    yield name
    spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.fixture
def rules_view(spark):
    """A global temporary view of patterns: a stream's session sees it replaced at once (a
    table's files rewritten under a running query may be read half-written)."""
    name = f"mr_rules_{uuid.uuid4().hex[:8]}"
    yield f"global_temp.{name}"
    spark.sql(f"DROP VIEW IF EXISTS global_temp.{name}")


@pytest.fixture
def events(spark):
    spark.createDataFrame(_rows(120, 7), SCHEMA).createOrReplaceTempView("events")


@pytest.mark.smoke
def test_batch_rows_are_each_patterns_own(spark, rules_table, events):
    rules = dict(RULES, sub=("A B", "A AS x > 4, B AS x > 4", "S = (A, B)"))
    _write_rules(spark, rules_table, rules)
    got = _collect(spark, _table_query(rules_table))
    expected = [row for name, spec in rules.items() for row in _collect(spark, _one(name, spec))]
    assert {r[0] for r in expected} == set(rules)
    assert compare_rows(got, expected, ordered=False) is None


def test_skip_till_any_match_patterns_of_a_table_are_planned_together(spark, rules_table, events):
    rules = {
        "ab": ("A B", "A AS x > 6, B AS x < A.x", None),
        "abc": ("A B C", "A AS x > 6, B AS x < A.x, C AS x > B.x", None),
    }
    _write_rules(spark, rules_table, rules)
    shared = "PARTITION BY part ORDER BY ts MEASURES A.id AS a_id, B.id AS b_id SKIP TILL ANY MATCH"
    sql = (
        f"SELECT * FROM events MATCH_RECOGNIZE ({shared} "
        f"PATTERNS FROM {rules_table} WITHIN INTERVAL '10' SECOND)"
    )
    got = _collect(spark, sql)
    expected = []
    for name, (pattern, define, _) in rules.items():
        expected += _collect(
            spark,
            f"SELECT '{name}' AS pattern, * FROM events MATCH_RECOGNIZE ({shared} "
            f"PATTERN ({pattern}) WITHIN INTERVAL '10' SECOND DEFINE {define})",
        )
    assert expected and compare_rows(got, expected, ordered=False) is None
    plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString()
    assert "patterns planned together: one input for 2 patterns" in plan, plan


def test_a_view_reads_the_table_when_it_is_read(spark, rules_table, events):
    _write_rules(spark, rules_table, {"low": RULES["low"]})
    spark.sql(f"CREATE OR REPLACE TEMP VIEW mr_table_view AS {_table_query(rules_table)}")
    first = {r[0] for r in _collect(spark, "SELECT * FROM mr_table_view")}
    spark.sql(f"INSERT INTO {rules_table} VALUES ('either', 'E', 'E AS x = 5', NULL)")
    second = {r[0] for r in _collect(spark, "SELECT * FROM mr_table_view")}
    assert (first, second) == ({"low"}, {"low", "either"})


def test_an_empty_table_gives_the_columns_and_no_rows(spark, rules_table, events):
    _write_rules(spark, rules_table, {})
    df = spark.sql(_table_query(rules_table))
    assert df.columns == ["pattern", "part", "first_id", "last_id", "n"]
    assert df.collect() == []


@pytest.mark.parametrize(
    ("rules", "named", "says"),
    [
        ({"bad": ("A B", "B AS nope > 1", None)}, "bad", "nope"),
        ({"open": ("A (B", "B AS x > 1", None)}, "open", "PATTERN"),
        ({"escape": ("A", "A AS x > 1) m, (SELECT 1", None)}, "escape", "outside its own"),
        ({"sub": ("A", "A AS x > (SELECT max(x) FROM events)", None)}, "sub", "subquery"),
        ({"twice": ("A", "A AS x > 1", None)}, "twice", ""),
    ],
    ids=[
        "unknown column",
        "unclosed pattern",
        "text escaping its clause",
        "subquery",
        "name twice",
    ],
)
def test_a_row_that_cannot_be_a_pattern_fails_a_batch_query_by_name(
    spark, rules_table, events, rules, named, says
):
    _write_rules(spark, rules_table, dict(rules, fine=RULES["low"]))
    if named == "twice":
        spark.sql(f"INSERT INTO {rules_table} VALUES ('twice', 'B', 'B AS x > 2', NULL)")
        says = "more than one row"
    with pytest.raises(AnalysisException) as error:
        spark.sql(_table_query(rules_table)).collect()
    message = str(error.value)
    assert "PATTERN_TABLE" in message and f"Pattern '{named}'" in message, message
    assert says in message, message


def test_a_table_without_the_columns_is_refused(spark, rules_table, events):
    spark.sql(f"CREATE TABLE {rules_table} (name STRING, text STRING) USING parquet")
    with pytest.raises(AnalysisException, match="has no column `pattern`"):
        spark.sql(_table_query(rules_table))


def test_the_clause_cannot_name_a_pattern_beside_its_table(spark, rules_table, events):
    with pytest.raises(ParseException, match="come from the table's rows"):
        spark.sql(
            f"SELECT * FROM events MATCH_RECOGNIZE (ORDER BY ts PATTERNS FROM {rules_table} "
            "DEFINE A AS x > 1)"
        )
    with pytest.raises(ParseException, match="only WITHIN may follow"):
        spark.sql(
            f"SELECT * FROM events MATCH_RECOGNIZE (ORDER BY ts PATTERNS FROM {rules_table} x)"
        )


def test_python_api_runs_the_same_statement(spark, rules_table, events):
    _write_rules(spark, rules_table, RULES)
    df = spark.table("events")
    got = match_pattern_table(
        df,
        rules_table,
        partition_by="part",
        order_by="ts",
        measures={"first_id": "FIRST(id)", "last_id": "LAST(id)", "n": "COUNT(*)"},
    ).collect()
    assert (
        compare_rows(
            [tuple(r) for r in got], _collect(spark, _table_query(rules_table)), ordered=False
        )
        is None
    )
    assert "PATTERNS FROM t" in match_pattern_table_sql("events", "t", order_by="ts")
    with pytest.raises(TypeError, match="columns of the table"):
        match_pattern_table_sql("events", "t", order_by="ts", pattern="A")
    with pytest.raises(TypeError, match="unknown arguments"):
        match_pattern_table(df, rules_table, define={"A": "x > 1"})


# ---- streams ------------------------------------------------------------------------------


def _start(spark, source: Path, sql: str, checkpoint: Path, sink: Path):
    source.mkdir(parents=True, exist_ok=True)
    # `x` computed: the input's columns must reach the patterns whatever they read.
    spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source)).selectExpr(
        "id", "part", "abs(x) AS x", "ts"
    ).withWatermark("ts", "3 seconds").createOrReplaceTempView("stream_events")
    return (
        spark.sql(sql)
        .writeStream.format("parquet")
        .option("path", str(sink))
        .option("checkpointLocation", str(checkpoint))
        .start()
    )


def _feed(query, source: Path, batch: list[tuple]) -> None:
    write_batches(source, COLUMNS, [batch])
    query.processAllAvailable()


def _batch(spark, name: str, spec: tuple, rows: list[tuple]) -> list[tuple]:
    spark.createDataFrame(rows, SCHEMA).createOrReplaceTempView("segment")
    return _collect(spark, _one(name, spec, "segment"))


def _by_pattern(rows: list[tuple]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(r)
    return out


def _await_watermark(query, at: datetime.datetime, seconds: float = 120) -> None:
    """Waits until a micro-batch has run with the watermark at ``at`` (the micro-batch
    without rows that follows the one moving it)."""
    want = at.strftime("%Y-%m-%dT%H:%M:%S")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not query.isActive:
            raise AssertionError(f"the query stopped: {query.exception()}")
        last = query.lastProgress
        if last and last.get("eventTime", {}).get("watermark", "").startswith(want):
            return
        time.sleep(0.1)
    raise AssertionError(f"the watermark did not reach {want}: {query.lastProgress}")


def _observed(progress: list) -> list:
    """The micro-batches' metrics `match_recognize_patterns` (Spark 3.5 reports none for a
    micro-batch that read no rows)."""
    found = [p.get("observedMetrics", {}).get("match_recognize_patterns") for p in progress]
    return [m for m in found if m is not None]


def run_table_schedule(spark, tmp_path, sql: str, table: str, tables: list[dict], seed: int):
    """Four segments of rows (40 each, ids from 40 * k) through ``sql``: the table holds
    ``tables[0]`` at the start, ``tables[1]`` from segment 1 on (the query restarted from its
    checkpoint after that segment), and ``tables[2]`` from segment 3 on, changed once the
    watermark released every row of segment 2 but its last 3 s. Returns the segments, the
    rows each pattern wrote, and the progress of the run after the restart."""
    source, checkpoint, sink = tmp_path / "src", tmp_path / "chk", tmp_path / "sink"
    segments = [_rows(40, seed + k, start=40 * k) for k in range(4)]
    flush = [(100_000, "zz", 0, FLUSH_TS)]
    _write_rules(spark, table, tables[0])
    query = _start(spark, source, sql, checkpoint, sink)
    try:
        _feed(query, source, segments[0])
        _write_rules(spark, table, tables[1])
        _feed(query, source, segments[1])
        query.stop()
        query = _start(spark, source, sql, checkpoint, sink)
        _feed(query, source, segments[2])
        _await_watermark(query, segments[2][-1][3] - datetime.timedelta(seconds=3))
        _write_rules(spark, table, tables[2])
        _feed(query, source, segments[3])
        _feed(query, source, flush)
        _await_watermark(query, FLUSH_TS - datetime.timedelta(seconds=3))
        progress = list(query.recentProgress)
    finally:
        query.stop()
    written = [tuple(r) for r in spark.read.parquet(str(sink)).collect()]
    return segments, _by_pattern(written), progress


def _run_changing_stream(spark, tmp_path, rules_table):
    """The table changed between segments (added: low; changed: peak's DEFINE; then removed:
    low; rise unchanged throughout), the query restarted from its checkpoint once."""
    changed_peak = ("U D", "U AS x > 7, D AS x < 2", None)
    tables = [
        {"rise": RULES["rise"], "peak": RULES["peak"]},
        {"rise": RULES["rise"], "peak": changed_peak, "low": RULES["low"]},
        {"rise": RULES["rise"], "peak": changed_peak},
    ]
    sql = _table_query(rules_table, "stream_events")
    segments, written, progress = run_table_schedule(spark, tmp_path, sql, rules_table, tables, 11)
    return segments, changed_peak, written, progress


def _check_changing_stream(spark, segments, changed_peak, written) -> None:
    everything = [r for s in segments for r in s]
    # Unchanged the whole time, across the other patterns' changes and the restart.
    rise = _batch(spark, "rise", RULES["rise"], everything)
    assert rise and compare_rows(written["rise"], rise, ordered=False) is None
    # Changed before segment 1: the new DEFINE over the rows from then on, exactly ...
    new_peak = _batch(spark, "peak", changed_peak, everything[40:])
    after_change = [r for r in written["peak"] if r[2] >= 40]
    assert compare_rows(after_change, new_peak, ordered=False) is None
    # ... and before it the old DEFINE's matches only.
    old_peak = _batch(spark, "peak", RULES["peak"], segments[0])
    before = [r for r in written["peak"] if r[2] < 40]
    assert set(before) <= set(old_peak), (before, old_peak)
    # Added before segment 1 and removed before segment 3: rows of segments 1-2 only.
    low = _batch(spark, "low", RULES["low"], segments[1] + segments[2])
    # Exactly the rows the watermark released before the removal (up to id 116).
    released = [r for r in low if r[2] <= 116]
    assert compare_rows(written["low"], released, ordered=False) is None


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_a_stream_follows_its_table_without_restarting(spark, tmp_path, rules_view):
    segments, changed_peak, written, progress = _run_changing_stream(spark, tmp_path, rules_view)
    _check_changing_stream(spark, segments, changed_peak, written)
    metrics = _observed(progress)
    assert metrics and {m["patterns"] for m in metrics} <= {2, 3}
    if not SPARK_3:  # 3.5 reports nothing for the micro-batches that read no rows
        # The run after the restart: three patterns, then two; it went on with the patterns
        # of the run before, then stopped one.
        assert {m["patterns"] for m in metrics} == {2, 3}
        assert sum(m["patterns_started"] for m in metrics) == 0
        assert sum(m["patterns_stopped"] for m in metrics) == 1
        assert sum(m["matches"] for m in metrics) > 0


@pytest.mark.skipif(SPARK_3, reason="transformWithState is Spark 4.0 and later")
def test_a_stream_follows_its_table_in_transform_with_state(spark, tmp_path, rules_view):
    rocksdb = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    with settings(
        spark,
        {
            "spark.sql.matchRecognize.streaming.operator": "transformWithState",
            "spark.sql.streaming.stateStore.providerClass": rocksdb,
        },
    ):
        segments, changed_peak, written, _ = _run_changing_stream(spark, tmp_path, rules_view)
    _check_changing_stream(spark, segments, changed_peak, written)
    metadata = list((tmp_path / "chk" / "state").rglob("_metadata/v2/*"))
    assert any("transformWithStateExec" in p.read_text(errors="replace") for p in metadata)


def test_a_stream_leaves_out_a_row_that_cannot_be_a_pattern_and_counts_it(
    spark, tmp_path, rules_view
):
    rules_table = rules_view
    source, checkpoint, sink = tmp_path / "src", tmp_path / "chk", tmp_path / "sink"
    _write_rules(spark, rules_table, {"low": RULES["low"], "bad": ("A B", "B AS nope > 1", None)})
    rows = _rows(60, 5)
    query = _start(spark, source, _table_query(rules_table, "stream_events"), checkpoint, sink)
    try:
        _feed(query, source, rows[:30])
        bad_metrics = _observed(query.recentProgress)[-1]
        # Fixed in the table: it runs from the next micro-batch on.
        _write_rules(spark, rules_table, {"low": RULES["low"], "bad": ("A", "A AS x > 8", None)})
        _feed(query, source, rows[30:])
        _feed(query, source, [(100_000, "zz", 0, FLUSH_TS)])
        # Every row released: the micro-batch without rows after the flush has run.
        _await_watermark(query, FLUSH_TS - datetime.timedelta(seconds=3))
        fixed_metrics = _observed(query.recentProgress)[-1]
    finally:
        query.stop()
    assert (bad_metrics["patterns"], bad_metrics["invalid_patterns"]) == (1, 1)
    assert (fixed_metrics["patterns"], fixed_metrics["invalid_patterns"]) == (2, 0)
    written = _by_pattern([tuple(r) for r in spark.read.parquet(str(sink)).collect()])
    low = _batch(spark, "low", RULES["low"], rows)
    assert compare_rows(written["low"], low, ordered=False) is None
    fixed = _batch(spark, "bad", ("A", "A AS x > 8", None), rows[30:])
    assert fixed and compare_rows(written["bad"], fixed, ordered=False) is None
