"""Runs one SQL query as a Structured Streaming query from Kafka to Kafka, and the same query
in batch over the same rows, in a Spark session of its own, and writes both results as JSON.

    python tests/kafka_streaming_runner.py spec.json result.json

Used by test_streaming_kafka.py: Spark's Kafka connector has to be on ``spark.jars`` when the
SparkContext starts, and the test run's shared session (conftest.py) is already up without it,
so the runner starts its own SparkSession in a separate process.

``spec.json`` holds:

- ``bootstrap``: the broker, ``127.0.0.1:PORT``; ``jars``: the connector jars;
- ``events_topic``, ``matches_topic``: existing topics; ``checkpoint``: a new folder;
- ``events``: ``[symbol, ts, price]`` rows (``ts`` as ``yyyy-MM-dd HH:mm:ss`` in UTC, price
  may be null), produced into ``events_topic`` as JSON values keyed by symbol, in the order
  given, by one task;
- ``query``: one SELECT over the temporary view ``ticks`` (symbol STRING, ts TIMESTAMP,
  price DOUBLE). In streaming, ``ticks`` is the Kafka source parsed, with
  ``withWatermark("ts", watermark)``, and the query runs with ``trigger(availableNow=True)``
  into ``matches_topic``; in batch, ``ticks`` is the records of ``events`` read back with
  ``spark.read`` and parsed the same way;
- ``flush_events`` (optional): rows produced only once the streaming query has read every
  event and stopped; the query then runs again from its checkpoint and reads just them. A
  tick far in the future here moves the watermark past every event, so that a stateful
  query emits what it still holds. The batch query does not see them. (Produced together
  with the events, the rate limit could hand them to the first micro-batch, whose watermark
  would then drop every later event as late.)
- ``watermark`` (``10 seconds``), ``output_mode`` (``append``), ``max_offsets_per_trigger``
  (records a micro-batch takes from the source, 4, so that the rows arrive in several
  batches), ``options``: keyword options of ``configure()``
  (``spark.sql.matchRecognize.*`` settings);
- ``real_time`` (optional, Spark 4.3): a batch duration such as ``5 minutes``. The query
  then runs in Real-Time Mode (``trigger(realTime=...)``, update output mode, the RocksDB
  state store, checkpoint format 2) until ``matches_topic`` holds ``expected_matches``
  records, and is stopped; ``committed_before_output`` says whether a batch that read input
  had ended before the last of them was written;
- ``connect`` (optional): run everything from a Spark Connect client
  (``SparkSession.builder.remote``), against a local Connect server started with the
  session's settings.

``result.json`` holds ``columns`` (the query's), ``streamed`` (the values read back from
``matches_topic``), ``batch`` (the batch query's rows), each a list of objects written by
``to_json`` (timestamps as ISO-8601 text in UTC, nulls kept); ``batches``: the number of
micro-batches that read input rows; ``dropped_by_watermark``: the rows the stateful operators
dropped as late; ``produced``: ``[partition, symbol, ts]`` of each record of
``events_topic``, in partition and offset order.
"""

from __future__ import annotations

import json
import os
import sys
import time

SCHEMA = "symbol STRING, ts TIMESTAMP, price DOUBLE"


def session(jars: list[str], options: dict, real_time: bool = False, connect: bool = False):
    from pyspark.sql import SparkSession

    from spark_match_recognize import configure
    from spark_match_recognize.demo import local_checkpoint_conf

    # Real-Time Mode runs a task per source partition (2) and per shuffle partition at once,
    # and keeps them running; two more slots read the output back meanwhile.
    master = "local[6]" if real_time else "local[2]"
    builder = (
        SparkSession.builder.remote(master) if connect else SparkSession.builder.master(master)
    )
    builder = (
        builder.appName("spark-match-recognize-kafka")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.shuffle.partitions", "2" if real_time else "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.adaptive.enabled", "true")
        .config(map=local_checkpoint_conf())
    )
    if real_time:
        builder = builder.config(
            "spark.sql.streaming.stateStore.providerClass",
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        ).config("spark.sql.streaming.stateStore.checkpointFormatVersion", "2")
    return configure(builder, **options).getOrCreate()


def json_value(df):
    """Each row of ``df`` as one JSON text (nulls kept): the Kafka sink's value column."""
    from pyspark.sql import functions as F

    columns = [F.col(f"`{c}`") for c in df.columns]
    return F.to_json(F.struct(*columns), {"ignoreNullFields": "false"}).alias("value")


def as_json(df):
    return df.select(json_value(df))


def parse_ticks(records):
    """The ``ticks`` columns from the records of the events topic."""
    from pyspark.sql import functions as F

    tick = F.from_json(F.col("value").cast("string"), SCHEMA).alias("tick")
    return records.select(tick).select("tick.*")


def produce(spark, spec: dict, rows: list) -> None:
    events = spark.createDataFrame(
        [tuple(row) for row in rows], "symbol STRING, ts STRING, price DOUBLE"
    ).selectExpr("symbol", "CAST(ts AS TIMESTAMP) AS ts", "price")
    # One task writes them all, so that each symbol's ticks reach its partition in order.
    (
        events.coalesce(1)
        .select(events["symbol"].alias("key"), json_value(events))
        .write.format("kafka")
        .option("kafka.bootstrap.servers", spec["bootstrap"])
        .option("topic", spec["events_topic"])
        .save()
    )


def read_events(spark, spec: dict):
    return (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", spec["bootstrap"])
        .option("subscribe", spec["events_topic"])
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )


