"""Fixed costs of SKIP TILL ANY MATCH on small and cached inputs.

A four-variable sequence over a small minute-tick stream (the size of OpenCEP's NASDAQ
sample: 1,652 events of a few symbols), with PARTITION BY and keyless, run side by side in
one process:
  - the number of tasks chosen from the input's size, against the former fixed
    `spark.sql.shuffle.partitions` (forced with `spark.sql.matchRecognize.targetRowsPerTask=0`);
  - the same queries over the input cached with `df.cache()`, against the uncached input,
    with the shared shuffle kept over the cached input and (former behaviour, forced with
    `spark.sql.matchRecognize.internal.shareCachedInput=false`) without.
Every query is run with adaptive execution on (Spark's default) and off. Each figure is
the median of interleaved warm runs into the noop sink; the jobs, stages and tasks of one
more run are counted with the status tracker, and the shuffles of its executed plan read
from the plan (a reused exchange is counted apart). Both sides' row counts must agree.

    .venv/bin/python bench/small_inputs.py                 # 1,652 events, 200 partitions
    .venv/bin/python bench/small_inputs.py --events 20000  # a larger input
"""

from __future__ import annotations

import argparse
import re
import uuid

from common import DATA, report, session, timed_rounds

SYMBOLS = ("AAPL", "AMZN", "AVID", "GOOG", "MSFT", "ORCL")
START = 1767225600  # 2026-01-01T00:00:00Z

# The former behaviour: spark.sql.shuffle.partitions tasks whatever the input's size, and
# (under adaptive execution) a cached input shuffled once per leaf.
FORCED_OLD = {
    "spark.sql.matchRecognize.targetRowsPerTask": "0",
    "spark.sql.matchRecognize.internal.shareCachedInput": "false",
}

PARTITIONED = """
SELECT * FROM {ticks} MATCH_RECOGNIZE (
  PARTITION BY sym ORDER BY ts
  MEASURES A.ts AS a_ts, D.ts AS d_ts, D.peak - A.peak AS gain
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C D)
  WITHIN INTERVAL '10' MINUTE
  DEFINE B AS B.peak > A.peak, C AS C.peak > B.peak, D AS D.peak > C.peak + 1
)"""

KEYLESS = """
SELECT * FROM {ticks} MATCH_RECOGNIZE (
  ORDER BY ts
  MEASURES A.ts AS a_ts, D.ts AS d_ts, D.peak - A.peak AS gain
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C D)
  WITHIN INTERVAL '5' MINUTE
  DEFINE A AS sym = 'AAPL', B AS sym = 'AMZN' AND B.peak > A.peak,
         C AS sym = 'AVID', D AS sym = 'GOOG' AND D.peak > C.peak
)"""


def ticks_sql(events: int) -> str:
    """`events` minute ticks spread over the symbols, each with a random-walk-like price."""
    n = len(SYMBOLS)
    names = ", ".join(f"'{s}'" for s in SYMBOLS)
    return f"""
        SELECT element_at(array({names}), CAST(id % {n} AS INT) + 1) AS sym,
               TIMESTAMP_SECONDS({START} + (id DIV {n}) * 60) AS ts,
               CAST(100 + pmod(hash(id, 1), 2000) / 100.0 AS DOUBLE) AS peak
        FROM range({events})"""


def shuffles(plan: str) -> tuple[int, int]:
    """Shuffle exchanges executed and reused in an executed plan's text (the final plan
    of an adaptive one)."""
    plan = plan.split("== Initial Plan ==")[0]
    executed = len(re.findall(r"^\s*[:+\- ]*Exchange hashpartitioning", plan, re.M))
    reused = len(re.findall(r"ReusedExchange", plan))
    return executed, reused


def profile(spark, sql: str) -> dict:
    """Jobs, stages and tasks of one run, and the shuffles of its executed plan."""
    sc = spark.sparkContext
    group = f"smr-small-{uuid.uuid4().hex}"
    sc.setJobGroup(group, "small inputs")
    df = spark.sql(sql)
    n = len(df.collect())
    sc.setJobGroup(None, None)
    tracker = sc.statusTracker()
    stages = tasks = 0
    jobs = tracker.getJobIdsForGroup(group)
    for j in jobs:
        info = tracker.getJobInfo(j)
        for s in info.stageIds if info else []:
            st = tracker.getStageInfo(s)
            if st is not None and st.numTasks > 0 and st.numCompletedTasks > 0:
                stages += 1
                tasks += st.numCompletedTasks
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    executed, reused = shuffles(plan)
    return {
        "rows": n,
        "jobs": len(jobs),
        "stages": stages,
        "tasks": tasks,
        "shuffles": executed,
        "reused": reused,
    }


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=1652)
    p.add_argument("--partitions", type=int, default=200, help="spark.sql.shuffle.partitions")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", help="write the figures to this file")
    args = p.parse_args()

    spark = session(
        "small_inputs",
        driver_memory="2g",
        extra={"spark.sql.shuffle.partitions": str(args.partitions)},
    )
    path = str(DATA / f"small-ticks-{args.events}")
    spark.sql(ticks_sql(args.events)).coalesce(1).write.mode("overwrite").parquet(path)
    spark.read.parquet(path).createOrReplaceTempView("ticks")
    # A plan of its own: Spark would serve every query over the same plan from the cache.
    cached = spark.read.parquet(path).where("ts IS NOT NULL").cache()
    cached.count()
    cached.createOrReplaceTempView("ticks_cached")

    rows = []
    for adaptive in ("true", "false"):
        spark.conf.set("spark.sql.adaptive.enabled", adaptive)
        for shape, template in (("partitioned", PARTITIONED), ("keyless", KEYLESS)):
            sides = {
                "old": (template.format(ticks="ticks"), FORCED_OLD),
                "new": (template.format(ticks="ticks"), {}),
                "cached, old": (template.format(ticks="ticks_cached"), FORCED_OLD),
                "cached, new": (template.format(ticks="ticks_cached"), {}),
            }

            def before(name: str, sides=sides) -> None:
                for k in FORCED_OLD:
                    spark.conf.unset(k)
                for k, v in sides[name][1].items():
                    spark.conf.set(k, v)

            stats = {}
            for name, (sql, _) in sides.items():
                before(name)
                stats[name] = profile(spark, sql)
            counts = {s["rows"] for s in stats.values()}
            if len(counts) != 1:
                raise SystemExit(f"row counts differ for {shape}: {stats}")
            times = timed_rounds(
                spark, {k: v[0] for k, v in sides.items()}, runs=args.rounds, before=before
            )
            for name in sides:
                rows.append(
                    {
                        "aqe": adaptive,
                        "shape": shape,
                        "side": name,
                        "seconds": round(times[name][0], 3),
                        **stats[name],
                    }
                )
            for label, a, b in (
                ("old / new", "old", "new"),
                ("cached: old / new", "cached, old", "cached, new"),
                ("cached / uncached, old", "cached, old", "old"),
                ("cached / uncached, new", "cached, new", "new"),
            ):
                rows.append(
                    {
                        "aqe": adaptive,
                        "shape": shape,
                        "side": label,
                        "seconds": f"{times[a][0] / times[b][0]:.2f}x",
                        "rows": "",
                        "jobs": "",
                        "stages": "",
                        "tasks": "",
                        "shuffles": "",
                        "reused": "",
                    }
                )
            for k in FORCED_OLD:
                spark.conf.unset(k)
    report(
        f"{args.events} events, spark.sql.shuffle.partitions={args.partitions}, local[2]",
        rows,
        args.json,
    )
    spark.stop()


if __name__ == "__main__":
    main()
