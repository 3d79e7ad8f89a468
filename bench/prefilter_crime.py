"""Benchmark of the join prefilter for standard MATCH_RECOGNIZE: prefilter vs automaton alone.

Selective "crime report" style data (seeded): reports in 500 areas, about 100 per area in
any 30 minutes, one of 40 category codes each, whose frequencies fall off geometrically
(code 0 is 30% of the rows, code 20 one in 4,000, code 30 one in 200,000). Template patterns in the
shape of Zhu et al.'s (VLDB 2023) — `A B+ C`, `A B+ C D+ E`, `A B+ C D+ E F+`, gaps,
alternatives — over category codes within 30 minutes, partitioned by area; each template is
instantiated with seeded draws of codes (rare ones for the single-row variables, common ones
for the `+` variables).

Each query runs twice side by side in one process on the same data, the median of 3 warm
runs into the noop sink: `spark.sql.matchRecognize.prefilter=off` (the automaton over every
row) and `auto` (EXPLAIN's decision is printed); both must return the same row count.
`--spark-sort` adds a third side: the automaton alone with Spark's Sort operator instead of
its own partition-and-time sort (`spark.sql.matchRecognize.internal.ownSort=false`).

    .venv/bin/python bench/prefilter_crime.py              # 20M reports (recorded figures)
    .venv/bin/python bench/prefilter_crime.py --quick      # 2M reports
"""

from __future__ import annotations

import argparse
import random
import statistics

from common import cached_parquet, report, session, timed_count

CODES = 40
OWN_SORT = "spark.sql.matchRecognize.internal.ownSort"
TEMPLATES = [
    ("A B+ C", "A B+ C"),
    ("A B+ C D+ E", "A B+ C D+ E"),
    ("A B+ C D+ E F+", "A B+ C D+ E F+"),
    ("A B C (contiguous)", "A B C"),
    ("A N* B N* C (gaps)", "A N* B N* C"),
    ("(A | B) C+ D", "(A | B) C+ D"),
]


def data_sql(rows: int, seed: int) -> str:
    # Category k has weight 0.7^k: code 0 about 30% of rows, code 39 about 2 in 10^7. The
    # span keeps about 100 reports per area in 30 minutes at every scale.
    span_us = rows // 500 * 18 * 1_000_000
    return f"""
        SELECT CAST(pmod(hash({seed}, id, 1), 500) AS INT) AS area,
               TIMESTAMP '2026-01-01 00:00:00'
                 + make_dt_interval(0, 0, 0, CAST(pmod(xxhash64({seed}, id, 2), {span_us})
                                                  / 1000000.0 AS DECIMAL(18, 6))) AS ts,
               CAST(floor(ln(1 - (pmod(hash({seed}, id, 3), 1000000007) + 0.5) / 1000000007.0)
                          / ln(0.7)) AS INT) % {CODES} AS code,
               pmod(hash({seed}, id, 4), 1000) AS severity
        FROM range({rows})"""


def query(view: str, body: str, rng: random.Random) -> str:
    variables = sorted({c for c in body if c.isalpha() and c.isupper() and c != "N"})
    rare = rng.sample(range(12, 22), len(variables))
    common = rng.sample(range(0, 6), len(variables))
    defines = []
    for v, r, c in zip(variables, rare, common, strict=True):
        quantified = f"{v}+" in body
        defines.append(f"{v} AS code = {c if quantified else r}")
    if "N*" in body:
        defines.append("N AS TRUE")
    return f"""
        SELECT * FROM {view} MATCH_RECOGNIZE (
          PARTITION BY area ORDER BY ts
          MEASURES FIRST(ts) AS first_ts, LAST(ts) AS last_ts, count(*) AS n
          ONE ROW PER MATCH
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN ({body})
          WITHIN INTERVAL '30' MINUTE
          DEFINE {", ".join(defines)}
        )"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20_000_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--per-template", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="2M rows, one query per template")
    ap.add_argument("--json")
    ap.add_argument(
        "--spark-sort", action="store_true", help="also time the automaton alone with Spark's sort"
    )
    a = ap.parse_args()
    if a.quick:
        a.rows, a.per_template = 2_000_000, 1
    spark = session("prefilter-crime")
    view = cached_parquet(spark, f"crime-{a.rows}-{a.seed}", data_sql(a.rows, a.seed))
    rows, ratios = [], []
    for name, body in TEMPLATES:
        for i in range(a.per_template):
            sql = query(view, body, random.Random(f"{a.seed}/{name}/{i}"))
            spark.conf.set("spark.sql.matchRecognize.prefilter", "auto")
            plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan().toString()
            decision = plan.split("prefilter: ", 1)[1].split(", measures", 1)[0].split("\n")[0]
            t_on, _, n_on = timed_count(spark, sql, a.runs)
            spark.conf.set("spark.sql.matchRecognize.prefilter", "off")
            t_off, _, n_off = timed_count(spark, sql, a.runs)
            extra = {}
            if a.spark_sort:
                spark.conf.set(OWN_SORT, "false")
                t_spark, _, n_spark = timed_count(spark, sql, a.runs)
                spark.conf.unset(OWN_SORT)
                if n_spark != n_off:
                    raise SystemExit(f"{name}: {n_spark} rows with Spark's sort, {n_off} without")
                extra = {
                    "automaton_spark_sort_s": round(t_spark, 2),
                    "speedup_vs_spark_sort": round(t_spark / t_on, 2),
                }
            spark.conf.unset("spark.sql.matchRecognize.prefilter")
            if n_on != n_off:
                raise SystemExit(f"{name}: {n_on} rows with the prefilter, {n_off} without")
            ratios.append(t_off / t_on)
            rows.append(
                {
                    "template": name,
                    "query": i,
                    "matches": n_on,
                    "automaton_s": round(t_off, 2),
                    **extra,
                    "prefilter_s": round(t_on, 2),
                    "speedup": round(t_off / t_on, 2),
                    "decision": decision[:70],
                }
            )
            print(
                f"[prefilter] {name} #{i}: {n_on} matches, {t_off:.2f} s -> {t_on:.2f} s",
                flush=True,
            )
    report(
        f"prefilter vs automaton alone, {a.rows:,} reports, median of {a.runs} warm runs",
        rows,
        a.json,
    )
    print(
        f"\nmedian speed-up {statistics.median(ratios):.2f}x over {len(ratios)} queries "
        "(target >= 5x)"
    )


if __name__ == "__main__":
    main()
