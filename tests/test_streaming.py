"""MATCH_RECOGNIZE over Structured Streaming: the stream's output equals the batch query's
on the same rows, whatever the micro-batches and the arrival order within the watermark
delay; late rows are dropped and counted; a restarted query continues from its checkpoint
without losing or repeating a match; and what a stream cannot do is refused at analysis.

Each stream ends with one row per partition (a *sentinel*, after all of that partition's
rows, its value columns NULL) that no DEFINE accepts: like the partition end of the batch
query it decides the matches still open, which a stream otherwise holds until the
partition's next row arrives. The batch query reads the same rows, sentinels included.

Over 400 lines: its tests share the streaming harness and the sentinel convention below.
"""

from __future__ import annotations

import datetime
import os
import random
import re

import pytest
from pyspark.errors import AnalysisException

from reference import rpr
from reference.random_cases import generate
from result_compare import compare_rows
from streaming_harness import (
    FLUSH_ID,
    FLUSH_PART,
    SPARK_3,
    arrival_batches,
    assert_stream_equals_batch,
    run_batch,
    run_stream,
)

CASES = int(os.environ.get("SMR_STREAM_CASES", "5"))
SEED_BASE = int(os.environ.get("SMR_STREAM_SEED", "20261126"))

EPOCH = datetime.datetime(2024, 1, 1)
SCHEMA = "id INT, part STRING, x INT, y INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "x", "y", "ts"]


def _at(seconds: float) -> datetime.datetime:
    return EPOCH + datetime.timedelta(seconds=seconds)


def _row(row_id: int, part: str, x, y) -> tuple:
    return (row_id, part, x, y, _at(row_id))


def _next_offsets(text: str) -> int:
    """The largest NEXT offset in `text` (0 without NEXT)."""
    best, i = 0, 0
    while (i := text.upper().find("NEXT(", i)) >= 0:
        depth, j, commas = 0, i + 4, []
        while j < len(text):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            elif text[j] == "," and depth == 1:
                commas.append(j)
            j += 1
        best = max(best, int(text[commas[-1] + 1 : j]) if commas else 1)
        i += 5
    return best


def _lookaheads(sql: str) -> tuple[int, int]:
    """How many rows after a row the DEFINE conditions and the MEASURES read."""
    upper = sql.upper()
    define = sql[upper.rindex("DEFINE") :]
    m = re.search(r"MEASURES(.*?)(ONE ROW|ALL ROWS|AFTER MATCH|PATTERN)", sql, flags=re.S | re.I)
    return _next_offsets(define), _next_offsets(m.group(1) if m else "")


def _within_rows(sql: str) -> int:
    m = re.search(r"WITHIN (\d+) ROWS", sql)
    return int(m.group(1)) if m else 0


def _closing_rows(rows: list[tuple], sql: str) -> tuple[list[tuple], list[tuple]]:
    """Rows after each partition's own, all value columns NULL, which no DEFINE accepts.

    The *sentinels* (read by the stream and the batch query alike) end every match still
    open, as the batch query's partition end does, and give the measures that read ahead
    the rows they read. The *trailers* (stream only) are the rows the DEFINE conditions
    read ahead of the last sentinel, so that the stream offers it to the automaton; the
    trailers themselves are never offered (they wait for rows after them)."""
    define_ahead, measure_ahead = _lookaheads(sql)
    sentinels, trailers = [], []
    for i, part in enumerate(sorted({r[1] for r in rows})):
        t = 10_000 + 100 * i
        # Under SKIP TILL NEXT MATCH a match in progress skips the sentinels; only its
        # window (WITHIN n ROWS: n more rows) ends it.
        count = 1 + measure_ahead + _within_rows(sql)
        sentinels += [_row(t + k, part, None, None) for k in range(count)]
        trailers += [_row(t + 50 + k, part, None, None) for k in range(define_ahead)]
    return sentinels, trailers


def _flush() -> tuple:
    return _row(FLUSH_ID, FLUSH_PART, None, None)


def _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=0, may_be_empty=False):
    """The stream equals the batch query on `rows` and their sentinels (see above)."""
    sentinels, trailers = _closing_rows(rows, sql)
    return assert_stream_equals_batch(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        rows + sentinels,
        sql,
        time_of=lambda r: r[0],
        flush=_flush(),
        seed=seed,
        stream_only=trailers,
        may_be_empty=may_be_empty,
    )


