"""Memory and time of the automaton on patterns whose partial matches cannot merge.

Two queries over one partition keep a partial match alive for every start row until the
partition ends, so their state is quadratic in the rows:

* ``nomerge``: ``(A | B)* C`` where only the last row is a C and DEFINE reads ``FIRST(ts)``
  (every start row has its own first row, so no two partial matches share a state key);
* ``next_row``: ``X+`` with ``AFTER MATCH SKIP TO NEXT ROW`` (every start row matches up to
  the last row, and none is decided before it).

Each run is a fresh driver JVM (``--driver-memory``, default 1g like the tests' session);
the script prints the wall time, the heap's peak usage (the sum of the heap pools' peaks)
and the outcome (rows, or the error's first line). Usage:

    .venv/bin/python bench/matcher_memory.py --rows 20000 [--jar path/to/other.jar]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

QUERIES = {
    "nomerge": """
        SELECT * FROM (SELECT id AS ts, CASE WHEN id = {last} THEN 2 ELSE id % 2 END AS v
                       FROM range({rows}))
        MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES count(*) AS n, FIRST(ts) AS first_ts
          PATTERN ((A | B)* C)
          DEFINE A AS v = 0 AND ts >= FIRST(ts), B AS v = 1, C AS v = 2
        )""",
    "next_row": """
        SELECT count(*) AS matches, sum(n) AS mapped_rows FROM (
          SELECT * FROM (SELECT id AS ts FROM range({rows}))
          MATCH_RECOGNIZE (
            ORDER BY ts
            MEASURES count(*) AS n
            AFTER MATCH SKIP TO NEXT ROW
            PATTERN (X+)
            DEFINE X AS ts >= 0
          ))""",
}


def _child(query: str, rows: int, memory: str, conf: dict) -> None:
    sys.path.insert(0, str(ROOT / "python"))
    from pyspark.sql import SparkSession

    from spark_match_recognize import configure

    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
    )
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    jvm = spark._jvm
    pools = [
        p
        for p in jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
        if str(p.getType()) == "Heap memory"
    ]
    for p in pools:
        p.resetPeakUsage()
    sql = QUERIES[query].format(rows=rows, last=rows - 1)
    start = time.time()
    try:
        result = [tuple(r) for r in spark.sql(sql).collect()]
        outcome = f"rows {result}"
    except Exception as e:  # the outcome is what this script reports
        outcome = "error: " + str(e).strip().splitlines()[0][:300]
    elapsed = time.time() - start
    peak = sum(p.getPeakUsage().getUsed() for p in pools)
    print(
        json.dumps({"seconds": round(elapsed, 1), "peak_heap_mb": peak >> 20, "outcome": outcome})
    )
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--jar", help="the extension jar to measure (default: target/)")
    parser.add_argument("--query", choices=sorted(QUERIES), action="append")
    parser.add_argument("--conf", action="append", default=[], help="key=value")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    conf = dict(c.split("=", 1) for c in args.conf)
    if args.child:
        _child(args.child, args.rows, args.driver_memory, conf)
        return
    env = dict(os.environ)
    if args.jar:
        env["SPARK_MATCH_RECOGNIZE_JAR"] = args.jar
    for query in args.query or sorted(QUERIES):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            query,
            "--rows",
            str(args.rows),
            "--driver-memory",
            args.driver_memory,
        ] + [f"--conf={c}" for c in args.conf]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
        lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
        report = (
            lines[-1]
            if lines
            else f"no report (exit {out.returncode}): "
            + (out.stderr.strip().splitlines() or [""])[-1][:300]
        )
        print(f"{query:9} rows={args.rows} {report}", flush=True)


if __name__ == "__main__":
    main()
