"""MATCH_RECOGNIZE from a Spark Connect client: configure() on a local-mode Connect builder
(``SparkSession.builder.remote("local[2]")``) starts the Connect server with the jar and
the extension, and queries (SQL and match_recognize()) give the classic session's rows.

The Connect session runs in a new Python process: a process holds either a classic
SparkContext or a local Connect server, not both.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from result_compare import compare_rows
from spark_match_recognize import configure, jar_path

ROOT = Path(__file__).resolve().parents[1]

QUERIES = {
    "v_shape": """
        SELECT * FROM VALUES
          ('A', 1, 10), ('A', 2, 8), ('A', 3, 6), ('A', 4, 9), ('A', 5, 12),
          ('A', 6, 11), ('A', 7, 7), ('A', 8, 13), ('B', 1, 5), ('B', 2, 4), ('B', 3, 6)
          AS t(sym, ts, price)
        MATCH_RECOGNIZE (
          PARTITION BY sym ORDER BY ts
          MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts,
                   count(*) AS n, collect_list(DOWN.price) AS downs
          PATTERN (STRT DOWN+ UP+)
          DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))""",
    "all_rows": """
        SELECT * FROM VALUES (1, TIMESTAMP'2024-01-01 10:00:00', 'fail'),
          (1, TIMESTAMP'2024-01-01 10:01:00', 'fail'), (1, TIMESTAMP'2024-01-01 10:02:00', 'ok'),
          (2, TIMESTAMP'2024-01-01 10:00:00', 'ok') AS t(user_id, ts, status)
        MATCH_RECOGNIZE (
          PARTITION BY user_id ORDER BY ts
          MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mn, RUNNING count(F.*) AS fails
          ALL ROWS PER MATCH WITH UNMATCHED ROWS
          PATTERN (F+ S)
          DEFINE F AS status = 'fail', S AS status = 'ok')""",
}

DATAFRAME_CALL = dict(
    partition_by="sym",
    order_by=[("ts", "asc")],
    measures={"start_ts": "FIRST(STRT.ts)", "n": "count(*)"},
    pattern="STRT DOWN+ UP+",
    define={"DOWN": "price < PREV(price)", "UP": "price > PREV(price)"},
)
DATAFRAME_ROWS = [("A", 1, 10), ("A", 2, 8), ("A", 3, 9), ("B", 1, 3), ("B", 2, 2), ("B", 3, 1)]

CLIENT = """
import json, sys, warnings
from pyspark.sql import SparkSession
from spark_match_recognize import configure, match_recognize, pattern_table_status

queries, call, rows, stream = json.loads(sys.stdin.read())
call["order_by"] = [tuple(k) if isinstance(k, list) else k for k in call["order_by"]]
builder = (SparkSession.builder.remote("local[2]")
           .config("spark.sql.session.timeZone", "UTC")
           .config("spark.sql.shuffle.partitions", "4")
           .config("spark.ui.showConsoleProgress", "false"))
with warnings.catch_warnings():
    # Spark Connect reports that the server-side settings (spark.jars,
    # spark.sql.extensions) cannot be changed once its server runs: they were applied
    # when it started.
    warnings.simplefilter("ignore")
    spark = configure(builder, max_live_partial_matches=50000).getOrCreate()
out = {"session": type(spark).__module__,
       "max_live_partial_matches": spark.conf.get("spark.sql.matchRecognize.maxLivePartialMatches")}
for name, sql in queries.items():
    df = spark.sql(sql)
    out[name] = {"columns": df.columns, "rows": [[str(v) for v in r] for r in df.collect()]}
df = spark.createDataFrame(rows, "sym string, ts int, price int")
result = match_recognize(df, **call)
rows = [[str(v) for v in r] for r in result.collect()]
out["dataframe"] = {"columns": result.columns, "rows": rows}
spark.sql("CREATE OR REPLACE TEMP VIEW connect_rules (name, pattern, define) AS VALUES "
          "('up', 'A B', 'B AS price > A.price'), ('broken', 'A (', 'A AS price > 1')")
status = pattern_table_status(df, "connect_rules", partition_by="sym", order_by="ts",
                              measures={"first_ts": "FIRST(ts)"})
out["status"] = sorted([r["name"], r["runs"], r["problem"] or ""] for r in status.collect())
(spark.readStream.schema(stream["schema"]).option("maxFilesPerTrigger", 1)
    .json(stream["source"]).withWatermark("ts", "5 seconds").createOrReplaceTempView("ticks"))
