"""Streaming MATCH_RECOGNIZE: throughput, end-to-end latency and state size, beside the
batch query on the same events and (with --flink) Flink SQL's MATCH_RECOGNIZE.

Events are stock ticks (bench/streaming_events.py): one per symbol per second, prices a
seeded random walk. The query finds V shapes per symbol, closed by WITHIN:

    PARTITION BY symbol ORDER BY ts ... PATTERN (STRT DOWN+ UP+) WITHIN INTERVAL '1' MINUTE

and, under SKIP TILL ANY MATCH with a negation (the one-pass tree in the stateful
operator), every dip below a tick with the first recovery above it:

    PARTITION BY symbol ORDER BY ts ... PATTERN (A B !N C) WITHIN INTERVAL '30' SECOND

Throughput: the events are written as CSV files (one micro-batch each) and the stream
reads them all (`trigger(availableNow=True)`, a 5-second watermark) into the `noop` sink;
events per second of wall time, beside the batch query over the same files. Both must
find the same number of matches (the last file moves the watermark past every event).

Latency: a writer thread delivers the events of each second, stamped with the wall clock,
as a file at the end of that second; the query runs with a 1-second processing-time
trigger and a 2-second watermark, and each micro-batch records, for every match, the time
from its last row's event time to the micro-batch's output (p50/p99). A V ends at its last
rise, which only the symbol's next tick can tell (one second later), and that tick must
be behind the watermark (2 s), so about 3 s of every figure is the pattern's own wait. An
ANY MATCH match is complete with its last row: it waits only for the watermark.

    .venv/bin/python bench/streaming.py                          # throughput, 1M events
    .venv/bin/python bench/streaming.py --events 200000 --latency 1000,5000
    .venv/bin/python bench/streaming.py --flink   # also Flink (flink_peer.py, flink_latency.py)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import DATA, ROOT, session
from streaming_events import deliver_seconds, generate, write_csv

SCHEMA = "symbol STRING, ts TIMESTAMP, price DOUBLE"
QUERY = """
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+) WITHIN INTERVAL '1' MINUTE
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price))
"""

# SKIP TILL ANY MATCH with a negation: every dip of at least five cents below a tick A,
# paired with the first tick after the dip back above A (no tick above A in between),
# within 30 seconds of A.
ANY_MATCH = """
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES A.ts AS start_ts, B.ts AS bottom_ts, C.ts AS end_ts
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B !N C) WITHIN INTERVAL '30' SECOND
  DEFINE B AS B.price <= A.price - 0.05, N AS N.price > A.price, C AS C.price > A.price)
