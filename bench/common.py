"""Shared pieces of the benchmarks: sessions, timing protocol, data caching, reporting.

Protocol (docs/benchmarks.md): both sides run side by side in one process on the same data; each
figure is the median of 3 warm runs (after one untimed warm-up) writing to Spark's `noop`
sink (count-only: nothing is materialized); both sides' row counts are checked.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SMR_BENCH_DATA", ROOT / "bench" / "data"))
sys.path.insert(0, str(ROOT / "python"))


def session(app: str, driver_memory: str = "8g", cores: int = 2, extra: dict | None = None):
    """A local session with the extension; memory settings must be applied before the JVM
    starts, so each benchmark runs in its own process."""
    from pyspark.sql import SparkSession

    from spark_match_recognize import configure

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app)
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", str(cores * 4))
        .config("spark.local.dir", str(DATA / "spark-tmp"))
    )
    for k, v in (extra or {}).items():
        builder = builder.config(k, v)
    spark = configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def timed(spark, sql: str, runs: int = 3, slow: float = 120.0) -> tuple[float, list[float]]:
    """Median wall time of `runs` warm runs of `sql` into the noop sink (plus one warm-up)."""
    t, times, _ = timed_count(spark, sql, runs, slow)
    return t, times


def timed_count(
    spark, sql: str, runs: int = 3, slow: float = 120.0
) -> tuple[float, list[float], int]:
    """Like `timed`, also returning the row count, observed during the warm-up run.

    A side whose warm-up alone takes longer than `slow` seconds (the naive self-join at
    scale) is not run three more times: the warm-up's time is its figure, reported as one
    run. For a run of minutes the warm-up costs (JIT, file cache) are a few seconds."""
    n, first = observed_count(spark, sql)  # the warm-up
    if first > slow:
        return first, [first], n
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        spark.sql(sql).write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, n


def timed_rounds(
    spark,
    sqls: dict[str, str],
    runs: int = 5,
    warmups: int = 1,
    before=None,
    min_seconds: float = 0.0,
    max_runs: int = 0,
) -> dict[str, tuple[float, list[float]]]:
    """Median wall times of several sides run in interleaved rounds (`warmups` runs of each,
    then `runs` rounds of every side in turn), so that a slow spell of the machine, which on
    a shared 2-core host can stretch one run by a third, falls on every side alike instead
    of on whichever side happened to be running. `before(name)`, when given, is called
    before each run of a side (to set the side's session conf). With `min_seconds`, rounds
    go on (up to `max_runs`) until the slowest side has run that long in all: when every
    side takes under a second, tens of milliseconds from run to run decide between them,
    which three runs do not average out."""

    def run(name: str, sql: str) -> float:
        if before is not None:
            before(name)
        t0 = time.perf_counter()
        spark.sql(sql).write.format("noop").mode("overwrite").save()
        return time.perf_counter() - t0

    for _ in range(warmups):
        for name, sql in sqls.items():
            run(name, sql)
    times: dict[str, list[float]] = {name: [] for name in sqls}
    done = 0
    while done < runs or (done < max_runs and max(map(sum, times.values())) < min_seconds):
        for name, sql in sqls.items():
            times[name].append(run(name, sql))
        done += 1
    return {name: (statistics.median(ts), ts) for name, ts in times.items()}


def observed_count(spark, sql: str) -> tuple[int, float]:
    """Rows `sql` returns, counted on the way into the noop sink, and that run's time."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observed = Observation("bench_rows")
    t0 = time.perf_counter()
    spark.sql(sql).observe(observed, F.count(F.lit(1)).alias("n")).write.format("noop").mode(
        "overwrite"
    ).save()
    return observed.get["n"], time.perf_counter() - t0


def count(spark, sql: str) -> int:
    return spark.sql(f"SELECT count(*) AS n FROM ({sql})").collect()[0][0]


def count_and_metrics(spark, sql: str) -> tuple[int, dict]:
    """Row count of `sql` and the SQL metrics of its MATCH_RECOGNIZE operator(s)."""
    from spark_match_recognize import operator_metrics

    df = spark.sql(f"SELECT count(*) AS n FROM ({sql})")
    n = df.collect()[0][0]
    operators = [op for op in operator_metrics(df) if op.operator == "MatchRecognizeExec"]
    return n, ({k: str(v) for k, v in operators[0].metrics.items()} if operators else {})


def cached_parquet(spark, name: str, generate_sql: str) -> str:
    """Writes the data once (keyed by name) and returns a view over it."""
    path = DATA / name
    if not (path / "_SUCCESS").exists():
        print(f"[bench] generating {name} ...", flush=True)
        spark.sql(generate_sql).write.mode("overwrite").parquet(str(path))
    view = name.replace("-", "_")
    spark.read.parquet(str(path)).createOrReplaceTempView(view)
    return view


def report(title: str, rows: list[dict], out: str | None = None) -> None:
    print(f"\n== {title} ==")
    if rows:
        keys = list(rows[0].keys())
        widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
        print("  ".join(k.ljust(widths[k]) for k in keys))
        for r in rows:
            print("  ".join(str(r[k]).ljust(widths[k]) for k in keys))
    if out:
        Path(out).write_text(json.dumps(rows, indent=2))


def partial_matches_per_node(df) -> list[tuple[str, int, int]]:
    """The partial matches a SKIP TILL ANY MATCH plan that ran created, per tree node: one
    ``(node, created, peak)`` per node, the peak being the most a task buffered at once,
    summed over tasks. Under the join operators a node's partial matches are a join's (or
    Kleene closure's, or negation's) output rows, and the node is named by the operator's
    description."""
    from spark_match_recognize.metrics import operator_metrics

    ops = operator_metrics(df)
    nodes = []
    for op in ops:
        if op.operator != "TreeMatchExec":
            continue
        created = [k for k in op.metrics if k.startswith("created")]
        created.sort(key=lambda k: int(k[7:]))
        for key in created:
            label = op.labels[key].removeprefix("partial matches created at ")
            nodes.append((label, op.metrics[key], op.metrics[f"peak{key[7:]}"]))
    joins = ("SequenceJoinExec", "NegationExec", "KleeneExec")
    for op in ops:
        if op.operator in joins:
            name = op.node.split(",", 1)[0]
            nodes.append((name, op.metrics["numOutputRows"], op.metrics["peakBufferedRows"]))
    return nodes
