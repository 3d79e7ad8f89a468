"""The hardest published MATCH_RECOGNIZE query: Zhu, Huang and Chaudhuri's crime pattern
(PVLDB 2023), as DuckDB's benchmark runs it, over generated data shaped like Chicago's
crime reports, with and without ending partial matches at the DEFINE bound on the time.

    PATTERN (R Z* B Z* M), no PARTITION BY, AFTER MATCH SKIP TO NEXT ROW,
    R a robbery, B a battery and M a motor vehicle theft near R, M within 30 minutes of R
    (a condition in M's DEFINE, not WITHIN), Z any report.

Every robbery starts an attempt that the greedy `Z*` keeps alive; only M's condition bounds
it. With the bound used (the default), an attempt ends once the reports are more than 30
minutes past its robbery; without it (`spark.sql.matchRecognize.internal.deadlines=false`),
every attempt runs to the end of the input, and the work grows with the square of the rows
(that side runs with `spark.sql.matchRecognize.maxStepsPerRow=0`: the default limit on the
work per row would stop it past about 85,000 reports).

Data (seeded, written once under bench/data/): one report every 96 seconds on average (7.2M
reports over 22 years, Chicago's density), primary types at about the shares of the city's
published 2001-2023 data (theft 21%, battery 18%, ..., motor vehicle theft 4.7%, robbery
3.7%), coordinates in the city's box, two thirds of them around 25 hot spots. A size of N
reports is the first N in time.

    .venv/bin/python bench/crime_query.py                       # 4k to 7.2M reports
    .venv/bin/python bench/crime_query.py --sizes 4000,20000 --without-up-to 20000   # quick
"""

from __future__ import annotations

import argparse
import threading
import time

from common import cached_parquet, observed_count, report, session, timed_count

DEADLINES = "spark.sql.matchRecognize.internal.deadlines"
STEPS = "spark.sql.matchRecognize.maxStepsPerRow"
FULL = 7_200_000

# Approximate shares (percent) of Chicago's primary types, the rest pooled as OTHER.
TYPES = [
    ("THEFT", 21.0),
    ("BATTERY", 18.3),
    ("CRIMINAL DAMAGE", 11.4),
    ("NARCOTICS", 9.5),
    ("ASSAULT", 6.5),
    ("OTHER OFFENSE", 6.2),
    ("BURGLARY", 5.4),
    ("MOTOR VEHICLE THEFT", 4.7),
    ("DECEPTIVE PRACTICE", 4.2),
    ("ROBBERY", 3.7),
    ("CRIMINAL TRESPASS", 2.7),
    ("WEAPONS VIOLATION", 1.3),
    ("OTHER", 5.1),
]

QUERY = """
SELECT * FROM {view} MATCH_RECOGNIZE (
  ORDER BY datetime
  MEASURES R.id AS rid, B.id AS bid, M.id AS mid
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (R Z* B Z* M)
  DEFINE
    R AS R.primary_type = 'ROBBERY',
    B AS B.primary_type = 'BATTERY'
         AND B.lon BETWEEN R.lon - 0.05 AND R.lon + 0.05
         AND B.lat BETWEEN R.lat - 0.02 AND R.lat + 0.02,
    M AS M.primary_type = 'MOTOR VEHICLE THEFT'
         AND M.lon BETWEEN R.lon - 0.05 AND R.lon + 0.05
         AND M.lat BETWEEN R.lat - 0.02 AND R.lat + 0.02
         AND M.datetime - R.datetime <= INTERVAL '30' MINUTE
)"""


