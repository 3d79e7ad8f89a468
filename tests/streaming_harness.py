"""Runs a streaming MATCH_RECOGNIZE query over rows delivered in micro-batches, and the same
query in batch, for the tests that hold a stream's output to the batch result
(``assert_stream_equals_batch``).

Rows are written as JSON files, one file per micro-batch, read by Spark's file source one
file per trigger (``maxFilesPerTrigger=1``) with a watermark on ``ts``; the query runs with
``trigger(availableNow=True)`` into a sink, so it processes every file and stops. A last file
holds one *flush* row far in the future (in a partition of its own), whose only job is to
move the watermark past every other row; it is never released, so it is not part of the
rows the batch query reads.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark
import pytest

from result_compare import compare_rows

FLUSH_PART = "zz_flush"
#: Spark 3.5, whose progress omits the observed metrics of micro-batches without rows.
SPARK_3 = pyspark.__version__.startswith("3.")
FLUSH_ID = 100_000

#: The stateful operators a test runs a stream in (transformWithState from Spark 4.0 on),
#: for ``pytest.mark.parametrize("operator", STATEFUL_OPERATORS)``.
STATEFUL_OPERATORS = [
    "flatMapGroupsWithState",
    pytest.param(
        "transformWithState",
        marks=pytest.mark.skipif(SPARK_3, reason="transformWithState is Spark 4.0 and later"),
    ),
]


def operator_settings(operator: str) -> dict[str, str]:
    """The settings that run a stream in ``operator`` (with RocksDB, as transformWithState
    needs)."""
    return {
        "spark.sql.matchRecognize.streaming.operator": operator,
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
    }


def explain_running(spark, sql: str, checkpoint: Path) -> str:
    """The plan of ``sql`` (over a streaming view) run once to its end into the noop sink."""
    query = (
        spark.sql(sql)
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return query._jsq.explainInternal(False)


@dataclass
class StreamRun:
    rows: list[tuple]  # the stream's output rows
    progress: list[dict] = field(default_factory=list)

    def observed(self, name: str = "match_recognize") -> list[dict]:
        """Each micro-batch's observed metrics ``name``. Spark 3.5 reports none for a
        micro-batch that read no rows (run only to move the watermark); there the rows its
        sink wrote stand for its matches (one row per match), its other metrics unknown."""
        metrics = []
        for p in self.progress:
            found = p.get("observedMetrics", {}).get(name)
            if found is None and p["numInputRows"] == 0 and SPARK_3:
                found = {"matches": max(0, p["sink"].get("numOutputRows", 0))}
            assert found is not None, f"micro-batch {p['batchId']} reports no {name}"
            # pyspark 4 gives a Row, pyspark 3.5 a dict: a dict either way
            metrics.append(found.asDict() if hasattr(found, "asDict") else dict(found))
        return metrics

    def dropped_by_watermark(self) -> int:
        return sum(
            op.get("numRowsDroppedByWatermark", 0)
            for p in self.progress
            for op in p.get("stateOperators", [])
        )


def _json_value(v: Any) -> Any:
    if isinstance(v, datetime.datetime):
        return v.strftime("%Y-%m-%d %H:%M:%S.%f")
    return v


def write_batches(directory: Path, columns: list[str], batches: list[list[tuple]]) -> None:
    """One JSON file per micro-batch, with modification times in batch order (the file
    source takes files in that order). Each is written under a hidden name, which the file
    source skips, and then renamed: a running query never lists a file half-written (it
    would read it as it is, and never again)."""
    directory.mkdir(parents=True, exist_ok=True)
    existing = len(list(directory.glob("*.json")))
    for i, batch in enumerate(batches, start=existing):
        path = directory / f"batch{i:05d}.json"
        hidden = directory / f".{path.name}.writing"
        with hidden.open("w") as f:
            for row in batch:
                f.write(
                    json.dumps({c: _json_value(v) for c, v in zip(columns, row, strict=True)})
                    + "\n"
                )
        os.utime(hidden, (1_000_000 + i, 1_000_000 + i))
        os.replace(hidden, path)


def arrival_batches(
    rows: list[tuple], time_of, delay_seconds: float, rng: random.Random, max_batch: int = 5
) -> list[list[tuple]]:
    """Splits rows into micro-batches in an arrival order that is out of event-time order
    but never behind the watermark: each row arrives as if sent up to ``delay_seconds``
    late, so no row of an earlier batch is more than the delay ahead of it."""
    keyed = sorted(rows, key=lambda r: time_of(r) + rng.uniform(0, delay_seconds * 0.95))
    batches, i = [], 0
    while i < len(keyed):
        n = rng.randint(1, max_batch)
        batches.append(keyed[i : i + n])
        i += n
    return batches


def run_stream(
    spark,
    tmp: Path,
    schema: str,
    columns: list[str],
    batches: list[list[tuple]],
    sql: str,
    watermark: str = "5 seconds",
    view: str = "events",
    checkpoint: Path | None = None,
    source_dir: Path | None = None,
) -> StreamRun:
    """Delivers ``batches`` and runs ``sql`` (over the streaming view ``view``) until every
    file is processed; returns the rows written and the query's progress reports."""
    source = source_dir or tmp / f"source-{uuid.uuid4().hex[:8]}"
    write_batches(source, columns, batches)
    stream = (
        spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", 1)
        .json(str(source))
        .withWatermark("ts", watermark)
    )
    stream.createOrReplaceTempView(view)
    name = f"mr_{uuid.uuid4().hex[:12]}"
    query = (
        spark.sql(sql)
        .writeStream.format("memory")
        .queryName(name)
        .outputMode("append")
        .option("checkpointLocation", str(checkpoint or tmp / f"checkpoint-{name}"))
        .trigger(availableNow=True)
        .start()
    )
    try:
        _finish(query)
        progress = list(query.recentProgress)
        return StreamRun([tuple(r) for r in spark.table(name).collect()], progress)
    finally:
        query.stop()
        spark.catalog.dropTempView(name)


