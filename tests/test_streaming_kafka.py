"""End to end through Spark's Kafka source and sink, with a real broker (dev/kafka).

JSON ticks are produced into the topic ``events`` with Spark's batch Kafka sink; a streaming
query reads them with ``spark.readStream.format("kafka")``, parses them into the temporary
view ``ticks`` (symbol STRING, ts TIMESTAMP, price DOUBLE, with a 10-second watermark on
``ts``), runs :data:`QUERY` over it and writes the rows as JSON to the topic ``matches`` with
``trigger(availableNow=True)``, a few source records per micro-batch. The topic is read back
with ``spark.read`` and compared with :data:`EXPECTED` and with the same query run in batch
over the same rows.

The Spark side runs in its own process (kafka_streaming_runner.py): the connector must be on
``spark.jars`` when the SparkContext starts, and the shared session of conftest.py is not.
The connector is that of the installed pyspark's release, or the nearest earlier release the
Maven repository here serves (kafka_broker.connector_releases).

:data:`QUERY` is a MATCH_RECOGNIZE query; :data:`FLUSH_EVENTS` are
produced only after the stream has read every event, and read by a second run of the query
from its checkpoint, to move the watermark past the events.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from kafka_broker import kafka_broker, kafka_spark_jars

HERE = Path(__file__).parent

# Two symbols, a tick a minute each, each with dips and recoveries, in time order. Produced
# keyed by symbol, so that each symbol's ticks stay in order within one partition of
# ``events`` (Kafka's default partitioner puts AAPL in partition 1 of 2, MSFT in 0). Both
# have as many ticks at the same times: a micro-batch then takes as many of each
# (maxOffsetsPerTrigger is shared out in proportion to what each partition holds), so the
# watermark never passes a tick not yet read and a stateful query drops none as late.
EVENTS = [
    ["AAPL", "2024-01-02 09:00:00", 10.0],
    ["MSFT", "2024-01-02 09:00:00", 20.0],
    ["AAPL", "2024-01-02 09:01:00", 9.0],
    ["MSFT", "2024-01-02 09:01:00", 21.0],
    ["AAPL", "2024-01-02 09:02:00", 8.0],
    ["MSFT", "2024-01-02 09:02:00", 19.0],
    ["AAPL", "2024-01-02 09:03:00", 11.0],
    ["MSFT", "2024-01-02 09:03:00", 18.0],
    ["AAPL", "2024-01-02 09:04:00", 7.0],
    ["MSFT", "2024-01-02 09:04:00", 22.0],
    ["AAPL", "2024-01-02 09:05:00", 12.0],
    ["MSFT", "2024-01-02 09:05:00", 9.0],
]

# Produced once the stream has read every event, then read by a second run of the query from
# its checkpoint: a tick far in the future that moves the watermark past every event, so that
# a stateful query emits all it holds. Not part of the batch query's rows.
FLUSH_EVENTS = [["~flush", "2024-01-02 10:00:00", None]]

# The pattern under test, over the view ``ticks``; the same text runs in streaming and in
# batch. Each V is decided by the tick after its last rise, which both symbols have.
QUERY = """
SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY ts
  MEASURES FIRST(ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(ts) AS end_ts,
           MATCH_NUMBER() AS n
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))
"""

EXPECTED_COLUMNS = ["symbol", "start_ts", "bottom_ts", "end_ts", "n"]
EXPECTED = [
    {
        "symbol": "AAPL",
        "start_ts": "2024-01-02T09:00:00.000Z",
        "bottom_ts": "2024-01-02T09:02:00.000Z",
        "end_ts": "2024-01-02T09:03:00.000Z",
        "n": 1,
    },
    {
        "symbol": "MSFT",
        "start_ts": "2024-01-02T09:01:00.000Z",
        "bottom_ts": "2024-01-02T09:03:00.000Z",
        "end_ts": "2024-01-02T09:04:00.000Z",
        "n": 1,
    },
]


@pytest.fixture
def broker(tmp_path):
    with kafka_broker(tmp_path) as address:
        yield address


def run_kafka_query(broker, tmp_path: Path, query: str, events: list, **spec) -> dict:
    """Runs ``query`` from ``events`` to ``matches`` in streaming, and in batch, in a Spark
    process of its own (see kafka_streaming_runner.py for ``spec``)."""
    broker.create_topic("events", partitions=2)
    broker.create_topic("matches", partitions=1)
    source = tmp_path / "spec.json"
    target = tmp_path / "result.json"
    source.write_text(
        json.dumps(
            {
                "bootstrap": str(broker),
                "jars": kafka_spark_jars(),
                "events_topic": "events",
                "matches_topic": "matches",
                "checkpoint": str(tmp_path / "checkpoint"),
                "events": events,
                "query": query,
                **spec,
            }
        ),
        encoding="utf-8",
    )
    env = dict(os.environ)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    result = subprocess.run(
        [sys.executable, str(HERE / "kafka_streaming_runner.py"), str(source), str(target)],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    # The whole log stays beside the spec; the failure shows its end.
    (tmp_path / "runner.log").write_text(result.stderr, encoding="utf-8")
    assert result.returncode == 0, f"{tmp_path / 'runner.log'}:\n{result.stderr[-6000:]}"
    return json.loads(target.read_text(encoding="utf-8"))


def _sorted(rows: list[dict], columns: list[str]) -> list[dict]:
    return sorted(rows, key=lambda row: json.dumps([row.get(c) for c in columns]))


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_kafka_source_to_kafka_sink(broker, tmp_path):
    result = run_kafka_query(
        broker,
        tmp_path,
        QUERY,
        EVENTS,
        flush_events=FLUSH_EVENTS,
        watermark="10 seconds",
        output_mode="append",
        max_offsets_per_trigger=4,
    )
    # Each symbol's ticks went to a partition of events of its own, in the order of EVENTS.
    partitions = {}
    for symbol in sorted({symbol for symbol, _, _ in EVENTS}):
        records = [r for r in result["produced"] if r[1] == symbol]
        assert len({partition for partition, _, _ in records}) == 1, records
        assert [ts for _, _, ts in records] == [e[1] for e in EVENTS if e[0] == symbol]
        partitions[symbol] = records[0][0]
    assert sorted(partitions.values()) == [0, 1], partitions
    assert result["columns"] == EXPECTED_COLUMNS
    assert _sorted(result["batch"], EXPECTED_COLUMNS) == EXPECTED
    assert _sorted(result["streamed"], EXPECTED_COLUMNS) == EXPECTED
    # 12 records, at most 4 a micro-batch, then the flush: the rows arrived in several batches.
    assert result["batches"] >= 4
    assert result["dropped_by_watermark"] == 0


@pytest.mark.skipif(
    tuple(int(p) for p in pyspark.__version__.split(".")[:2]) < (4, 3),
    reason="Real-Time Mode exists from Spark 4.3 on",
)
def test_real_time_mode_from_kafka_to_kafka_through_spark_connect(broker, tmp_path):
    """The same query in Real-Time Mode, started from a Spark Connect client: it runs in
    transformWithState, matches each symbol's ticks as they arrive from their partition,
    and writes every match to the output topic while the long-running batch that read the
    ticks is still running, before any batch has committed; the matches are the batch
    query's. (RealTimeModeSuite runs the mode in a classic session.)"""
    result = run_kafka_query(
        broker,
        tmp_path,
        QUERY,
        EVENTS,
        real_time="5 minutes",
        expected_matches=len(EXPECTED),
        watermark="10 seconds",
        connect=True,
    )
    assert result["session"].startswith("pyspark.sql.connect"), result["session"]
    assert _sorted(result["batch"], EXPECTED_COLUMNS) == EXPECTED
    assert _sorted(result["streamed"], EXPECTED_COLUMNS) == EXPECTED
    assert result["committed_before_output"] is False


