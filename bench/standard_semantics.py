"""Benchmark of standard-semantics MATCH_RECOGNIZE against the floor.

The floor is the same shuffle and sort with trivial per-row work:
    SELECT sum(lag_x) FROM (SELECT LAG(x) OVER (PARTITION BY k ORDER BY ts) AS lag_x FROM data)
Each pattern query runs side by side with it on the same generated data, in one process,
in interleaved rounds (floor, then each query, five times; the median of each side).

    .venv/bin/python bench/standard_semantics.py                 # 10M rows (the recorded figures)
    .venv/bin/python bench/standard_semantics.py --rows 1000000  # a quick profile
    .venv/bin/python bench/standard_semantics.py --growth        # 1x vs 10x the time span
    .venv/bin/python bench/standard_semantics.py --big           # one 50M-row partition, 2 GB

`--spark-sort` adds each pattern query once more with Spark's Sort operator in place of the
automaton's own sort (`spark.sql.matchRecognize.internal.ownSort=false`), as extra sides of
the same rounds.
"""

from __future__ import annotations

import argparse
import math

from common import cached_parquet, count, count_and_metrics, report, session, timed, timed_rounds


def generate_sql(rows: int, partitions: int) -> str:
    # k: partition key; ts: a timestamp per row of a partition; x: a deterministic wavy
    # price with noise (plenty of V shapes); cat: a selective category code.
    return f"""
        SELECT CAST(id % {partitions} AS INT) AS k,
               TIMESTAMP_SECONDS(1767225600 + CAST(id DIV {partitions} AS BIGINT) * 60) AS ts,
               CAST(100 + 10 * sin(id * 0.37) + 3 * cos(id * 1.91) + (hash(id) % 5) AS DOUBLE) AS x,
               CAST(pmod(hash(id, 7), 100) AS INT) AS cat
        FROM range({rows})"""


def queries(view: str) -> dict[str, str]:
    return {
        "floor": "SELECT sum(lag_x) AS s FROM "
        f"(SELECT LAG(x) OVER (PARTITION BY k ORDER BY ts) AS lag_x FROM {view})",
        "v_shape": f"""SELECT * FROM {view} MATCH_RECOGNIZE (
              PARTITION BY k ORDER BY ts
              MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts,
                       LAST(UP.ts) AS end_ts, count(*) AS n
              ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
              PATTERN (STRT DOWN+ UP+)
              DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x))""",
        "selective_seq": f"""SELECT * FROM {view} MATCH_RECOGNIZE (
              PARTITION BY k ORDER BY ts
              MEASURES A.ts AS a_ts, C.ts AS c_ts
              ONE ROW PER MATCH
              PATTERN (A B* C)
              DEFINE A AS cat = 1, B AS cat <> 2, C AS cat = 2 AND x > A.x)""",
        "all_rows": f"""SELECT * FROM {view} MATCH_RECOGNIZE (
              PARTITION BY k ORDER BY ts
              MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS mno, RUNNING count(*) AS n
              ALL ROWS PER MATCH
              PATTERN (UP{{2,}} DOWN)
              DEFINE UP AS x > PREV(x), DOWN AS x < PREV(x))""",
    }


PATTERNS = ("v_shape", "selective_seq", "all_rows")


OWN_SORT = "spark.sql.matchRecognize.internal.ownSort"
SPARK_SORT = " (Spark's sort)"