V_SHAPE = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES FIRST(ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(ts) AS end_ts,
           MATCH_NUMBER() AS n, count(*) AS len
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE STRT AS x IS NOT NULL, DOWN AS x < PREV(x), UP AS x > PREV(x))
"""


def _walk_rows(n: int, parts: list[str], rng: random.Random) -> list[tuple]:
    rows, level = [], {p: 50 for p in parts}
    for i in range(1, n + 1):
        p = rng.choice(parts)
        level[p] += rng.choice([-3, -2, -1, 1, 2, 3])
        rows.append(_row(i, p, level[p], rng.randint(0, 9)))
    return rows


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_v_shape_stream_equals_batch_over_many_micro_batches(spark, tmp_path):
    rows = _walk_rows(120, ["a", "b", "c"], random.Random(1))
    stream, expected = _assert_stream_equals_batch(spark, tmp_path, rows, V_SHAPE, seed=1)
    assert len(expected) >= 10  # the data has matches to compare
    assert len(stream.progress) >= 20  # and they came over many micro-batches
    # Each progress reports the matches it wrote and the most partial matches a key had.
    metrics = stream.observed()
    assert sum(m["matches"] or 0 for m in metrics) == len(expected)
    assert max(m.get("peak_partial_matches_per_key") or 0 for m in metrics) > 0


def test_all_rows_per_match_reports_matches_not_rows(spark, tmp_path):
    sql = (
        V_SHAPE.replace("ONE ROW PER MATCH", "ALL ROWS PER MATCH")
        .replace("MATCH_NUMBER() AS n, count(*) AS len", "MATCH_NUMBER() AS n")
        .replace("SELECT *", "SELECT part, n")
    )
    rows = _walk_rows(80, ["a", "b"], random.Random(4))
    stream, expected = _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=4)
    matches = set(expected)  # (part, MATCH_NUMBER())
    assert len(expected) > len(matches) >= 5
    metrics = stream.observed()
    assert sum(m["matches"] or 0 for m in metrics) == len(matches)


@pytest.mark.parametrize(
    "clause",
    [
        "ALL ROWS PER MATCH AFTER MATCH SKIP TO NEXT ROW",
        "ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP PAST LAST ROW",
        "ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP",
        "ONE ROW PER MATCH SKIP TILL NEXT MATCH",
        "ONE ROW PER MATCH SKIP TILL NEXT MATCH WITHIN 6 ROWS",
    ],
)
def test_output_and_skip_modes_stream_equals_batch(spark, tmp_path, clause):
    # SKIP TILL NEXT MATCH over a stream needs a window: by time, or by rows.
    within = "WITHIN" + clause.split(" WITHIN")[1] if " WITHIN" in clause else ""
    if "NEXT MATCH" in clause and not within:
        within = "WITHIN INTERVAL '6' SECOND"
    sql = f"""
    SELECT * FROM events MATCH_RECOGNIZE (
      PARTITION BY part ORDER BY ts
      MEASURES FIRST(ts) AS start_ts, LAST(ts) AS end_ts, MATCH_NUMBER() AS n,
               CLASSIFIER() AS cls, NEXT(x) AS next_x
      {clause.split(" WITHIN")[0]}
      PATTERN (STRT DOWN+ UP{{1,3}}) {within}
      DEFINE STRT AS x IS NOT NULL, DOWN AS x < PREV(x), UP AS x > PREV(x) AND y < 8)
    """
    rows = _walk_rows(60, ["a", "b"], random.Random(2))
    _assert_stream_equals_batch(spark, tmp_path, rows, sql, seed=2)


def test_keyless_pattern_with_within_and_ties_stream_equals_batch(spark, tmp_path):
    rng = random.Random(3)
    # Ties on ts (two rows per second) are broken by the other columns, as in batch.
    rows = [(i, "all", rng.randint(0, 9), rng.randint(0, 9), _at(i // 2)) for i in range(1, 70)]
    sql = """
    SELECT * FROM events MATCH_RECOGNIZE (
      ORDER BY ts
      MEASURES FIRST(A.id) AS a_id, LAST(B.id) AS b_id, count(B.*) AS bs
      AFTER MATCH SKIP TO NEXT ROW
      PATTERN (A B+ C)
      WITHIN INTERVAL '4' SECOND
      DEFINE A AS x >= 7, B AS x < A.x, C AS y > 5)
    """
    closed = rows + [(10_000, "all", None, None, _at(10_000))]
    _, expected = assert_stream_equals_batch(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        closed,
        sql,
        time_of=lambda r: (r[4] - EPOCH).total_seconds(),
        flush=_flush(),
        seed=3,
    )
    assert len(expected) >= 3


def test_late_rows_are_dropped_and_counted(spark, tmp_path):
    rows = _walk_rows(40, ["a"], random.Random(4))
    late = _row(3, "a", 1000, 0)  # behind the watermark when it arrives
    batches = [rows[:20], rows[20:], [late], [_row(10_000, "a", None, None)], [_flush()]]
    stream = run_stream(spark, tmp_path, SCHEMA, COLUMNS, batches, V_SHAPE)
    assert stream.dropped_by_watermark() == 1
    expected = run_batch(spark, SCHEMA, rows + [_row(10_000, "a", None, None)], V_SHAPE)
    assert compare_rows(stream.rows, expected, ordered=False) is None


def test_a_match_waits_for_the_row_that_decides_it(spark, tmp_path):
    """UP+ is greedy: the match is decided only by the partition's next row, so a stream
    holds it until that row arrives and the watermark passes it."""
    rows = [_row(i, "a", x, 0) for i, x in enumerate([5, 3, 1, 2, 4], start=1)]
    held = run_stream(spark, tmp_path, SCHEMA, COLUMNS, [rows, [_flush()]], V_SHAPE)
    assert held.rows == []
    source = tmp_path / "decided"
    done = run_stream(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        [rows, [_row(6, "a", 0, 0)], [_flush()]],
        V_SHAPE,
        source_dir=source,
    )
    assert [(r[0], r[4], r[5]) for r in done.rows] == [("a", 1, 5)]


def test_within_decides_open_matches_once_the_watermark_closes_the_window(spark, tmp_path):
    """With WITHIN INTERVAL no row later than the window can join a match: once the
    watermark passes the last row by the window, the open match is decided without the
    partition's next row, and equals the batch result."""
    sql = V_SHAPE.replace(
        "PATTERN (STRT DOWN+ UP+)", "PATTERN (STRT DOWN+ UP+) WITHIN INTERVAL '10' SECOND"
    )
    rows = [_row(i, "a", x, 0) for i, x in enumerate([5, 3, 1, 2, 4], start=1)]
    stream = run_stream(spark, tmp_path, SCHEMA, COLUMNS, [rows, [_flush()]], sql)
    expected = run_batch(spark, SCHEMA, rows, sql)
    assert len(expected) == 1
    assert compare_rows(stream.rows, expected, ordered=False) is None


