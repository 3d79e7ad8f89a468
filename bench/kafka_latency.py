"""Streaming MATCH_RECOGNIZE end to end through a real Kafka broker: Spark 4.3's Real-Time
Mode beside micro-batches (a 1-second processing-time trigger), on the same events.

Over 400 lines: one experiment (broker, producer, the sides, checks, report) that reads as
one script.

A single-node KRaft broker (tests/kafka_broker.py, through dev/kafka) carries everything. A
producer process (Kafka's console producer, fed by this script at a fixed rate,
`linger.ms=0`) writes stock ticks into a 2-partition topic keyed by symbol, each a JSON
value `{"symbol", "ts", "price", "seq", "sent_ms"}`: `sent_ms` is the wall clock (ms) at
which the tick was handed to the producer, `ts` (the event time) its scheduled production
time, `seq` its number in the run (the matches keep their last row's, to tell the measured
ones). The prices are bench/streaming_events.py's seeded walks, round robin over
`--symbols` symbols.
The streaming query reads the topic, parses it, takes a 2-second watermark and writes its
matches as JSON to an output topic whose records the broker stamps on append
(`message.timestamp.type=LogAppendTime`). A match's latency is that stamp minus the
`sent_ms` of the match's last row: producer, broker, Spark and broker again.

Two queries, each run on both sides, one side after the other:

- `standard`: V shapes, `PATTERN (STRT DOWN+ UP+)`. A V ends at its last rise, which only
  the symbol's next tick can tell (`symbols / rate` seconds later: 20 ms at 1,000 events/s
  over 20 symbols), so that much of each figure is the pattern's own wait.
- `any_match_negation`: `SKIP TILL ANY MATCH`, `PATTERN (A B !N C) WITHIN 30 ROWS` (a dip
  of ten cents below A, C the first tick back above A). The window is in rows, not the
  30 seconds of bench/streaming.py: at 50 ticks per symbol per second a 30-second window
  would give tens of thousands of matches a second. A match is complete with its last row.

Two baselines, run only when `--queries` names them, tell Spark's own path from the
matching: `one_row`, a MATCH_RECOGNIZE whose pattern is one row (`PATTERN (A)`, every fourth
tick, about as many rows out as the patterns match; not the closing tick, which no later
row passes in micro-batches): the shuffle, the operator and its
state per row, no partial match; and `passthrough`, the same ticks through a stateless
filter: the Kafka source and sink alone (no shuffle, no state).

Real-Time Mode: `trigger(realTime="5 minutes")` (one batch covers the run), update output
mode, the RocksDB state store, checkpoint format 2, `local[6]` (a task per source partition
and per shuffle partition, 2 each, stay running). Rows are matched as they arrive.
Micro-batch: `trigger(processingTime="1 second")`, append output mode, the same session;
rows wait for the watermark (2 s) and a match comes out in the micro-batch after the one
that moved it.

Before the figures, each side runs each query once untimed (5 measured seconds;
`--no-warmup-run` skips it): a JVM's first real-time batch starts seconds behind. Each run
produces `--warmup` seconds of ticks (10; not measured), `--seconds` measured, 3 more (the
micro-batch side's watermark and trigger: not measured either), then a closing tick per
symbol at its last price (it decides the Vs still rising) and a tick of a symbol of its own
an hour ahead (it moves the micro-batch watermark past everything). The side then waits
until the output topic holds as many matches as the batch query over the same topic finds;
both sides must find that many. p50/p99/max are over the matches whose last row is a tick
of the measured seconds; the JSON also has the p50 and p99 of each measured second, which
show a side falling behind, or starting behind and catching up.

With `--flink`, `standard` also runs on Flink SQL, twice more, after the Spark sides and
measured alike: `flink-rowtime` (ORDER BY the event time, watermark 1 ms behind) and
`flink-proctime` (ORDER BY `PROCTIME()`), each a job of bench/flink_kafka.py, which runs
Flink's form of the V (`PATTERN (STRT DOWN+ UP+ N)`: Flink refuses the standard one) in
one process (PyFlink in bench/.flink-venv) for the whole run, a job at a time, so that its
JVM is warm after the warm-up runs as Spark's is. Its matches are the batch query's: the
closing ticks are the N rows of the Vs still rising at the end.

    .venv/bin/python bench/kafka_latency.py                       # 1,000 events/s, 30 s
    .venv/bin/python bench/kafka_latency.py --rates 1000,10000 --seconds 30
    .venv/bin/python bench/kafka_latency.py --rates 200 --seconds 15 --queries standard
    .venv/bin/python bench/kafka_latency.py --rates 1000,10000 --queries standard --flink

Prints one JSON line per side and one comparison line per rate and query; writes all of it
to `--json` (by default bench/results/kafka_latency.json when bench/results exists).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

from common import DATA, ROOT, session
from flink_kafka import VARIANTS, FlinkJobs
from streaming_events import generate, symbol_names

sys.path.insert(0, str(ROOT / "tests"))
from kafka_broker import KafkaBroker, kafka_broker, kafka_spark_jars  # noqa: E402

SCHEMA = "symbol STRING, ts TIMESTAMP, price DOUBLE, seq BIGINT, sent_ms BIGINT"
TS_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX"
WATERMARK = "2 seconds"
TAIL_SECONDS = 3  # after the measured seconds: the micro-batch watermark (2 s) and trigger
FLUSH_SYMBOL = "~flush"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

QUERIES = {
    "standard": """
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(STRT.ts) AS start_ts, LAST(UP.ts) AS end_ts, LAST(UP.seq) AS seq,
    LAST(UP.sent_ms) AS sent_ms
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price))
""",
    "any_match_negation": """
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES A.ts AS start_ts, C.ts AS end_ts, C.seq AS seq, C.sent_ms AS sent_ms
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B !N C) WITHIN 30 ROWS
  DEFINE B AS B.price <= A.price - 0.10, N AS N.price > A.price, C AS C.price > A.price)