"""

# Spark's own stateful streaming operator over the same stream: a windowed aggregation.
FLOOR = """
SELECT symbol, window(ts, '1 minute') AS w, count(*) AS n, min(price) AS low
FROM ticks GROUP BY symbol, window(ts, '1 minute')
"""


def _split(events, files: int):
    size = -(-len(events) // files)
    return [events[i : i + size] for i in range(0, len(events), size)]


def _write_files(directory: Path, batches) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i, batch in enumerate(batches):
        path = directory / f"part-{i:05d}.csv"
        write_csv(batch, path)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def throughput(spark, events, files: int, work: Path, query: str = QUERY) -> dict:
    source = work / "throughput"
    shutil.rmtree(source, ignore_errors=True)
    flush = [("~flush", events[-1][1] + datetime.timedelta(hours=1), 0.0)]
    _write_files(source, _split(events, files) + [flush])

    # Batch: the same query over the same files (the flush row is its own symbol: no match).
    spark.read.schema(SCHEMA).csv(str(source)).createOrReplaceTempView("ticks")
    spark.sql(query).write.format("noop").mode("overwrite").save()  # warm-up
    t0 = time.perf_counter()
    batch_matches = spark.sql(query).count()
    batch_seconds = time.perf_counter() - t0

    def run_stream(sql: str, name: str):
        counted: list[int] = []
        checkpoint = work / f"checkpoint-{name}"
        shutil.rmtree(checkpoint, ignore_errors=True)
        stream = (
            spark.readStream.schema(SCHEMA)
            .option("maxFilesPerTrigger", 1)
            .csv(str(source))
            .withWatermark("ts", "5 seconds")
        )
        stream.createOrReplaceTempView("ticks")
        t0 = time.perf_counter()
        query = (
            spark.sql(sql)
            .writeStream.foreachBatch(lambda df, _id: counted.append(df.count()))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        return time.perf_counter() - t0, sum(counted), query.recentProgress

    # The floor: Spark's own stateful aggregation (a one-minute window per symbol) over the
    # same stream, the same micro-batches, the same watermark.
    floor_seconds, _, _ = run_stream(FLOOR, "floor")
    stream_seconds, matches, progress = run_stream(query, "match-recognize")
    state = [p["stateOperators"][0] for p in progress if p.get("stateOperators")]
    return {
        "events": len(events),
        "files": files,
        "micro_batches": len(progress),
        "stream_seconds": round(stream_seconds, 2),
        "stream_events_per_second": round(len(events) / stream_seconds),
        "batch_seconds": round(batch_seconds, 2),
        "batch_events_per_second": round(len(events) / batch_seconds),
        "stream_matches": matches,
        "floor_seconds": round(floor_seconds, 2),
        "stream_over_floor": round(stream_seconds / floor_seconds, 2),
        "batch_matches": batch_matches,
        "peak_state_keys": max((s["numRowsTotal"] for s in state), default=0),
        "peak_state_bytes": max((s["memoryUsedBytes"] for s in state), default=0),
        "late_rows": sum(s.get("numRowsDroppedByWatermark", 0) for s in state),
    }


def latency(
    spark, rate: int, seconds: int, work: Path, name: str = "standard", sql: str = QUERY
) -> dict:
    """Events at `rate` per second (one tick per symbol per second, `rate` symbols),
    delivered a second at a time, for `seconds` seconds."""
    symbols = rate
    source = work / f"latency-{name}-{rate}"
    checkpoint = work / f"checkpoint-latency-{name}-{rate}"
    for d in (source, checkpoint):
        shutil.rmtree(d, ignore_errors=True)
    source.mkdir(parents=True)
    walk = generate(symbols * (seconds + 1), symbols, seed=rate)
    stop = threading.Event()

    def deliver():
        deliver_seconds(walk, symbols, seconds, source, stop)

    delays: list[float] = []

    def record(df, _id):
        now = time.time()
        for row in df.select("end_ts").collect():
            delays.append(now - row[0].replace(tzinfo=datetime.timezone.utc).timestamp())

    stream = spark.readStream.schema(SCHEMA).csv(str(source)).withWatermark("ts", "2 seconds")
    stream.createOrReplaceTempView("ticks")
    writer = threading.Thread(target=deliver, daemon=True)
    query = (
        spark.sql(sql)
        .writeStream.foreachBatch(record)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="1 second")
        .start()
    )
    writer.start()
    writer.join()
    time.sleep(6)  # the last seconds' matches
    query.stop()
    stop.set()
    progress = query.recentProgress
    durations = [p["durationMs"].get("triggerExecution", 0) / 1000 for p in progress]
    state = [p["stateOperators"][0] for p in progress if p.get("stateOperators")]
    delays.sort()

    def pct(q):
        return round(delays[min(len(delays) - 1, int(q * len(delays)))], 2) if delays else None

    return {
        "query": name,
        "rate": rate,
        "seconds": seconds,
        "matches": len(delays),
        "latency_p50": pct(0.50),
        "latency_p99": pct(0.99),
        "micro_batch_p50": round(statistics.median(durations), 2) if durations else None,
        "micro_batch_max": round(max(durations), 2) if durations else None,
        "kept_up": bool(durations) and statistics.median(durations) < 1.0,
        "peak_state_bytes": max((s["memoryUsedBytes"] for s in state), default=0),
    }


def flink(events_file: Path) -> dict | None:
    peer = ROOT / "bench" / "flink_peer.py"
    result = subprocess.run(
        [
            sys.executable,
            str(peer),
            str(events_file),
            "--form",
            "logical-terminated",
            "--runs",
            "3",
        ],
        capture_output=True,
        text=True,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not lines:
        print(result.stdout[-2000:] + result.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(lines[-1])


def flink_latency(rate: int, seconds: int) -> dict | None:
    """bench/flink_latency.py on the same live delivery (its own process and venv)."""
    peer = ROOT / "bench" / "flink_latency.py"
    args = [sys.executable, str(peer), "--rate", str(rate), "--seconds", str(seconds)]
    result = subprocess.run(args, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not lines:
        print(result.stdout[-2000:] + result.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--symbols", type=int, default=100)
    parser.add_argument(
        "--files",
        default="20,5",
        help="micro-batches of the throughput runs, comma-separated (empty: no throughput run)",
    )
    parser.add_argument("--latency", default="200,1000,5000", help="event rates, comma-separated")
    parser.add_argument("--latency-seconds", type=int, default=40)
    parser.add_argument("--flink", action="store_true", help="also run bench/flink_peer.py")
    args = parser.parse_args()

    work = DATA / "streaming"
    work.mkdir(parents=True, exist_ok=True)
    events = generate(args.events, args.symbols, seed=1)
    spark = session("bench-streaming", extra={"spark.sql.shuffle.partitions": "4"})
    # The query Flink runs (it accepts neither PREV nor a greedy quantifier at the end of
    # the pattern): the same V shapes, closed by the row after the rise.
    from flink_peer import query as flink_form

    queries = {
        "standard": QUERY,
        "flink_form": flink_form("logical-terminated"),
        "any_match_negation": ANY_MATCH,
    }
    result: dict = {"throughput": []}
    for name, sql in queries.items():
        for files in [int(f) for f in args.files.split(",") if f]:
            row = {"query": name, **throughput(spark, events, files, work, sql)}
            result["throughput"].append(row)
            print(json.dumps(row), flush=True)
    if args.flink and result["throughput"]:
        events_file = work / "events.csv"
        write_csv(events, events_file)
        peer = flink(events_file)
        result["flink"] = peer
        print(json.dumps(peer), flush=True)
        if peer:
            for row in result["throughput"]:
                if row["query"] == "flink_form":
                    ratio = row["stream_events_per_second"] / peer["events_per_second"]
                    print(
                        f"{row['micro_batches']} micro-batches: ours / Flink = {ratio:.2f}, "
                        f"matches {row['stream_matches']} / {peer['matches']}"
                    )
    rates = [int(r) for r in args.latency.split(",") if r]
    latency_queries = [("standard", QUERY), ("any_match_negation", ANY_MATCH)]
    if args.flink:
        latency_queries.insert(1, ("flink_form", flink_form("logical-terminated")))
    result["latency"] = []
    for name, sql in latency_queries:
        for r in rates:
            row = latency(spark, r, args.latency_seconds, work, name, sql)
            result["latency"].append(row)
            print(json.dumps(row), flush=True)
            if args.flink and name == "flink_form":
                peer = flink_latency(r, args.latency_seconds)
                result["latency"].append(peer)
                print(json.dumps(peer), flush=True)
                if peer and peer["latency_p99"] is not None:
                    print(
                        f"{r} events/s, flink_form: latency p50 ours {row['latency_p50']} s / "
                        f"Flink {peer['latency_p50']} s, p99 ours {row['latency_p99']} s / "
                        f"Flink {peer['latency_p99']} s, matches {row['matches']} / "
                        f"{peer['matches']}",
                        flush=True,
                    )
    spark.stop()


if __name__ == "__main__":
    main()
