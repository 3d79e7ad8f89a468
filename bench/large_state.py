"""Streaming MATCH_RECOGNIZE with a large state: does a micro-batch cost what arrives, or
what each key holds?

Every micro-batch delivers the same number of rows (one per key and second of event time,
`--rows-per-key` per key), so the work that arrives is constant; what each key holds grows
until the `WITHIN` window is full (`--within-minutes` of event time). Two queries hold
what they must by design:

- ``any_match``: ``PATTERN (A B) WITHIN ...`` under SKIP TILL ANY MATCH, where no row is a
  ``B``: every row of the window stays a partial match;
- ``standard``: ``PATTERN (A B*) WITHIN ...``, one match in progress per key that reads
  every row of its window (it is decided when the window closes);
- ``gap`` (not run by default): ``PATTERN (A X*? B)`` with no ``B``, standard semantics,
  ``AFTER MATCH SKIP TO NEXT ROW``: a match in progress from every row of the window, the
  form of ``any_match`` Flink SQL accepts (bench/flink_large_state.py runs it on Flink).

Each runs in both of Spark's stateful operators (`flatMapGroupsWithState` and
`transformWithState` with RocksDB), one after the other in one session, over the same
files (`maxFilesPerTrigger=1`, a 5-second watermark). For each micro-batch it prints the
rows held per key and the micro-batch's time (Spark's `triggerExecution`), then the time
of the last micro-batches over that of the first: 1.0 when a micro-batch costs what
arrives, growing with the state when it costs what is held. It also prints the state each
micro-batch wrote (the RocksDB changelog files of its version, compressed as Spark writes
them): a state written whole grows with what is held, one written as changes with what
arrives.

    .venv/bin/python bench/large_state.py                         # 100 keys, 20 micro-batches
    .venv/bin/python bench/large_state.py --keys 10 --rows-per-key 2000 --within-minutes 120
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import shutil
import statistics
import time
from pathlib import Path

from common import DATA, session

SCHEMA = "k STRING, ts TIMESTAMP, v INT"
EPOCH = datetime.datetime(2024, 1, 1)

QUERIES = {
    "any_match": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, B.ts AS b_ts
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B) WITHIN INTERVAL '{minutes}' MINUTE
  DEFINE A AS A.v >= 0, B AS B.v < A.v - 1000000)""",
    # Flink SQL's closest form of `any_match` (bench/flink_large_state.py): every row the
    # start of a match in progress with a relaxed gap, in the standard semantics.
    "gap": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, B.ts AS b_ts
  ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
  PATTERN (A X*? B) WITHIN INTERVAL '{minutes}' MINUTE
  DEFINE A AS A.v >= 0, B AS B.v < A.v - 1000000)""",
    "standard": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES FIRST(A.ts) AS start_ts, count(*) AS n
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (A B*) WITHIN INTERVAL '{minutes}' MINUTE
  DEFINE A AS A.v >= 0, B AS B.v >= 0)""",
}

OPERATOR = "spark.sql.matchRecognize.streaming.operator"
OPERATORS = ["flatMapGroupsWithState", "transformWithState"]


def write_batches(directory: Path, keys: int, rows_per_key: int, batches: int) -> None:
    """One CSV file per micro-batch: each key's next `rows_per_key` seconds, a row each."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    rng = random.Random(1)
    for b in range(batches):
        lines = []
        for s in range(b * rows_per_key, (b + 1) * rows_per_key):
            ts = (EPOCH + datetime.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S")
            lines.extend(f"k{k},{ts},{rng.randint(0, 999)}" for k in range(keys))
        path = directory / f"part-{b:05d}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="ascii")


def run(spark, source: Path, work: Path, name: str, sql: str) -> list[dict]:
    """Runs `sql` over the files until all are read; one record per micro-batch."""
    checkpoint = work / f"checkpoint-{name}"
    shutil.rmtree(checkpoint, ignore_errors=True)
    stream = (
        spark.readStream.schema(SCHEMA)
        .option("maxFilesPerTrigger", 1)
        .csv(str(source))
        .withWatermark("ts", "5 seconds")
    )
    stream.createOrReplaceTempView("events")
    query = (
        spark.sql(sql)
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()

    def written(batch: int) -> int:
        """Bytes of the state changelogs the micro-batch wrote (version = batch + 1)."""
        files = (checkpoint / "state").rglob(f"{batch + 1}.changelog")
        return sum(f.stat().st_size for f in files)

    records = []
    for p in query.recentProgress:
        if not p.get("numInputRows"):
            continue
        metrics = p.get("observedMetrics", {}).get("match_recognize")
        state = (p.get("stateOperators") or [{}])[0]
        fields = metrics.asDict() if metrics is not None else {}
        held = fields.get("peak_buffered_per_key")  # under SKIP TILL ANY MATCH only
        records.append(
            {
                "batch": p["batchId"],
                "rows": p["numInputRows"],
                "ms": p["durationMs"]["triggerExecution"],
                "state": state.get("customMetrics", {}),
                "held_per_key": held,
                "state_written": written(p["batchId"]),
            }
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--rows-per-key", type=int, default=200, help="per micro-batch")
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--within-minutes", type=int, default=60)
    parser.add_argument("--queries", default="any_match,standard")
    parser.add_argument("--operators", default=",".join(OPERATORS))
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a session setting, e.g. spark.sql.matchRecognize.streaming.keptStateBytes=2g",
    )
    parser.add_argument("--json", type=Path, help="also write the records here")
    args = parser.parse_args()

    work = DATA / "large-state"
    source = work / "source"
    write_batches(source, args.keys, args.rows_per_key, args.batches)
    spark = session(
        "large-state",
        extra={
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
            "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
            **dict(c.split("=", 1) for c in args.conf),
        },
    )
    print(
        f"{args.keys} keys, {args.rows_per_key} rows per key per micro-batch "
        f"({args.keys * args.rows_per_key} rows), WITHIN {args.within_minutes} minutes, "
        f"{args.batches} micro-batches"
    )
    results = {}
    for query in args.queries.split(","):
        sql = QUERIES[query].format(minutes=args.within_minutes)
        for operator in args.operators.split(","):
            spark.conf.set(OPERATOR, operator)
            t0 = time.perf_counter()
            records = run(spark, source, work, f"{query}-{operator}", sql)
            seconds = time.perf_counter() - t0
            results[f"{query} / {operator}"] = records
            print(f"\n{query} in {operator} ({seconds:.1f} s)")
            print(
                "| micro-batch | rows | window rows per key | held per key | ms "
                "| state written (KB) |"
            )
            print("| --- | --- | --- | --- | --- | --- |")
            for i, r in enumerate(records):
                window = min((i + 1) * args.rows_per_key, args.within_minutes * 60)
                held = "" if r["held_per_key"] is None else r["held_per_key"]
                kb = r["state_written"] / 1024
                print(f"| {r['batch']} | {r['rows']} | {window} | {held} | {r['ms']} | {kb:,.0f} |")
            if len(records) >= 2:
                rate = sum(r["rows"] for r in records[1:]) / sum(r["ms"] for r in records[1:])
                print(f"sustained after the first micro-batch: {rate * 1000:,.0f} events/s")
            if len(records) >= 6:
                # The first micro-batch pays the query's start; the next three against the
                # last three.
                first = statistics.median(r["ms"] for r in records[1:4])
                last = statistics.median(r["ms"] for r in records[-3:])
                print(
                    f"last / first micro-batches: {last / first:.2f} ({last:.0f} / {first:.0f} ms)"
                )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