""",
    "one_row": """
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES A.ts AS start_ts, A.ts AS end_ts, A.seq AS seq, A.sent_ms AS sent_ms
  ONE ROW PER MATCH
  PATTERN (A)
  DEFINE A AS A.seq % 4 = 0 AND A.symbol <> '~flush')
""",
    "passthrough": """
SELECT symbol, ts AS start_ts, ts AS end_ts, seq, sent_ms FROM ticks
WHERE seq % 4 = 0 AND symbol <> '~flush'
""",
}
BASELINES = ("one_row", "passthrough")
# How long Real-Time Mode's shuffle holds a partly filled buffer before sending it.
SHUFFLE_WAIT = "spark.shuffle.streaming.networkBufferMaxWaitTimeMs"

SIDES = ("real-time", "micro-batch")
FLINK_SIDES = tuple(f"flink-{variant}" for variant in VARIANTS)  # with --flink, `standard` only
flink_jobs = functools.cache(FlinkJobs)  # one Flink process (JVM) for the run's Flink jobs
Tick = tuple[str, float]


def ticks(rate: int, symbols: int, seconds: int) -> list[Tick]:
    """`seconds` of ticks at `rate`, round robin over the symbols, then one closing tick per
    symbol at its last price (neither a rise nor a fall) and the flush tick."""
    walk = [(symbol, price) for symbol, _, price in generate(rate * seconds, symbols, seed=rate)]
    last = dict(walk)
    closing = [(symbol, last[symbol]) for symbol in symbol_names(symbols) if symbol in last]
    return walk + closing + [(FLUSH_SYMBOL, 0.0)]


def kafka_tool(broker: KafkaBroker, main_class: str, *args: str, **popen: Any):
    """One of Kafka's command-line tools from the jars dev/kafka fetched for the broker."""
    cache = Path(os.environ.get("SMR_CACHE_DIR", Path.home() / ".cache" / "spark-match-recognize"))
    libs = cache / f"kafka-{os.environ.get('SMR_KAFKA_VERSION', '4.4.0')}" / "libs"
    if not (libs / ".complete").exists():
        raise FileNotFoundError(f"no Kafka jars in {libs}: dev/kafka fetches them")
    command = [
        "java",
        "-Xmx256m",
        f"-Dlog4j2.configurationFile={broker.directory / 'tools-log4j2.properties'}",
        "-cp",
        f"{libs}/*",
        main_class,
        "--bootstrap-server",
        str(broker),
        *args,
    ]
    return subprocess.Popen(command, **popen)


def create_topics(broker: KafkaBroker, events: str, matches: str) -> None:
    broker.create_topic(events, partitions=2)
    broker.create_topic(matches, partitions=1)
    config = kafka_tool(
        broker,
        "org.apache.kafka.tools.ConfigCommand",
        *("--alter", "--entity-type", "topics", "--entity-name", matches),
        *("--add-config", "message.timestamp.type=LogAppendTime"),
        stdout=subprocess.DEVNULL,
    )
    if config.wait(timeout=120) != 0:
        raise RuntimeError(f"setting LogAppendTime on topic {matches} failed")


