"""Benchmark of SKIP TILL ANY MATCH against the same query hand-written as self-joins.

A SEQ of four stock symbols (each about 15 events per 20-minute window) within 20 minutes,
over generated ticks (bench/stock_data.py). Three sides run in one process on the same
data into the noop sink. MATCH_RECOGNIZE and the expert self-join are warmed up twice and
then timed in interleaved rounds (median of each side), so a slow spell of the machine
falls on both; the naive self-join, minutes per run, is timed by one run of its own:
  - MATCH_RECOGNIZE ... SKIP TILL ANY MATCH   (bench/sql/seq4_match_recognize.sql)
  - a naive self-join with range conditions    (bench/sql/seq4_naive_selfjoin.sql)
  - an expert self-join on time buckets         (bench/sql/seq4_expert_selfjoin.sql)
All three must return the same row count, or the run fails.

    .venv/bin/python bench/cep_vs_selfjoin.py                  # 10M ticks (the recorded figures)
    .venv/bin/python bench/cep_vs_selfjoin.py --events 1000000 # a quick profile

`--spark-sort` adds MATCH_RECOGNIZE once more with Spark's Sort operator below its joins in
place of their own sort of each input (`spark.sql.matchRecognize.internal.ownSort=false`),
as one more side of the same rounds; `--joins` adds it under
`spark.sql.matchRecognize.cepExecution=joins` (one operator per tree node; the first side
runs the default, `auto`, which is the one pass here). `--floor` adds the work every side
must do at the least: reading the ticks and keeping the four symbols' rows, no matching
(its row count is those rows'); no side can be faster than it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import cached_parquet, observed_count, report, session, timed_count, timed_rounds
from stock_data import events_sql, symbols_by_rate

SQL = Path(__file__).resolve().parent / "sql"
SIDES = (
    ("match_recognize (any match)", "seq4_match_recognize.sql"),
    ("naive self-join", "seq4_naive_selfjoin.sql"),
    ("expert self-join", "seq4_expert_selfjoin.sql"),
)
NAIVE = "naive self-join"
SPARK_SORT = "match_recognize (Spark's sort)"
JOINS = "match_recognize (joins)"
FLOOR = "floor: scan + filter"
OWN_SORT = "spark.sql.matchRecognize.internal.ownSort"
EXECUTION = "spark.sql.matchRecognize.cepExecution"


def side_sql(file: str, ticks: str, symbols: list[str]) -> str:
    text = (SQL / file).read_text()
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    a, b, c, d = symbols
    return body.format(ticks=ticks, a=a, b=b, c=c, d=d)


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", help="write the figures to this file")
    p.add_argument(
        "--skip-naive",
        action="store_true",
        help="leave out the naive self-join (minutes at 10M ticks) for a quick comparison",
    )
    p.add_argument("--rounds", type=int, default=5, help="interleaved timed rounds")
    p.add_argument(
        "--spark-sort", action="store_true", help="also time MATCH_RECOGNIZE with Spark's sort"
    )
    p.add_argument(
        "--joins", action="store_true", help="also time MATCH_RECOGNIZE under cepExecution=joins"
    )
    p.add_argument(
        "--floor", action="store_true", help="also time reading and filtering the four symbols"
    )
    a = p.parse_args()
    spark = session("bench-cep-selfjoin")
    ticks = cached_parquet(spark, f"ticks-v2-{a.events}-{a.seed}", events_sql(a.events, a.seed))
    symbols = symbols_by_rate(spark, a.seed, 14.0, 16.0, 4)
    print(f"[bench] symbols {symbols} (about 15 events per window each)", flush=True)
    sqls = {
        name: side_sql(file, ticks, symbols)
        for name, file in SIDES
        if not (a.skip_naive and file == "seq4_naive_selfjoin.sql")
    }
    # The two fast sides alternate in rounds after warm-ups (see timed_rounds); the naive
    # self-join takes minutes per run and is timed (and counted) by one run of its own.
    fast = {name: sql for name, sql in sqls.items() if name != NAIVE}
    if a.spark_sort:
        sqls[SPARK_SORT] = fast[SPARK_SORT] = sqls[SIDES[0][0]]
    if a.joins:
        sqls[JOINS] = fast[JOINS] = sqls[SIDES[0][0]]
    if a.floor:
        wanted = ", ".join(f"'{s}'" for s in symbols)
        sqls[FLOOR] = fast[FLOOR] = f"SELECT * FROM {ticks} WHERE sym IN ({wanted})"

    def before(name: str) -> None:
        spark.conf.set(OWN_SORT, "false" if name == SPARK_SORT else "true")
        spark.conf.set(EXECUTION, "joins" if name in (JOINS, SPARK_SORT) else "auto")

    counts = {}
    for name, sql in fast.items():
        print(f"[bench] counting the rows of {name} ...", flush=True)
        before(name)
        counts[name], _ = observed_count(spark, sql)
    print(f"[bench] timing {', '.join(fast)} in {a.rounds} interleaved rounds ...", flush=True)
    timings = timed_rounds(spark, fast, runs=a.rounds, warmups=2, before=before)
    spark.conf.unset(OWN_SORT)
    spark.conf.unset(EXECUTION)
    if NAIVE in sqls:
        print(f"[bench] running {NAIVE} ...", flush=True)
        t, runs, counts[NAIVE] = timed_count(spark, sqls[NAIVE])
        timings[NAIVE] = (t, runs)
    base = timings[SIDES[0][0]][0]
    rows = [
        {
            "side": name,
            "seconds": round(timings[name][0], 2),
            "runs": " ".join(f"{x:.2f}" for x in timings[name][1]),
            "rows": counts[name],
            "speed-up of match_recognize": round(timings[name][0] / base, 2),
        }
        for name in sqls
    ]
    report(
        f"SEQ of 4 symbols within 20 minutes, {a.events:,} ticks "
        "(median of interleaved warm runs, noop sink)",
        rows,
        a.json,
    )
    if (
        len({n: c for n, c in counts.items() if n != FLOOR}.values())
        and len({c for n, c in counts.items() if n != FLOOR}) != 1
    ):
        raise SystemExit(f"row counts differ between sides: {counts}")


if __name__ == "__main__":
    main()
