"""Flink SQL's MATCH_RECOGNIZE between two Kafka topics: the Flink side of
bench/kafka_latency.py.

Reads the ticks that bench/kafka_latency.py produces (JSON `{"symbol", "ts", "price", "seq",
"sent_ms"}`, keyed by symbol) from `--input`, runs the V-shape query in the form Flink
accepts (flink_peer.py's `logical-terminated`: `PATTERN (STRT DOWN+ UP+ N)`, logical offsets,
`AFTER MATCH SKIP TO LAST N`, no WITHIN, as the Spark query has none) and writes each match
as JSON `{"symbol", "start_ts", "end_ts", "seq", "sent_ms"}` to `--output`, `seq` and
`sent_ms` being the last rise's, as on the Spark sides (N is the row that tells the rise
has ended, the tick our side waits for too).

Two variants, `--variant`:

- `rowtime`: ORDER BY the event time `ts`, a rowtime attribute with a watermark 1 ms behind
  the largest `ts` read (`WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND`, Flink's form for
  ascending timestamps: at 10,000 events/s ticks of different symbols share a millisecond,
  and a row whose time equals the watermark is late and dropped). The Kafka source makes a
  watermark per partition and the operators take the smallest; ticks of a symbol are in
  order within their partition. `table.exec.source.idle-timeout` (10 s) lets the watermark
  move past a partition that has stopped receiving ticks (after the last tick, only one
  partition holds the flush tick an hour ahead); it is longer than the wait between the
  job's start and the first tick, so that no partition is idle when the ticks begin (the
  other partition's first rows would then be late). Watermark alignment is off (Flink's
  default). Watermarks are emitted every 10 ms (`pipeline.auto-watermark-interval`; Flink's
  default, 200 ms, would add up to that much to every match).
- `proctime`: ORDER BY `PROCTIME()`: rows are matched in the order they reach the operator,
  no watermark.

Both: parallelism 2 (a source subtask per partition, 2 matching subtasks),
`execution.buffer-timeout.interval` 10 ms (Flink's default, 100 ms, is a throughput
setting), `linger.ms=0` on the sink's producer (as on the Spark side). The connector is the
Maven artifact `org.apache.flink:flink-sql-connector-kafka` (CONNECTOR_VERSION, built for
Flink 2.2; it runs on the Flink of bench/.flink-venv, flink_peer.FLINK_VERSION), fetched once
by `dev/kafka flink-connector-jars` and given to Flink with `pipeline.jars`.

Once all the job's tasks run (the local mini-cluster's REST API, on a port chosen here,
says so) it prints `FLINK_JOB_RUNNING {json}` (versions, variant, settings, query) on
stdout; the job then runs until the process is killed. With `--serve` (how
bench/kafka_latency.py runs it, through `FlinkJobs`) the process runs the jobs that the
lines of its stdin ask for, one at a time, in one JVM. Run it with the system python3 or any
other (it re-executes itself in bench/.flink-venv, which it creates as flink_peer.py does):

    python3 bench/flink_kafka.py --bootstrap 127.0.0.1:9092 --input events --output matches \
        --variant rowtime
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO

from flink_peer import FORMS, PARALLELISM, VENV_PYTHON, ensure_venv, in_venv, reexec_in_venv

ROOT = Path(__file__).resolve().parent.parent
CONNECTOR_VERSION = os.environ.get("FLINK_KAFKA_CONNECTOR_VERSION", "5.0.0-2.2")
READY = "FLINK_JOB_RUNNING"
SERVING = "FLINK_SERVING"
CANCELLED = "FLINK_JOB_CANCELLED"
VARIANTS = ("rowtime", "proctime")

SETTINGS = {
    "parallelism.default": str(PARALLELISM),
    "execution.buffer-timeout.interval": "10 ms",
    "pipeline.auto-watermark-interval": "10 ms",
    "table.exec.source.idle-timeout": "10 s",
}


def log(msg: str) -> None:
    print(f"[flink_kafka] {msg}", file=sys.stderr, flush=True)


def query(variant: str) -> str:
    skip, pattern, define = FORMS["logical-terminated"]
    order = "ts" if variant == "rowtime" else "pt"
    return f"""SELECT * FROM ticks MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY {order}
  MEASURES FIRST(STRT.ts) AS start_ts, LAST(UP.ts) AS end_ts, LAST(UP.seq) AS seq,
    LAST(UP.sent_ms) AS sent_ms
  ONE ROW PER MATCH {skip}
  PATTERN ({pattern})
  DEFINE {define})"""


def kafka_options(bootstrap: str, topic: str) -> str:
    return f"""'connector' = 'kafka',
  'topic' = '{topic}',
  'properties.bootstrap.servers' = '{bootstrap}',
  'format' = 'json',
  'json.timestamp-format.standard' = 'ISO-8601'"""


def source_ddl(bootstrap: str, topic: str, variant: str) -> str:
    # `ts` is written as ISO-8601 UTC with a `Z` ending, which TIMESTAMP_LTZ reads.
    order = (
        "WATERMARK FOR ts AS ts - INTERVAL '0.001' SECOND"
        if variant == "rowtime"
        else "pt AS PROCTIME()"
    )
    return f"""CREATE TEMPORARY TABLE ticks (
  symbol STRING, ts TIMESTAMP_LTZ(3), price DOUBLE, seq BIGINT, sent_ms BIGINT,
  {order}
) WITH (
  {kafka_options(bootstrap, topic)},
  'properties.group.id' = 'flink-{topic}',
  'scan.startup.mode' = 'earliest-offset'
)"""


def sink_ddl(bootstrap: str, topic: str) -> str:
    return f"""CREATE TEMPORARY TABLE found (
  symbol STRING, start_ts TIMESTAMP_LTZ(3), end_ts TIMESTAMP_LTZ(3), seq BIGINT,
  sent_ms BIGINT
) WITH (
  {kafka_options(bootstrap, topic)},
  'properties.linger.ms' = '0'
)"""


def connector_jars() -> list[str]:
    """The connector's jars, fetched by dev/kafka into the cache on first use."""
    listing = subprocess.run(
        [str(ROOT / "dev" / "kafka"), "flink-connector-jars", CONNECTOR_VERSION],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if listing.returncode != 0:
        raise SystemExit(f"dev/kafka flink-connector-jars failed:\n{listing.stderr[-3000:]}")
    return [jar for jar in listing.stdout.strip().split(",") if jar]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Runner:
    """One table environment (one gateway JVM) for the jobs one after the other: the later
    jobs run in a JVM whose classes are loaded and code compiled, as the Spark sides' do."""

    def __init__(self, args: argparse.Namespace):
        import pyflink.version
        from pyflink.table import EnvironmentSettings, TableEnvironment

        self.bootstrap = args.bootstrap
        self.t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        conf = self.t_env.get_config()
        jars = connector_jars()
        conf.set("pipeline.jars", ";".join(Path(jar).resolve().as_uri() for jar in jars))
        # Every job of a local PyFlink has a mini-cluster of its own; on this fixed port its
        # REST API tells when the job's tasks run.
        self.port = free_port()
        self.settings = {**SETTINGS, **dict(kv.partition("=")[::2] for kv in args.conf)}
        for key, value in {**self.settings, "rest.port": str(self.port)}.items():
            conf.set(key, value)
        self.version = pyflink.version.__version__
        self.result = None

    def start(self, variant: str, input_topic: str, output_topic: str) -> dict:
        """Submits the job and returns once all its tasks run."""
        for table in ("ticks", "found"):
            self.t_env.execute_sql(f"DROP TEMPORARY TABLE IF EXISTS {table}")
        self.t_env.execute_sql(source_ddl(self.bootstrap, input_topic, variant))
        self.t_env.execute_sql(sink_ddl(self.bootstrap, output_topic))
        sql = query(variant)
        t0 = time.monotonic()
        self.result = self.t_env.execute_sql(f"INSERT INTO found\n{sql}")
        job_id = str(self.result.get_job_client().get_job_id())
        while not self.tasks_running(job_id):
            if time.monotonic() - t0 > 300:
                raise TimeoutError(f"the tasks of job {job_id} did not run within 300 s")
            time.sleep(0.2)
        log(f"job {job_id} ({variant}) running after {time.monotonic() - t0:.1f} s")
        return {
            "flink_version": self.version,
            "connector": f"flink-sql-connector-kafka {CONNECTOR_VERSION}",
            "variant": variant,
            "settings": self.settings,
            "query": sql,
        }

    def tasks_running(self, job_id: str) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/jobs/{job_id}") as r:
                vertices = json.load(r)["vertices"]
        except OSError:  # the mini-cluster's REST endpoint is not up yet
            return False
        return all(v["tasks"].get("RUNNING", 0) == v["parallelism"] for v in vertices)

    def cancel(self) -> None:
        if self.result is not None:
            self.result.get_job_client().cancel().result()
            self.result = None


def run(args: argparse.Namespace) -> None:
    """With `--serve`, the jobs that the lines of stdin ask for (`VARIANT INPUT OUTPUT`
    starts one, after cancelling the one running; `cancel` cancels it), answering each line
    on stdout; else the one job of the arguments, until killed."""
    runner = Runner(args)
    if not args.serve:
        print(READY, json.dumps(runner.start(args.variant, args.input, args.output)), flush=True)
        assert runner.result is not None
        runner.result.wait()
        return
    print(SERVING, flush=True)
    for line in sys.stdin:
        runner.cancel()
        if line.split() == ["cancel"]:
            print(CANCELLED, flush=True)
        elif line.strip():
            variant, input_topic, output_topic = line.split()
            print(READY, json.dumps(runner.start(variant, input_topic, output_topic)), flush=True)


class FlinkJobs:
    """bench/flink_kafka.py --serve as a child process, for bench/kafka_latency.py: in a
    process group of its own (PyFlink's gateway JVM is a child of it), its stderr in `log`.
    `start()` runs a job and returns this object, whose `exception()` and `stop()` are then
    the job's, as a Spark streaming query has them; `close()` ends the process."""

    def __init__(self, bootstrap: str, log_file: Path):
        ensure_venv()
        self.log = log_file
        self._err: IO[bytes] = log_file.open("ab")
        self.process = subprocess.Popen(
            [str(VENV_PYTHON), __file__, "--serve", "--bootstrap", bootstrap],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            start_new_session=True,
        )
        # Read by a thread: the gateway JVM shares this stdout, and a wait needs a timeout.
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        atexit.register(self.close)
        self.info: dict = {}
        self._answer(SERVING, 300)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")  # the end

    def _answer(self, word: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no {word} from flink_kafka.py in {timeout} s") from None
            if line.startswith(word):
                return line[len(word) :]
            if not line:
                raise RuntimeError(f"flink_kafka.py ended; see {self.log}")

    def _ask(self, line: str, word: str, timeout: float = 300) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self._answer(word, timeout)

    def start(self, variant: str, topics: tuple[str, str]) -> FlinkJobs:
        self.info = json.loads(self._ask(f"{variant} {topics[0]} {topics[1]}", READY))
        return self

    def wait_started(self) -> None:
        time.sleep(1)  # the source readers' first fetch

    def exception(self) -> str | None:
        code = self.process.poll()
        return None if code is None else f"flink_kafka.py exited ({code}); see {self.log}"

    def stop(self) -> None:
        self._ask("cancel", CANCELLED, 120)

    def close(self) -> None:
        """Ends the process group: the script and the gateway JVM."""
        if self._err.closed:
            return  # closed already (the group id may be another's by now)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break  # the whole group has ended
            try:
                self.process.wait(timeout=30)
                time.sleep(1)  # then SIGKILL for a gateway JVM still shutting down
            except subprocess.TimeoutExpired:
                continue
        self._err.close()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bootstrap", required=True, help="the broker, HOST:PORT")
    p.add_argument("--input", help="the ticks' topic")
    p.add_argument("--output", help="the matches' topic")
    p.add_argument("--variant", choices=VARIANTS, default="rowtime")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Flink option")
    p.add_argument("--serve", action="store_true", help="run the jobs that stdin asks for")
    args = p.parse_args(argv)
    if not args.serve and not (args.input and args.output):
        p.error("--input and --output are required without --serve")
    if not in_venv():
        reexec_in_venv(__file__)  # does not return
    run(args)


if __name__ == "__main__":
    main()