def start_producer(broker: KafkaBroker, topic: str, log: Path) -> subprocess.Popen:
    """Kafka's console producer: `key<TAB>value` lines on stdin, sent at once."""
    with log.open("wb") as err:
        return kafka_tool(
            broker,
            "org.apache.kafka.tools.ConsoleProducer",
            *("--topic", topic, "--timeout", "0"),
            *("--reader-property", "parse.key=true"),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )


def iso(micros: int) -> str:
    return (EPOCH + timedelta(microseconds=micros)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def produce(stdin: IO[bytes], rows: list[Tick], rate: int) -> None:
    """Hands `rows` to the producer at `rate` per second, each stamped with its number
    (`seq`) and the wall clock (`sent_ms`); the flush tick (the last) an hour ahead."""
    start_us = int(time.time() * 1e6) + 100_000
    i = 0
    while i < len(rows):
        now = time.time()
        due = min(len(rows), (int(now * 1e6) - start_us) * rate // 1_000_000 + 1)
        if due > i:
            sent_ms = int(now * 1000)
            lines = []
            for j in range(i, due):
                symbol, price = rows[j]
                ts = start_us + j * 1_000_000 // rate
                if symbol == FLUSH_SYMBOL:
                    ts += 3_600_000_000
                value = (
                    f'"symbol":"{symbol}","ts":"{iso(ts)}","price":{price},'
                    f'"seq":{j},"sent_ms":{sent_ms}'
                )
                lines.append(f"{symbol}\t{{{value}}}\n")
            stdin.write("".join(lines).encode())
            stdin.flush()
            i = due
        time.sleep(0.002)


def parsed(records):
    from pyspark.sql import functions as F

    value = F.col("value").cast("string")
    tick = F.from_json(value, SCHEMA, {"timestampFormat": TS_FORMAT}).alias("tick")
    return records.select(tick).select("tick.*")


def kafka_read(spark, broker: KafkaBroker, topic: str):
    return (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", broker)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )


def start_query(spark, broker: KafkaBroker, side: str, sql: str, topics: tuple, checkpoint: Path):
    from pyspark.sql import functions as F

    events, matches = topics
    source = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", broker)
        .option("subscribe", events)
        .option("startingOffsets", "earliest")
        .load()
    )
    parsed(source).withWatermark("ts", WATERMARK).createOrReplaceTempView("ticks")
    out = spark.sql(sql)
    writer = (
        out.select(F.to_json(F.struct(*out.columns)).alias("value"))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", broker)
        .option("kafka.linger.ms", "0")
        .option("topic", matches)
        .option("checkpointLocation", str(checkpoint))
    )
    if side == "real-time":
        writer = writer.outputMode("update").trigger(realTime="5 minutes")
    else:
        writer = writer.outputMode("append").trigger(processingTime="1 second")
    return writer.start()


def running_tasks(spark) -> int:
    tracker = spark.sparkContext.statusTracker()
    stages = (tracker.getStageInfo(s) for s in tracker.getActiveStageIds())
    return sum(stage.numActiveTasks for stage in stages if stage is not None)


def wait_started(spark, query, side: str, tasks: int, timeout: float = 120) -> None:
    """Until the query reads its source: a first micro-batch done, or the real-time batch's
    `tasks` running (a task per source and per shuffle partition); then a second more."""
    deadline = time.monotonic() + timeout
    while True:
        if query.exception() is not None:
            raise RuntimeError(f"the {side} query failed: {query.exception()}")
        if side == "micro-batch" and query.recentProgress:
            break
        active = query.status["isTriggerActive"]
        if side == "real-time" and active and running_tasks(spark) >= tasks:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"the {side} query did not start within {timeout} s")
        time.sleep(0.2)
    time.sleep(1)


def stop(spark, query) -> None:
    """Stops the query. A real-time batch stopped midway has its tasks log their aborted
    writes and closed shuffle connections as errors, with stack traces: expected, so not
    shown."""
    spark.sparkContext.setLogLevel("OFF")
    try:
        query.stop()
        time.sleep(2)  # the cancelled tasks' last words
    finally:
        spark.sparkContext.setLogLevel("ERROR")


def batch_matches(spark, broker: KafkaBroker, topic: str, sql: str) -> int:
    """The query in batch over every record of the events topic."""
    parsed(kafka_read(spark, broker, topic)).createOrReplaceTempView("ticks")
    return spark.sql(sql).count()


def wait_for_matches(spark, broker: KafkaBroker, topic: str, query, expected: int) -> int:
    """Polls the output topic until it holds `expected` records or stops growing for 30 s."""
    count, last_change = -1, time.monotonic()
    while True:
        if query.exception() is not None:
            raise RuntimeError(f"the streaming query failed: {query.exception()}")
        now = kafka_read(spark, broker, topic).count()
        if now != count:
            count, last_change = now, time.monotonic()
        if count >= expected or time.monotonic() - last_change > 30:
            return count
        time.sleep(1)


def latencies(spark, broker: KafkaBroker, topic: str, measured: range) -> list[tuple[int, int]]:
    """`(seq, latency)` of the matches whose last row's number is in `measured`, latency
    being the broker's append time minus that row's `sent_ms`, in ms; by `seq`."""
    value = "CAST(value AS STRING)"
    rows = (
        kafka_read(spark, broker, topic)
        .selectExpr(
            f"CAST(get_json_object({value}, '$.seq') AS BIGINT) AS seq",
            f"unix_millis(timestamp) - CAST(get_json_object({value}, '$.sent_ms') AS BIGINT)",
        )
        .collect()
    )
    return sorted((r[0], r[1]) for r in rows if r[0] in measured)


def percentile(values: list[int], q: float) -> int | None:
    return values[min(len(values) - 1, int(q * len(values)))] if values else None


def run_side(spark, broker: KafkaBroker, work: Path, side: str, name: str, rate: int, args):
    """One side on one query and rate: a row of figures."""
    tag = f"{side}-{name}-{rate}-{int(time.time())}"
    topics = (f"events-{tag}", f"matches-{tag}")
    create_topics(broker, *topics)
    rows = ticks(rate, args.symbols, args.warmup + args.seconds + TAIL_SECONDS)
    measured = range(args.warmup * rate, (args.warmup + args.seconds) * rate)
    producer = start_producer(broker, topics[0], work / f"producer-{tag}.log")
    assert producer.stdin is not None
    flink = side in FLINK_SIDES
    if flink:
        query = flink_jobs(broker, work / "flink.log").start(side.removeprefix("flink-"), topics)
    else:
        query = start_query(spark, broker, side, QUERIES[name], topics, work / f"checkpoint-{tag}")
    try:
        if flink:
            query.wait_started()
        else:
            wait_started(spark, query, side, tasks=2 if name == "passthrough" else 4)
        produce(producer.stdin, rows, rate)
        producer.stdin.close()
        if producer.wait(timeout=120) != 0:
            raise RuntimeError(f"the console producer failed: see {work}/producer-{tag}.log")
        expected = batch_matches(spark, broker, topics[0], QUERIES[name])
        written = wait_for_matches(spark, broker, topics[1], query, expected)
    finally:
        stop(spark, query)
        if producer.poll() is None:
            producer.kill()
    matched = latencies(spark, broker, topics[1], measured)
    delays = sorted(latency for _, latency in matched)
    by_second: dict[int, list[int]] = {}
    for seq, latency in matched:
        by_second.setdefault((seq - measured.start) // rate, []).append(latency)
    return {
        "rate": rate,
        "query": name,
        "side": side,
        **({"flink": query.info} if flink else {}),
        "symbols": args.symbols,
        "seconds": args.seconds,
        "events": len(rows),
        "matches": written,
        "batch_matches": expected,
        "measured_matches": len(delays),
        "latency_p50_ms": percentile(delays, 0.50),
        "latency_p99_ms": percentile(delays, 0.99),
        "latency_max_ms": delays[-1] if delays else None,
        # a side that falls behind shows here: p50 of each measured second's matches
        "latency_p50_by_second_ms": [
            percentile(sorted(v), 0.5) for _, v in sorted(by_second.items())
        ],
        # and the tail of each second, to tell a start behind from a steady tail
        "latency_p99_by_second_ms": [
            percentile(sorted(v), 0.99) for _, v in sorted(by_second.items())
        ],
    }


def compare(rt: dict, mb: dict, *others: dict) -> str:
    def side(row: dict) -> str:
        return (
            f"{row['side']} p50 {row['latency_p50_ms']} ms p99 {row['latency_p99_ms']} ms "
            f"max {row['latency_max_ms']} ms (matches {row['matches']})"
        )

    line = f"{rt['rate']} events/s {rt['query']}: {side(rt)} | {side(mb)}"
    if rt["latency_p50_ms"] and mb["latency_p50_ms"] is not None:
        line += f" | ratio p50 {mb['latency_p50_ms'] / rt['latency_p50_ms']:.3g}x"
    return "".join([line, *(f" | {side(row)}" for row in others)])


def warm_up(spark, broker: KafkaBroker, work: Path, names: list[str], rate: int, args) -> None:
    """One untimed short run of each side and query: the JVM's first real-time batch and
    first queries run seconds behind while classes load and code compiles."""
    short = argparse.Namespace(**{**vars(args), "seconds": 5})
    for name in names:
        for side in SIDES + (FLINK_SIDES if args.flink and name == "standard" else ()):
            row = run_side(spark, broker, work, side, name, rate, short)
            print(f"[warm-up] {side} {name}: p50 {row['latency_p50_ms']} ms", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="1000", help="events per second, comma-separated")
    parser.add_argument("--seconds", type=int, default=30, help="measured seconds per side")
    parser.add_argument("--warmup", type=int, default=10, help="seconds of ticks not measured")
    parser.add_argument("--symbols", type=int, default=20)
    parser.add_argument(
        "--no-warmup-run", action="store_true", help="skip the untimed run of each side first"
    )
    patterns = [n for n in QUERIES if n not in BASELINES]
    parser.add_argument("--queries", default=",".join(patterns), help="of: " + ", ".join(QUERIES))
    parser.add_argument(
        "--flink",
        action="store_true",
        help="also run Flink SQL (bench/flink_kafka.py) on `standard`",
    )
    parser.add_argument(
        "--shuffle-wait-ms",
        type=int,
        help=f"sets {SHUFFLE_WAIT} (Spark's default: 50)",
    )
    results = ROOT / "bench" / "results"
    default_json = results / "kafka_latency.json" if results.is_dir() else None
    parser.add_argument("--json", type=Path, default=default_json, help="write results here")
    args = parser.parse_args()
    names = [n for n in args.queries.split(",") if n]
    unknown = set(names) - set(QUERIES)
    if unknown:
        parser.error(f"unknown queries: {', '.join(sorted(unknown))}")

    work = DATA / "kafka_latency"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    out: dict = {
        "cores": os.cpu_count(),
        "shuffle_wait_ms": args.shuffle_wait_ms,
        "sides": [],
        "comparisons": [],
    }
    with kafka_broker(work) as broker:
        spark = session(
            "bench-kafka-latency",
            driver_memory="4g",
            cores=6,  # 2 source + 2 shuffle partitions running at once, 2 to spare
            extra={
                "spark.jars": ",".join(kafka_spark_jars()),
                "spark.sql.shuffle.partitions": "2",
                "spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql."
                "execution.streaming.state.RocksDBStateStoreProvider",
                "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
                **(
                    {SHUFFLE_WAIT: str(args.shuffle_wait_ms)}
                    if args.shuffle_wait_ms is not None
                    else {}
                ),
            },
        )
        rates = [int(r) for r in args.rates.split(",") if r]
        try:
            if not args.no_warmup_run:
                warm_up(spark, broker, work, names, rates[0], args)
            for rate in rates:
                for name in names:
                    sides = SIDES + (FLINK_SIDES if args.flink and name == "standard" else ())
                    rt, mb, *flink = [
                        run_side(spark, broker, work, s, name, rate, args) for s in sides
                    ]
                    for row in (rt, mb, *flink):
                        out["sides"].append(row)
                        print(json.dumps(row), flush=True)
                    line = compare(rt, mb, *flink)
                    out["comparisons"].append(line)
                    print(line, flush=True)
                    if (
                        len(
                            {rt["matches"], mb["matches"], rt["batch_matches"], mb["batch_matches"]}
                        )
                        > 1
                    ):
                        print(
                            f"WARNING: {rate} events/s {name}: real-time wrote {rt['matches']}"
                            f" matches, micro-batch {mb['matches']}, the batch query finds "
                            f"{rt['batch_matches']}",
                            flush=True,
                        )
                    for row in flink:  # Flink's form may differ at the ends: reported, no more
                        if row["matches"] != row["batch_matches"]:
                            print(
                                f"NOTE: {rate} events/s {row['side']} wrote {row['matches']}"
                                f" matches, the batch query finds {row['batch_matches']}",
                                flush=True,
                            )
        finally:
            spark.stop()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