def data_sql(rows: int, seed: int) -> str:
    def uniform(k: int) -> str:
        return f"(pmod(xxhash64({seed}, id, {k}), 1000000007) + 0.5) / 1000000007.0"

    cases, total = [], 0.0
    for name, share in TYPES[:-1]:
        total += share / 100
        cases.append(f"WHEN {uniform(1)} < {total:.4f} THEN '{name}'")
    primary_type = f"CASE {' '.join(cases)} ELSE '{TYPES[-1][0]}' END"
    # A normal draw (Box-Muller) around one of 25 hot spots for two reports in three.
    normal = f"sqrt(-2 * ln({uniform(4)})) * cos(2 * pi() * {uniform(5)})"
    normal2 = f"sqrt(-2 * ln({uniform(4)})) * sin(2 * pi() * {uniform(5)})"
    spot = f"pmod(xxhash64({seed}, id, 6), 25)"
    spot_lat = f"41.66 + 0.34 * pmod(xxhash64({seed}, {spot}, 7), 1000) / 1000.0"
    spot_lon = f"-87.90 + 0.34 * pmod(xxhash64({seed}, {spot}, 8), 1000) / 1000.0"
    hot = f"{uniform(3)} < 0.67"
    return f"""
        SELECT id,
               TIMESTAMP '2001-01-01 00:00:00'
                 + make_dt_interval(0, 0, 0, CAST(id * 96 + 96 * {uniform(2)} AS DECIMAL(18, 6)))
                 AS datetime,
               {primary_type} AS primary_type,
               CASE WHEN {hot} THEN {spot_lat} + 0.02 * {normal}
                    ELSE 41.64 + 0.38 * {uniform(9)} END AS lat,
               CASE WHEN {hot} THEN {spot_lon} + 0.03 * {normal2}
                    ELSE -87.94 + 0.42 * {uniform(10)} END AS lon
        FROM range({rows})"""


def run_with_timeout(spark, sql: str, timeout: float) -> tuple[float | None, int | None]:
    """One run into the noop sink (as `timed_count` runs the other side), cancelled after
    `timeout` seconds: (seconds, rows), or (None, None) when cancelled."""
    sc = spark.sparkContext
    group = f"crime-{time.monotonic_ns()}"
    sc.setJobGroup(group, "crime query without bounds", interruptOnCancel=True)
    timer = threading.Timer(timeout, lambda: sc.cancelJobGroup(group))
    timer.start()
    try:
        n, seconds = observed_count(spark, sql)
        return seconds, n
    except Exception as e:  # noqa: BLE001 - a cancelled job raises whatever Py4J wraps
        if "cancel" in str(e).lower():
            return None, None
        raise
    finally:
        timer.cancel()
        sc.setLocalProperty("spark.jobGroup.id", None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4000,20000,100000,1000000,7200000")
    ap.add_argument(
        "--without-up-to",
        type=int,
        default=100_000,
        help="run the side without bounds up to this many reports",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds after which the side without bounds is cancelled",
    )
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    spark = session("crime-query", driver_memory="8g")
    full = cached_parquet(spark, f"crime-chicago-{FULL}-{a.seed}", data_sql(FULL, a.seed))
    rows = []
    for size in (int(s) for s in a.sizes.split(",")):
        view = f"crime_{size}"
        spark.sql(f"SELECT * FROM {full} WHERE id < {size}").createOrReplaceTempView(view)
        sql = QUERY.format(view=view)
        runs = 3 if size <= 1_000_000 else 1
        t_on, _, n_on = timed_count(spark, sql, runs)
        row = {"reports": size, "matches": n_on, "with_bound_s": round(t_on, 2)}
        if size <= a.without_up_to:
            # Its work per row grows with the rows: past about 85,000 reports it would
            # stop at the default limit on matching steps, which is lifted for it.
            spark.conf.set(DEADLINES, "false")
            spark.conf.set(STEPS, "0")
            try:
                t_off, n_off = run_with_timeout(spark, sql, a.timeout)
            finally:
                spark.conf.unset(DEADLINES)
                spark.conf.unset(STEPS)
            if n_off is not None and n_off != n_on:
                raise SystemExit(f"{size} reports: {n_on} matches with the bound, {n_off} without")
            row["without_bound_s"] = round(t_off, 2) if t_off else f"> {a.timeout:.0f}"
            row["speedup"] = round(t_off / t_on, 1) if t_off else f"> {a.timeout / t_on:.0f}"
        else:
            row["without_bound_s"] = "not run"
            row["speedup"] = ""
        print(f"[crime] {row}", flush=True)
        rows.append(row)
    report("crime query (Zhu et al.), with and without its bound used", rows, a.json)


if __name__ == "__main__":
    main()
