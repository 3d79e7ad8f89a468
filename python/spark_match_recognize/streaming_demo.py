"""The streaming part of the demo: a ``MATCH_RECOGNIZE`` query run as a Structured Streaming
query over ticks that arrive in micro-batches, printing each micro-batch's matches as they
are decided, then checking them against the same query in batch.

    from spark_match_recognize.demo import local_session
    from spark_match_recognize.streaming_demo import run_streaming_examples
    run_streaming_examples(local_session())
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .demo import ScriptError, describe, error_message, examples_dir, format_result
from .sql_files import split_statements

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["TICKS_SCHEMA", "demo_ticks", "run_streaming_example", "run_streaming_examples"]

#: The columns of the streaming view ``ticks`` the streaming examples read.
TICKS_SCHEMA = "symbol STRING, ts TIMESTAMP, price DOUBLE"
WATERMARK = "30 seconds"
START = datetime.datetime(2024, 5, 6, 9, 30)


def demo_ticks(minutes: int = 12) -> list[list[tuple[str, datetime.datetime, float]]]:
    """Ticks of three symbols every 10 seconds, one list per minute of trading (a
    micro-batch each); prices follow sine waves, so every run is the same. Within a minute
    the ticks come shuffled, as a network delivers them; never later than the watermark
    delay allows."""
    symbols = {"ACME": (0.0, 1.0), "GLOBEX": (1.3, 1.7), "INITECH": (2.1, 0.6)}
    minutes_of_ticks = []
    for minute in range(minutes):
        batch = []
        for second in range(0, 60, 10):
            t = minute * 60 + second
            for name, (phase, scale) in symbols.items():
                price = 100 + 4 * scale * math.sin(t / 45 + phase) + math.sin(t / 7 + 2 * phase)
                batch.append((name, START + datetime.timedelta(seconds=t), round(price, 2)))
        batch.sort(key=lambda row: (row[2] * 7919) % 13)  # shuffled, reproducibly
        minutes_of_ticks.append(batch)
    return minutes_of_ticks


def _write_batches(directory: Path, batches: list[list[tuple]]) -> None:
    for i, batch in enumerate(batches):
        path = directory / f"ticks-{i:04d}.json"
        with path.open("w", encoding="utf-8") as f:
            for symbol, ts, price in batch:
                row = {"symbol": symbol, "ts": ts.isoformat(sep=" "), "price": price}
                f.write(json.dumps(row) + "\n")
        # The file source takes files in modification-time order: one per micro-batch.
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def _rows(df: DataFrame) -> list[tuple]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def run_streaming_example(
    spark: SparkSession, path: Path, *, rows: int = 50, out: TextIO | None = None
) -> bool:
    """Runs the query of ``path`` as a stream over :func:`demo_ticks` and prints each
    micro-batch's matches; returns whether the stream wrote what the batch query gives.

    Raises:
        ScriptError: when Spark rejects or fails the query.
    """
    out = out if out is not None else sys.stdout
    [statement] = split_statements(path.read_text(encoding="utf-8"))
    batches = demo_ticks()
    # The last file holds one tick far ahead (of a symbol of its own) that moves the
    # watermark past every other tick, as time passing would.
    closing = [("~clock", START + datetime.timedelta(hours=1), 0.0)]
    try:
        with tempfile.TemporaryDirectory(prefix="smr-stream-demo-") as tmp:
            source = Path(tmp) / "ticks"
            source.mkdir()
            _write_batches(source, batches + [closing])
            (
                spark.readStream.schema(TICKS_SCHEMA)
                .option("maxFilesPerTrigger", 1)
                .json(str(source))
                .withWatermark("ts", WATERMARK)
                .createOrReplaceTempView("ticks")
            )
            streamed: list[tuple] = []

            def show(batch: DataFrame, batch_id: int) -> None:
                found = batch.collect()
                streamed.extend(tuple(r) for r in found)
                out.write(f"micro-batch {batch_id}: {len(found)} match(es)\n")
                if found:
                    out.write(format_result(batch, rows))
                out.flush()

            query = (
                spark.sql(statement.text)
                .writeStream.foreachBatch(show)
                .outputMode("append")
                .option("checkpointLocation", str(Path(tmp) / "checkpoint"))
                .trigger(availableNow=True)
                .start()
            )
            query.awaitTermination()
            progress = query.recentProgress
            dropped = sum(
                op.get("numRowsDroppedByWatermark", 0)
                for p in progress
                for op in p.get("stateOperators", [])
            )
            ticks = [row for batch in batches for row in batch]
            spark.createDataFrame(ticks, TICKS_SCHEMA).createOrReplaceTempView("ticks")
            expected = _rows(spark.sql(statement.text))
    except Exception as e:  # Spark's errors, reported like a script's
        raise ScriptError(path.name, statement, 1, 1, error_message(e)) from e
    same = sorted(streamed, key=repr) == expected
    out.write(
        f"{len(ticks)} ticks in {len(batches)} files (watermark delay {WATERMARK}), "
        f"{dropped} late; {len(streamed)} matches streamed, "
        f"{'the same as' if same else 'NOT the same as'} the batch query's {len(expected)}.\n"
    )
    out.flush()
    return same


def run_streaming_examples(
    spark: SparkSession,
    directory: str | os.PathLike[str] | None = None,
    *,
    rows: int = 50,
    out: TextIO | None = None,
) -> int:
    """Runs every ``streaming/*.sql`` example; returns the number that failed."""
    out = out if out is not None else sys.stdout
    folder = Path(directory) if directory is not None else examples_dir() / "streaming"
    failures = 0
    for path in sorted(folder.glob("*.sql")):
        out.write(f"\n=== streaming/{path.name} ===\n{describe(path)}\n")
        out.flush()
        try:
            if not run_streaming_example(spark, path, rows=rows, out=out):
                failures += 1
        except ScriptError as e:
            failures += 1
            print(e, file=sys.stderr, flush=True)
    return failures