def run_restarted(
    spark,
    tmp: Path,
    schema: str,
    columns: list[str],
    sql_of_part: list[str],
    parts: list[list[list[tuple]]],
    view: str = "events",
) -> tuple[list[tuple], Exception | None]:
    """Delivers each part's batches and runs that part's query (over the streaming view
    ``view``) until every file so far is processed, all parts from one checkpoint into one
    parquet sink, as a query stopped and restarted; returns the sink's rows, or the first
    failing part's error (as the driver reports it)."""
    source, checkpoint, sink = tmp / "src", tmp / "chk", tmp / "sink"
    for sql, batches in zip(sql_of_part, parts, strict=True):
        write_batches(source, columns, batches)
        spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(
            str(source)
        ).withWatermark("ts", "5 seconds").createOrReplaceTempView(view)
        query = (
            spark.sql(sql)
            .writeStream.format("parquet")
            .option("path", str(sink))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination()
        except Exception as error:
            return [], error
        if query.exception() is not None:
            return [], query.exception()
    return [tuple(r) for r in spark.read.parquet(str(sink)).collect()], None


def _finish(query) -> None:
    """Waits for an available-now query to end; raises what failed it."""
    query.awaitTermination()
    if query.exception() is not None:
        raise query.exception()


def run_from_checkpoint(
    spark,
    schema: str,
    sql: str,
    source: Path,
    checkpoint: Path,
    sink: Path,
    watermark: str = "5 seconds",
    view: str = "events",
) -> list[tuple]:
    """Runs ``sql`` (over the streaming view ``view`` of the JSON files in ``source``) from
    ``checkpoint`` until every file is processed, each micro-batch's rows appended to the
    parquet folder ``sink``; returns the rows the run wrote. The source tells files apart by
    name only (``fileNameOnly``) and the sink keeps no log of its own, so a checkpoint and its
    source may be moved together, as a committed fixture is, and restarted into a new sink."""
    spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).option(
        "fileNameOnly", "true"
    ).json(str(source)).withWatermark("ts", watermark).createOrReplaceTempView(view)
    query = (
        spark.sql(sql)
        .writeStream.foreachBatch(lambda rows, _: rows.write.mode("append").parquet(str(sink)))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        _finish(query)
    finally:
        query.stop()
    if not sink.exists():
        return []
    return [tuple(r) for r in spark.read.parquet(str(sink)).collect()]


def create_pattern_view(spark, view: str, rows: list[list[str]]) -> None:
    """A global temporary view of named patterns (name, pattern, define; no subsets), as a
    ``PATTERNS FROM global_temp.<view>`` query reads them."""
    values = ", ".join(
        "(" + ", ".join("'" + v.replace("'", "''") + "'" for v in row) + ", NULL)" for row in rows
    )
    spark.sql(
        f"CREATE OR REPLACE GLOBAL TEMP VIEW {view} (name, pattern, define, subset) "
        f"AS VALUES {values}"
    )


def run_batch(spark, schema: str, rows: list[tuple], sql: str, view: str = "events") -> list[tuple]:
    """The same query over the same rows as a batch DataFrame."""
    spark.createDataFrame(rows, schema).createOrReplaceTempView(view)
    return [tuple(r) for r in spark.sql(sql).collect()]


def assert_stream_equals_batch(
    spark,
    tmp: Path,
    schema: str,
    columns: list[str],
    rows: list[tuple],
    sql: str,
    *,
    time_of: Callable[[tuple], float],
    flush: tuple,
    seed: int = 0,
    delay: float = 5.0,
    max_batch: int = 10,
    stream_only: list[tuple] | None = None,
    may_be_empty: bool = False,
) -> tuple[StreamRun, list[tuple]]:
    """Runs ``sql`` over ``rows`` as a stream and as a batch query, and fails unless the two
    write the same rows (in any order) and the watermark drops none of the stream's.

    The stream reads ``rows`` and ``stream_only`` (rows that only a stream needs, such as
    those a DEFINE reads ahead of the last row) in micro-batches of up to ``max_batch`` rows,
    in an arrival order up to ``delay`` seconds out of ``time_of`` order (the watermark's
    delay), then the ``flush`` row. Two empty outputs are equal without showing anything, so
    it also fails when neither writes a row, unless ``may_be_empty``: for a random case,
    whose caller checks that its cases together write rows. Returns the stream's run and
    the batch rows."""
    rng = random.Random(seed)
    batches = arrival_batches(rows + (stream_only or []), time_of, delay, rng, max_batch)
    batches.append([flush])
    stream = run_stream(
        spark, tmp, schema, columns, batches, sql, watermark=f"{int(delay)} seconds"
    )
    expected = run_batch(spark, schema, rows, sql)
    assert stream.dropped_by_watermark() == 0, f"{sql}\nrows dropped behind the watermark"
    diff = compare_rows(stream.rows, expected, ordered=False)
    assert diff is None, f"{sql}\n{diff}"
    assert expected or may_be_empty, f"{sql}\nneither the stream nor the batch wrote a row"
    return stream, expected