def end_offsets(spark, spec: dict) -> dict[int, int]:
    """The next offset of each partition of the events topic that holds records."""
    ends = read_events(spark, spec).groupBy("partition").agg({"offset": "max"}).collect()
    return {row[0]: row[1] + 1 for row in ends}


def start_query(spark, spec: dict, real_time: bool):
    """The streaming query from the events topic to the matches topic, started: until the
    topic is read (``availableNow``, a few records a micro-batch) or in Real-Time Mode."""
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", spec["bootstrap"])
        .option("subscribe", spec["events_topic"])
        .option("startingOffsets", "earliest")
    )
    if not real_time:
        reader = reader.option("maxOffsetsPerTrigger", str(spec.get("max_offsets_per_trigger", 4)))
    ticks = parse_ticks(reader.load()).withWatermark("ts", spec.get("watermark", "10 seconds"))
    ticks.createOrReplaceTempView("ticks")
    writer = (
        as_json(spark.sql(spec["query"]))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", spec["bootstrap"])
        .option("topic", spec["matches_topic"])
        .option("checkpointLocation", spec["checkpoint"])
    )
    if real_time:
        return writer.outputMode("update").trigger(realTime=spec["real_time"]).start()
    return writer.outputMode(spec.get("output_mode", "append")).trigger(availableNow=True).start()


def run_available(spark, spec: dict) -> list[dict]:
    """Runs the streaming query until it has read what the topic holds; its progress."""
    query = start_query(spark, spec, real_time=False)
    try:
        if not query.awaitTermination(600):
            raise TimeoutError("the streaming query did not finish within 600 s")
    finally:
        query.stop()
    if query.exception() is not None:
        raise RuntimeError(f"the streaming query failed: {query.exception()}")
    return query.recentProgress


def run_real_time(spark, spec: dict) -> tuple[list[dict], bool]:
    """Runs the streaming query in Real-Time Mode until the output topic holds
    ``expected_matches`` records; its progress, and whether a batch that read input had
    ended (committed) before the last of them was written."""
    query = start_query(spark, spec, real_time=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            committed = any(p["numInputRows"] > 0 for p in query.recentProgress)
            if len(read_back(spark, spec)) >= spec["expected_matches"]:
                break
            if query.exception() is not None:
                raise RuntimeError(f"the streaming query failed: {query.exception()}")
            if time.monotonic() > deadline:
                raise TimeoutError("the real-time query wrote too few matches within 300 s")
            time.sleep(0.2)
        return query.recentProgress, committed
    finally:
        query.stop()


def read_back(spark, spec: dict) -> list[dict]:
    records = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", spec["bootstrap"])
        .option("subscribe", spec["matches_topic"])
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .load()
    )
    return [json.loads(row.value) for row in records.selectExpr("CAST(value AS STRING)").collect()]


def batch(spark, spec: dict, ends: dict[int, int]) -> list[dict]:
    """The query in batch over the records of the events topic below ``ends``."""
    from pyspark.sql import functions as F

    below = F.lit(False)
    for partition, end in ends.items():
        below = below | ((F.col("partition") == partition) & (F.col("offset") < end))
    parse_ticks(read_events(spark, spec).where(below)).createOrReplaceTempView("ticks")
    return [json.loads(row.value) for row in as_json(spark.sql(spec["query"])).collect()]


def produced(spark, spec: dict) -> list[list]:
    """``[partition, symbol, ts]`` of each record of the events topic, in partition and
    offset order."""
    records = read_events(spark, spec).orderBy("partition", "offset")
    tick = f"from_json(CAST(value AS STRING), '{SCHEMA}') AS tick"
    rows = records.selectExpr("partition", tick).collect()
    return [[r.partition, r.tick.symbol, r.tick.ts.strftime("%Y-%m-%d %H:%M:%S")] for r in rows]


def main(source: str, target: str) -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    with open(source, encoding="utf-8") as f:
        spec = json.load(f)
    real_time = "real_time" in spec
    connect = bool(spec.get("connect"))
    if connect:
        # A local Connect server for this process alone, on a free port.
        os.environ["SPARK_TESTING"] = "1"
    spark = session(spec["jars"], spec.get("options", {}), real_time, connect)
    if not connect:
        spark.sparkContext.setLogLevel("ERROR")
    committed_before_output = None
    try:
        for statement in spec.get("setup", []):
            spark.sql(statement)
        produce(spark, spec, spec["events"])
        ends = end_offsets(spark, spec)
        if real_time:
            progress, committed_before_output = run_real_time(spark, spec)
        else:
            progress = run_available(spark, spec)
        if spec.get("flush_events"):
            produce(spark, spec, spec["flush_events"])
            progress += run_available(spark, spec)
        stream_sql = spark.sql(spec["query"])  # the streaming view: just for the columns
        result = {
            "columns": stream_sql.columns,
            "streamed": read_back(spark, spec),
            "batch": batch(spark, spec, ends),
            "batches": sum(1 for p in progress if p["numInputRows"] > 0),
            "dropped_by_watermark": sum(
                op.get("numRowsDroppedByWatermark", 0)
                for p in progress
                for op in p.get("stateOperators", [])
            ),
            "produced": produced(spark, spec),
            "committed_before_output": committed_before_output,
            "session": type(spark).__module__,
        }
    finally:
        spark.stop()
    with open(target, "w", encoding="utf-8") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main(*sys.argv[1:])