def run_suite(
    spark, rows: int, partitions: int, label: str, names=PATTERNS, spark_sort: bool = False
) -> list[dict]:
    view = cached_parquet(spark, f"std-{rows}-{partitions}", generate_sql(rows, partitions))
    qs = queries(view)
    sides = {q: qs[q] for q in ("floor", *names)}
    if spark_sort:
        sides.update({q + SPARK_SORT: qs[q] for q in names})

    def before(name: str) -> None:
        spark.conf.set(OWN_SORT, "false" if name.endswith(SPARK_SORT) else "true")

    timings = timed_rounds(spark, sides, before=before)
    spark.conf.unset(OWN_SORT)
    floor = timings["floor"][0]
    results = [
        {
            "data": label,
            "query": "floor (LAG)",
            "seconds": round(floor, 2),
            "runs": " ".join(f"{x:.1f}" for x in timings["floor"][1]),
            "ratio": 1.0,
            "out rows": 1,
            "peak live (sum over tasks)": "-",
            "peak buffered (sum over tasks)": "-",
        }
    ]
    for name in names:
        t = timings[name][0]
        n, metrics = count_and_metrics(spark, qs[name])
        results.append(
            {
                "data": label,
                "query": name,
                "seconds": round(t, 2),
                "runs": " ".join(f"{x:.1f}" for x in timings[name][1]),
                "ratio": round(t / floor, 2),
                "out rows": n,
                "peak live (sum over tasks)": metrics.get("peakLivePartialMatches", "?"),
                "peak buffered (sum over tasks)": metrics.get("peakBufferedRows", "?"),
            }
        )
    ratios = [r["ratio"] for r in results[1:]]
    for name in names if spark_sort else ():
        t = timings[name + SPARK_SORT][0]
        results.append(
            {
                "data": label,
                "query": name + SPARK_SORT,
                "seconds": round(t, 2),
                "runs": " ".join(f"{x:.1f}" for x in timings[name + SPARK_SORT][1]),
                "ratio": round(t / floor, 2),
                "out rows": "-",
                "peak live (sum over tasks)": "-",
                "peak buffered (sum over tasks)": "-",
            }
        )
    results.append(
        {
            "data": label,
            "query": "geometric mean",
            "seconds": "-",
            "runs": "-",
            "ratio": round(math.prod(ratios) ** (1 / len(ratios)), 2),
            "out rows": "-",
            "peak live (sum over tasks)": "-",
            "peak buffered (sum over tasks)": "-",
        }
    )
    return results


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--growth", action="store_true", help="1x vs 10x the time span, same density")
    p.add_argument("--big", action="store_true", help="V shape over one 50M-row partition, 2 GB")
    p.add_argument("--json", help="write the figures to this file")
    p.add_argument(
        "--only",
        nargs="*",
        choices=PATTERNS,
        default=list(PATTERNS),
        help="pattern queries to run (default: all)",
    )
    p.add_argument(
        "--spark-sort", action="store_true", help="also time each query with Spark's sort"
    )
    p.add_argument(
        "--partitions",
        nargs="*",
        type=int,
        default=[1000, 1],
        help="partition counts to run (default: 1000 1)",
    )
    a = p.parse_args()
    if a.big:
        spark = session("bench-big", driver_memory="2g")
        rows = 50_000_000
        view = cached_parquet(spark, f"std-{rows}-1", generate_sql(rows, 1))
        t, _ = timed(spark, queries(view)["v_shape"], runs=1)
        report(
            "V shape over one 50M-row partition, 2 GB driver/executor",
            [
                {
                    "rows": rows,
                    "seconds": round(t, 1),
                    "matches": count(spark, queries(view)["v_shape"]),
                }
            ],
            a.json,
        )
        return
    spark = session("bench-standard")
    if a.growth:
        small = a.rows // 10
        r1 = run_suite(spark, small, 1000, f"{small:,} rows (1x span)")
        r10 = run_suite(spark, a.rows, 1000, f"{a.rows:,} rows (10x span)")
        rows = []
        for x, y in zip(r1, r10, strict=True):
            if x["seconds"] == "-":
                continue
            rows.append(
                {
                    "query": x["query"],
                    "1x s": x["seconds"],
                    "10x s": y["seconds"],
                    "growth": round(y["seconds"] / x["seconds"], 2),
                }
            )
        report("Growth: 10x the time span at the same density", rows, a.json)
        return
    results = []
    for n in a.partitions:
        results += run_suite(
            spark, a.rows, n, f"{a.rows:,} rows / {n} partition(s)", a.only, a.spark_sort
        )
    report(
        "Standard semantics vs the floor (median of 5 interleaved rounds, noop sink)",
        results,
        a.json,
    )


if __name__ == "__main__":
    main()
