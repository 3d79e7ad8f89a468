"""Benchmark of SKIP TILL ANY MATCH against the same query hand-written as self-joins.

A SEQ of four stock symbols (each about 15 events per 20-minute window) within 20 minutes,
over generated ticks (bench/stock_data.py). Three sides run one after another in one
process on the same data, each the median of 3 warm runs into the noop sink (a side
whose warm-up takes over 2 minutes is timed by that one run):
  - MATCH_RECOGNIZE ... SKIP TILL ANY MATCH   (bench/sql/seq4_match_recognize.sql)
  - a naive self-join with range conditions    (bench/sql/seq4_naive_selfjoin.sql)
  - an expert self-join on time buckets         (bench/sql/seq4_expert_selfjoin.sql)
All three must return the same row count, or the run fails.

    .venv/bin/python bench/cep_vs_selfjoin.py                  # 10M ticks (the recorded figures)
    .venv/bin/python bench/cep_vs_selfjoin.py --events 1000000 # a quick profile
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import cached_parquet, report, session, timed_count
from stock_data import events_sql, symbols_by_rate

SQL = Path(__file__).resolve().parent / "sql"
SIDES = (
    ("match_recognize (any match)", "seq4_match_recognize.sql"),
    ("naive self-join", "seq4_naive_selfjoin.sql"),
    ("expert self-join", "seq4_expert_selfjoin.sql"),
)


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
    a = p.parse_args()
    spark = session("bench-cep-selfjoin")
    ticks = cached_parquet(spark, f"ticks-v2-{a.events}-{a.seed}", events_sql(a.events, a.seed))
    symbols = symbols_by_rate(spark, a.seed, 14.0, 16.0, 4)
    print(f"[bench] symbols {symbols} (about 15 events per window each)", flush=True)
    rows, base = [], None
    for name, file in SIDES:
        if a.skip_naive and file == "seq4_naive_selfjoin.sql":
            continue
        sql = side_sql(file, ticks, symbols)
        print(f"[bench] running {name} ...", flush=True)
        t, runs, n = timed_count(spark, sql)
        base = base or t
        rows.append(
            {
                "side": name,
                "seconds": round(t, 2),
                "runs": " ".join(f"{x:.2f}" for x in runs),
                "rows": n,
                "speed-up of match_recognize": round(t / base, 1),
            }
        )
    counts = {r["rows"] for r in rows}
    report(
        f"SEQ of 4 symbols within 20 minutes, {a.events:,} ticks "
        "(median of 3 warm runs, noop sink)",
        rows,
        a.json,
    )
    if len(counts) != 1:
        raise SystemExit(f"row counts differ between sides: {[r['rows'] for r in rows]}")


if __name__ == "__main__":
    main()