# QUERY with its pattern kept as a row of a view (docs/syntax.md, PATTERNS FROM).
RULES_VIEW = """
CREATE OR REPLACE GLOBAL TEMP VIEW v_rules AS SELECT * FROM VALUES
  ('v', 'STRT DOWN+ UP+', 'DOWN AS price < PREV(price), UP AS price > PREV(price)')
  AS t(name, pattern, define)
"""
TABLE_QUERY = QUERY.replace(
    "PATTERN (STRT DOWN+ UP+)\n  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))",
    "PATTERNS FROM global_temp.v_rules)",
)
assert "PATTERNS FROM" in TABLE_QUERY


@pytest.mark.skipif(
    tuple(int(p) for p in pyspark.__version__.split(".")[:2]) < (4, 3),
    reason="Real-Time Mode exists from Spark 4.3 on",
)
def test_real_time_mode_runs_the_patterns_of_a_table(broker, tmp_path):
    """QUERY's pattern as the row of a view, in Real-Time Mode: the patterns' operator
    (planned when the batch starts) runs in transformWithState and writes each match while
    the batch that read its ticks is still running; the rows are the batch query's, with the
    pattern's name."""
    result = run_kafka_query(
        broker,
        tmp_path,
        TABLE_QUERY,
        EVENTS,
        real_time="5 minutes",
        expected_matches=len(EXPECTED),
        watermark="10 seconds",
        setup=[RULES_VIEW],
    )
    expected = [{"pattern": "v", **row} for row in EXPECTED]
    columns = ["pattern", *EXPECTED_COLUMNS]
    assert result["columns"] == columns
    assert _sorted(result["batch"], columns) == expected
    assert _sorted(result["streamed"], columns) == expected
    assert result["committed_before_output"] is False