streamed = spark.sql(stream["sql"])
query = (streamed.writeStream.format("memory").queryName("connect_matches")
         .option("checkpointLocation", stream["checkpoint"]).outputMode("append")
         .trigger(availableNow=True).start())
query.awaitTermination()
out["stream"] = {"is_streaming": streamed.isStreaming, "columns": streamed.columns,
                 "rows": [[str(v) for v in r] for r in spark.table("connect_matches").collect()]}
try:
    spark.sql("SELECT * FROM VALUES (1) AS t(a) MATCH_RECOGNIZE (ORDER BY a PATTERN (A) "
              "DEFINE B AS a > 0)").collect()
except Exception as e:
    out["error"] = [type(e).__name__, e.getCondition(), str(e)]
try:
    spark.sql("SELECT * FROM VALUES (1, 1), (1, 2) AS t(k, v) MATCH_RECOGNIZE (ORDER BY v "
              "MEASURES A.v AS a AFTER MATCH SKIP TO FIRST A PATTERN (A) "
              "DEFINE A AS true)").collect()
except Exception as e:
    out["runtime_error"] = [type(e).__name__, e.getCondition(), str(e)]
spark.stop()
print("RESULT " + json.dumps(out))
"""


# A stream of ticks, one JSON file per micro-batch; the last file moves the watermark past
# the others. Each V is decided by the symbol's next tick.
STREAM_SQL = """
    SELECT * FROM ticks MATCH_RECOGNIZE (
      PARTITION BY sym ORDER BY ts
      MEASURES FIRST(STRT.ts) AS start_ts, LAST(UP.ts) AS end_ts, MATCH_NUMBER() AS n
      PATTERN (STRT DOWN+ UP+)
      DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price))"""
STREAM_SCHEMA = "sym STRING, ts TIMESTAMP, price INT"
STREAM_BATCHES = [
    [("A", 1, 10), ("A", 2, 8), ("B", 1, 5)],
    [("A", 3, 6), ("A", 4, 9), ("B", 2, 4)],
    [("A", 5, 12), ("A", 6, 11), ("B", 3, 6), ("B", 4, 2)],
    [("A", 7, 7), ("A", 8, 13), ("A", 9, 1)],
    [("~clock", 3600, 0)],
]


def _write_stream_source(directory: Path) -> None:
    directory.mkdir(parents=True)
    for i, batch in enumerate(STREAM_BATCHES):
        path = directory / f"batch-{i}.json"
        path.write_text(
            "".join(
                json.dumps(
                    {
                        "sym": s,
                        "ts": f"2024-01-01 {t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d}",
                        "price": p,
                    }
                )
                + "\n"
                for s, t, p in batch
            )
        )
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


@pytest.fixture(scope="module")
def connect_results(tmp_path_factory):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    env["SPARK_MATCH_RECOGNIZE_JAR"] = jar_path()
    # An ephemeral port for the local Connect server (pyspark's test mode), so that the
    # test never collides with a server already listening on 15002.
    env["SPARK_TESTING"] = "1"
    env["TZ"] = "UTC"
    work = tmp_path_factory.mktemp("connect-stream")
    _write_stream_source(work / "source")
    stream = {
        "schema": STREAM_SCHEMA,
        "source": str(work / "source"),
        "checkpoint": str(work / "checkpoint"),
        "sql": STREAM_SQL,
    }
    payload = json.dumps([QUERIES, DATAFRAME_CALL, DATAFRAME_ROWS, stream])
    result = subprocess.run(
        [sys.executable, "-c", CLIENT],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        timeout=400,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def _as_strings(df) -> dict:
    return {"columns": df.columns, "rows": [[str(v) for v in r] for r in df.collect()]}


def test_the_client_runs_a_connect_session(connect_results):
    assert connect_results["session"] == "pyspark.sql.connect.session"
    assert connect_results["max_live_partial_matches"] == "50000"


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_connect_rows_equal_classic_rows(spark, connect_results, name):
    classic = _as_strings(spark.sql(QUERIES[name]))
    remote = connect_results[name]
    assert remote["columns"] == classic["columns"]
    assert classic["rows"]
    assert (
        compare_rows([tuple(r) for r in remote["rows"]], [tuple(r) for r in classic["rows"]], False)
        is None
    )


def test_match_recognize_on_a_connect_dataframe(spark, connect_results):
    from spark_match_recognize import match_recognize

    df = spark.createDataFrame(DATAFRAME_ROWS, "sym string, ts int, price int")
    classic = _as_strings(match_recognize(df, **DATAFRAME_CALL))
    remote = connect_results["dataframe"]
    assert remote["columns"] == classic["columns"] == ["sym", "start_ts", "n"]
    assert sorted(remote["rows"]) == sorted(classic["rows"]) == [["A", "1", "3"]]


def test_a_streaming_query_from_a_connect_client_equals_the_batch_query(spark, connect_results):
    remote = connect_results["stream"]
    assert remote["is_streaming"]
    rows = [
        (s, datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=t), p)
        for batch in STREAM_BATCHES[:-1]
        for s, t, p in batch
    ]
    spark.createDataFrame(rows, STREAM_SCHEMA).createOrReplaceTempView("ticks")
    classic = _as_strings(spark.sql(STREAM_SQL))
    # B's only V (5 4 6) is decided by its next tick (2); A's second V (7 13) waits for the
    # tick after 13, which is 1: every match is decided before the stream's end.
    assert remote["columns"] == classic["columns"]
    assert len(classic["rows"]) == 3
    assert sorted(remote["rows"]) == sorted(classic["rows"])


def test_pattern_table_status_runs_over_connect(connect_results):
    """The status is SQL (a table function), which a Connect client reaches as any query."""
    [broken, up] = connect_results["status"]
    assert up == ["up", True, ""]
    assert broken[:2] == ["broken", False] and "missing ')'" in broken[2], broken


def test_errors_reach_the_connect_client(connect_results):
    name, condition, message = connect_results["error"]
    assert name == "AnalysisException"
    assert condition == "MATCH_RECOGNIZE.UNKNOWN_PATTERN_VARIABLE"
    assert "DEFINE names pattern variable `B`" in message


def test_errors_of_a_running_query_reach_the_connect_client(connect_results):
    name, condition, message = connect_results["runtime_error"]
    assert name == "SparkRuntimeException"
    assert condition == "MATCH_RECOGNIZE.SKIP_FAILED"
    assert "cannot skip to first row of match" in message
    assert "Job aborted" not in message, message


def test_configure_refuses_a_remote_connect_server():
    from pyspark.sql import SparkSession

    builder = SparkSession.Builder().remote("sc://example.invalid:15002")
    with pytest.raises(ValueError) as caught:
        configure(builder)
    message = str(caught.value)
    assert "sc://example.invalid:15002" in message and "--jars" in message
    assert 'remote("local[2]")' in message


def _documented_server_command() -> str:
    """The bash block of docs/configuration.md that starts a standalone Connect server."""
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```bash\n")[1:]]
    (block,) = [b for b in blocks if "SparkConnectServer" in b]
    return block


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_documented_connect_server_command_serves_match_recognize(spark, tmp_path):
    """Runs the command docs/configuration.md gives (with a free port) and queries the server
    from a plain Connect client in another process."""
    import signal
    import time

    port = _free_port()
    command = _documented_server_command().replace("15002", str(port))
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["TZ"] = "UTC"
    log = tmp_path / "server.log"
    with open(log, "w") as sink:
        server = subprocess.Popen(
            ["bash", "-c", "set -e\n" + command.replace("\\\n", " ")],
            env=env,
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    client = (
        "import json, sys\n"
        "from pyspark.sql import SparkSession\n"
        "s = SparkSession.builder.remote(sys.argv[1]).getOrCreate()\n"
        "rows = s.sql(sys.argv[2]).collect()\n"
        "print('RESULT ' + json.dumps([[str(v) for v in r] for r in rows]))\n"
    )
    try:
        deadline = time.time() + 300
        while "Spark Connect server started" not in log.read_text(errors="replace"):
            assert server.poll() is None, log.read_text(errors="replace")[-4000:]
            assert time.time() < deadline, log.read_text(errors="replace")[-4000:]
            time.sleep(1)
        result = subprocess.run(
            [sys.executable, "-c", client, f"sc://localhost:{port}", QUERIES["v_shape"]],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-4000:]
        line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
        remote = json.loads(line[len("RESULT ") :])
        classic = _as_strings(spark.sql(QUERIES["v_shape"]))["rows"]
        assert remote and sorted(remote) == sorted(classic)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