def _restartable(spark, tmp_path, sql, first, second):
    """Runs the query over `first`, stops, adds `second` to the source and runs it again
    from the same checkpoint into a parquet sink; returns the sink's rows."""
    source, checkpoint, sink = tmp_path / "src", tmp_path / "chk", tmp_path / "sink"
    from streaming_harness import write_batches

    for batches in (first, second):
        write_batches(source, COLUMNS, batches)
        stream = (
            spark.readStream.schema(SCHEMA)
            .option("maxFilesPerTrigger", 1)
            .json(str(source))
            .withWatermark("ts", "5 seconds")
        )
        stream.createOrReplaceTempView("events")
        query = (
            spark.sql(sql)
            .writeStream.format("parquet")
            .option("path", str(sink))
            .option("checkpointLocation", str(checkpoint))
            .outputMode("append")
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        assert query.exception() is None
    return [tuple(r) for r in spark.read.parquet(str(sink)).collect()]


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_restart_from_checkpoint_loses_and_repeats_nothing(spark, tmp_path):
    rows = _walk_rows(90, ["a", "b"], random.Random(5))
    closed = rows + _closing_rows(rows, V_SHAPE)[0]
    batches = arrival_batches(closed, lambda r: r[0], 5, random.Random(5))
    cut = len(batches) // 2
    # The first run stops with matches in progress and rows waiting for the watermark.
    got = _restartable(spark, tmp_path, V_SHAPE, batches[:cut], batches[cut:] + [[_flush()]])
    expected = run_batch(spark, SCHEMA, closed, V_SHAPE)
    assert len(expected) >= 5
    assert compare_rows(got, expected, ordered=False) is None


LONG_MATCHES = """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES FIRST(id) AS first_id, LAST(id) AS last_id, count(*) AS n, sum(B.x) AS total,
           MATCH_NUMBER() AS m
  ONE ROW PER MATCH AFTER MATCH SKIP TO LAST C
  PATTERN (A B* C)
  DEFINE A AS x = 0, B AS x > 0 AND sum(B.y) < 100000, C AS x = 0)
"""


def test_long_matches_continue_across_micro_batches_and_a_restart(spark, tmp_path):
    """Matches of hundreds of rows are in progress across many micro-batches (a key then
    keeps its automaton between them instead of reading its rows again) and across a stop:
    the restarted query reads them back from its state. The output is the batch result."""
    rng = random.Random(13)
    rows, row_id = [], 0
    for _ in range(600):
        row_id += 1
        part = rng.choice(["a", "b"])
        boundary = rng.random() < 1 / 150
        rows.append(_row(row_id, part, 0 if boundary else rng.randint(1, 9), rng.randint(0, 9)))
    closed = rows + _closing_rows(rows, LONG_MATCHES)[0]
    batches = arrival_batches(closed, lambda r: r[0], 5, random.Random(13), max_batch=80)
    cut = len(batches) // 2
    got = _restartable(spark, tmp_path, LONG_MATCHES, batches[:cut], batches[cut:] + [[_flush()]])
    expected = run_batch(spark, SCHEMA, closed, LONG_MATCHES)
    assert len(expected) >= 3 and max(r[4] for r in expected) > 100, expected
    assert compare_rows(got, expected, ordered=False) is None


def test_the_kept_state_budget_setting_reaches_the_tasks(spark, tmp_path):
    """``streaming.keptStateBytes`` set in the session raises the budget of the states each
    JVM keeps between a key's calls (in local mode, the driver's), as tasks read it."""
    from session_settings import settings

    budget = spark._jvm.org.apache.spark.sql.matchrecognize.streaming.DecodedStates.shared()
    wanted = budget.limit() + 123 * 1024 * 1024
    rows = _walk_rows(20, ["a"], random.Random(1))
    with settings(spark, {"spark.sql.matchRecognize.streaming.keptStateBytes": str(wanted)}):
        run_stream(spark, tmp_path, SCHEMA, COLUMNS, [rows], V_SHAPE)
    assert budget.limit() == wanted


def test_a_killed_driver_restarts_from_its_checkpoint_without_loss_or_repeat(spark, tmp_path):
    """The driver process is killed (SIGKILL) part-way through a stream, between or inside
    micro-batches; a new process with the same checkpoint finishes it. The parquet sink
    then holds exactly the batch result."""
    import json
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from streaming_harness import write_batches

    rows = _walk_rows(90, ["a", "b", "c"], random.Random(7))
    closed = rows + _closing_rows(rows, V_SHAPE)[0]
    batches = arrival_batches(closed, lambda r: r[0], 5, random.Random(7), max_batch=8)
    source, sink, checkpoint = tmp_path / "src", tmp_path / "sink", tmp_path / "chk"
    write_batches(source, COLUMNS, batches + [[_flush()]])
    spec = tmp_path / "spec.json"
    runner = Path(__file__).with_name("streaming_killable_runner.py")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[1] / "python"))

    def run(mode: str):
        spec.write_text(
            json.dumps(
                dict(
                    source=str(source),
                    sink=str(sink),
                    checkpoint=str(checkpoint),
                    schema=SCHEMA,
                    sql=V_SHAPE,
                    mode=mode,
                )
            )
        )
        return subprocess.Popen(
            [sys.executable, str(runner), str(spec)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    first = run("forever")
    commits = checkpoint / "commits"
    deadline = time.time() + 240
    # Killed once a few micro-batches have committed, well before the last file is read.
    while time.time() < deadline and len(list(commits.glob("[0-9]*"))) < 8:
        assert first.poll() is None, first.stderr.read()[-3000:]
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)
    first.wait()
    done = len(list(commits.glob("[0-9]*")))
    assert 8 <= done < len(batches), f"{done} micro-batches committed before the kill"

    second = run("finish")
    out, err = second.communicate(timeout=400)
    assert second.returncode == 0 and "FINISHED" in out, err[-3000:]
    got = [tuple(r) for r in spark.read.parquet(str(sink)).collect()]
    expected = run_batch(spark, SCHEMA, closed, V_SHAPE)
    assert len(expected) >= 10
    assert compare_rows(got, expected, ordered=False) is None


# -- random patterns ---------------------------------------------------------------------


def _has_end_anchor(node) -> bool:
    if isinstance(node, rpr.End):
        return True
    items = getattr(node, "items", None)
    if items is not None:
        return any(_has_end_anchor(i) for i in items)
    item = getattr(node, "item", None)
    return item is not None and _has_end_anchor(item)


def _streaming_sql(spec) -> str:
    """The random case's query over the `events` view, ordered by ts (from the unique id),
    with every variable's DEFINE refusing a NULL x, so that the sentinels match nothing."""
    text = spec.sql()
    text = re.sub(r"FROM \(VALUES.*?\) AS t\([^)]*\)", "FROM events", text, flags=re.S)
    text = text.replace("  ORDER BY id", "  ORDER BY ts")
    defined = dict(spec.define)
    variables = rpr.pattern_variables(spec.pattern)
    defines = [
        f"    {v} AS ({defined[v].sql()}) AND x IS NOT NULL"
        if v in defined
        else f"    {v} AS x IS NOT NULL"
        for v in variables
    ]
    head = text[: text.rindex("  DEFINE")]
    return head + "  DEFINE\n" + ",\n".join(defines) + "\n) AS mr"


def _check_random_cases(level: str, first_seed: int, query_of, check) -> None:
    """Draws the reference generator's cases from `first_seed` on until CASES of them have a
    streaming query (`query_of(spec, seed)`, None to pass the case over) and runs
    `check(seed, rows, sql)` on each, which returns how many rows the query wrote; reports
    the first two failures with their seeds. A case may write no row, but two empty outputs
    compare nothing: at least half the cases must write rows."""
    done, seed, failures, written = 0, first_seed, [], 0
    while done < CASES and seed < first_seed + 20 * CASES:
        seed += 1
        case = generate(seed, level)
        spec = case.spec
        if spec is None or case.expect_error or _has_end_anchor(spec.pattern):
            continue
        sql = query_of(spec, seed)
        if sql is None:
            continue
        rows = [_row(i, p, x, y) for (i, p, x, y) in spec.data]
        try:
            written += check(seed, rows, sql) > 0
        except AssertionError as e:
            failures.append(f"seed {seed}: {e}")
            if len(failures) >= 2:
                break
        done += 1
    assert done >= CASES or failures, f"only {done} cases drawn"
    assert not failures, "\n\n".join(failures)
    assert 2 * written >= done, f"only {written} of {done} cases wrote rows"


@pytest.mark.parametrize(
    "level",
    [
        pytest.param("basic", marks=[pytest.mark.smoke, pytest.mark.shared_smoke]),
        "full",
        "next_match",
    ],
)
def test_random_patterns_stream_equals_batch(spark, tmp_path, level):
    def query_of(spec, _seed):
        if spec.skip_till_next and spec.within_rows is None:
            return None  # refused over a stream (a test below)
        return _streaming_sql(spec)

    def check(seed, rows, sql):
        _, expected = _assert_stream_equals_batch(
            spark, tmp_path / str(seed), rows, sql, seed=seed, may_be_empty=True
        )
        return len(expected)

    _check_random_cases(level, SEED_BASE, query_of, check)


@pytest.mark.parametrize("level", ["basic", "full", "next_match"])
def test_random_patterns_closed_by_their_window_stream_equals_batch(spark, tmp_path, level):
    """The same random cases with WITHIN INTERVAL and no sentinels: once the watermark is
    past a partition's last row by the window, the stream decides its open matches as the
    batch query's partition end does, so the outputs are equal on the rows alone."""

    def query_of(spec, seed):
        if spec.within_rows is not None:
            return None
        pattern = f"  PATTERN ({rpr.pattern_to_sql(spec.pattern)})"
        window = random.Random(seed).randint(2, 12)
        sql = _streaming_sql(spec).replace(pattern, f"{pattern} WITHIN INTERVAL '{window}' SECOND")
        if "WITHIN INTERVAL" not in sql or _lookaheads(sql) != (0, 0):
            return None  # reading ahead (NEXT) needs the next row itself
        return sql

    def check(seed, rows, sql):
        _, expected = assert_stream_equals_batch(
            spark,
            tmp_path / str(seed),
            SCHEMA,
            COLUMNS,
            rows,
            sql,
            time_of=lambda r: r[0],
            flush=_flush(),
            seed=seed,
            may_be_empty=True,
        )
        return len(expected)

    _check_random_cases(level, SEED_BASE + 5000, query_of, check)


# -- what a stream refuses ---------------------------------------------------------------


def _analyze_over_stream(spark, tmp_path, sql, watermark=True):
    source = tmp_path / "refused"
    source.mkdir(exist_ok=True)
    stream = spark.readStream.schema(SCHEMA).json(str(source))
    if watermark:
        stream = stream.withWatermark("ts", "5 seconds")
    stream.createOrReplaceTempView("events")
    return spark.sql(sql)


@pytest.mark.parametrize(
    "sql, watermark, phrase",
    [
        (V_SHAPE, False, "needs its first order by key to be the event-time column"),
        (V_SHAPE.replace("ORDER BY ts", "ORDER BY id"), True, "id has none"),
        (V_SHAPE.replace("ORDER BY ts", "ORDER BY ts DESC"), True, "is descending"),
        (
            V_SHAPE.replace("PARTITION BY part ORDER BY ts", "PARTITION BY part"),
            True,
            "needs order by on the input's event-time column",
        ),
        (V_SHAPE.replace("UP+)", "UP+ $)"), True, "pattern uses $"),
        (
            V_SHAPE.replace("AFTER MATCH SKIP PAST LAST ROW", "SKIP TILL NEXT MATCH"),
            True,
            "skip till next match over a streaming input needs within",
        ),
    ],
)
def test_what_a_stream_cannot_do_is_an_analysis_error(spark, tmp_path, sql, watermark, phrase):
    with pytest.raises(AnalysisException) as info:
        _analyze_over_stream(spark, tmp_path, sql, watermark)
    assert phrase in str(info.value).lower(), str(info.value)


@pytest.mark.smoke
@pytest.mark.parametrize("mode", ["update", "complete"])
def test_an_output_mode_other_than_append_is_refused_when_the_query_starts(spark, tmp_path, mode):
    stream = _analyze_over_stream(spark, tmp_path, V_SHAPE)
    writer = (
        stream.writeStream.format("memory")
        .queryName(f"refused_{mode}")
        .outputMode(mode)
        .option("checkpointLocation", str(tmp_path / f"chk-{mode}"))
    )
    with pytest.raises(AnalysisException) as info:
        writer.start().stop()
    message = str(info.value)
    if SPARK_3:
        # Spark 3.5 checks the output mode itself before an extension's rule can.
        assert f"not supported with {mode} output mode" in message.lower() or (
            f"{mode} output mode not supported" in message.lower()
        ), message
    else:
        assert "MATCH_RECOGNIZE.STREAMING_OUTPUT_MODE" in message, message
        assert f"not {mode}" in message.lower() and 'outputmode("append")' in message.lower()
    # Append (the default) starts.
    query = writer.outputMode("append").start()
    query.stop()


def test_the_dataframe_helper_takes_a_streaming_dataframe(spark, tmp_path):
    from spark_match_recognize import match_recognize
    from streaming_harness import write_batches

    rows = _walk_rows(30, ["a"], random.Random(6))
    closed = rows + _closing_rows(rows, V_SHAPE)[0]
    source = tmp_path / "helper"
    write_batches(source, COLUMNS, [closed[:15], closed[15:], [_flush()]])
    stream = (
        spark.readStream.schema(SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .withWatermark("ts", "5 seconds")
    )
    call = dict(
        partition_by="part",
        order_by="ts",
        measures={"start_ts": "FIRST(ts)", "end_ts": "LAST(ts)"},
        pattern="STRT DOWN+ UP+",
        define={"STRT": "x IS NOT NULL", "DOWN": "x < PREV(x)", "UP": "x > PREV(x)"},
    )
    result = match_recognize(stream, **call)
    assert result.isStreaming
    query = (
        result.writeStream.format("memory")
        .queryName("helper_matches")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    streamed = [tuple(r) for r in spark.table("helper_matches").collect()]
    expected = [
        tuple(r) for r in match_recognize(spark.createDataFrame(closed, SCHEMA), **call).collect()
    ]
    assert len(expected) >= 2
    assert compare_rows(streamed, expected, ordered=False) is None


@pytest.mark.smoke
def test_explain_of_the_running_query_shows_the_stateful_operator(spark, tmp_path):
    from streaming_harness import write_batches

    source = tmp_path / "explain"
    write_batches(source, COLUMNS, [[_row(1, "a", 5, 0), _row(2, "a", 3, 0)]])
    spark.readStream.schema(SCHEMA).json(str(source)).withWatermark(
        "ts", "5 seconds"
    ).createOrReplaceTempView("events")
    query = (
        spark.sql(V_SHAPE)
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    plan = query._jsq.explainInternal(False)
    assert "FlatMapGroupsWithState MatchRecognizeStream PARTITION BY part" in plan, plan
    assert "PATTERN (STRT DOWN+ UP+)" in plan and "EventTimeTimeout" in plan, plan
