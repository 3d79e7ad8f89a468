"""Counting SKIP TILL ANY MATCH matches without building them, against building them.

Generated events (KEYS partition keys, one event per key and second, kinds a/b/c/x drawn
from a hash) and three counts per key, each run side by side in one process on the same
data into the noop sink (median of interleaved rounds), with the counts checked equal:

  - `A B` WITHIN 300 s (`--window`): counted (countWithoutMatches = true), built (= false),
    and a hand-written window aggregation (for each b row, the a rows of the window before
    it: a RANGE frame), which exists for two variables only;
  - `A B C` likewise: counted and built, grouped by key, and by key and minute of the
    match's first row (a count per first row), with the sum, maximum and earliest time of
    the last row's amount beside the count (aggregated with the counts), and with rising
    amounts (`B.amount > A.amount`, `C.amount > B.amount`: counts kept per amount);
  - `A B+ C` WITHIN 60 s (`--kleene-window`), whose matches number in the billions per
    key: counted (with and without the sum and maximum of C's amount, and with C's amount
    above A's: a condition on the first row, asked of each open first row), and built,
    which stops at the guard on Kleene bindings (the error is printed, not a time).

    .venv/bin/python bench/count_matches.py                  # 400,000 events
    .venv/bin/python bench/count_matches.py --events 100000  # a quick profile
"""

from __future__ import annotations

import argparse

from common import cached_parquet, session, timed_rounds

KEYS = 8
COUNT = "spark.sql.matchRecognize.countWithoutMatches"


def events_sql(n: int) -> str:
    # kind from a hash: a 10 %, b 30 %, c 5 %, x the rest; one event per key and second.
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts, kind, amount FROM (
          SELECT id % {KEYS} AS k, id DIV {KEYS} AS t,
                 CASE WHEN h < 1000 THEN 'a' WHEN h < 4000 THEN 'b'
                      WHEN h < 4500 THEN 'c' ELSE 'x' END AS kind,
                 pmod(hash(id, 7), 1000) AS amount
          FROM (SELECT id, pmod(hash(id, 5), 10000) AS h FROM range({n})))"""


LAST_ROW = "sum(c_amount) AS total, max(c_amount) AS largest, min(c_ts) AS earliest"


RISING = {"B": "B.amount > A.amount", "C": "C.amount > B.amount"}


def count_query(
    events: str,
    pattern: str,
    window: int,
    by_minute: bool = False,
    aggregates: str = "",
    related: dict[str, str] | None = None,
) -> str:
    define = ", ".join(
        f"{v} AS kind = '{v.lower()}'" + (f" AND {related[v]}" if related and v in related else "")
        for v in "ABC"
        if v in pattern
    )
    group = "k, date_trunc('MINUTE', a_ts)" if by_minute else "k"
    measures = "A.ts AS a_ts" + (", C.amount AS c_amount, C.ts AS c_ts" if aggregates else "")
    extra = f", {aggregates}" if aggregates else ""
    return f"""
        SELECT {group}, count(*) AS n{extra} FROM {events} MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES {measures}
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          WITHIN INTERVAL '{window}' SECOND
          DEFINE {define}
        ) GROUP BY {group}"""


def window_query(events: str, window: int) -> str:
    # Pairs (a, b) with the a row at most `window` s before the b row: for each b row, the a rows
    # of its RANGE frame (one event per key and second, so no a row shares a b row's time).
    return f"""
        SELECT k, sum(a_before) AS n FROM (
          SELECT k, kind, count_if(kind = 'a') OVER (PARTITION BY k ORDER BY ts
              RANGE BETWEEN INTERVAL '{window}' SECOND PRECEDING AND CURRENT ROW) AS a_before
          FROM {events}) WHERE kind = 'b' AND a_before > 0 GROUP BY k"""


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=400_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--window", type=int, default=300, help="WITHIN, in seconds")
    p.add_argument(
        "--kleene-window",
        type=int,
        default=60,
        help="WITHIN of A B+ C (past about 150 s its counts exceed BIGINT)",
    )
    args = p.parse_args()
    spark = session("count_matches")
    events = cached_parquet(spark, f"counted_amounts_{args.events}", events_sql(args.events))
    print(f"{args.events:,} events, {KEYS} keys, WITHIN {args.window} s")

    def rows(sql: str, counted: bool) -> list[tuple]:
        spark.conf.set(COUNT, str(counted).lower())
        return sorted(tuple(r) for r in spark.sql(sql).collect())

    for pattern, with_window, by_minute, aggregates, related in (
        ("A B", True, False, "", None),
        ("A B C", False, False, "", None),
        ("A B C", False, True, "", None),
        ("A B C", False, False, LAST_ROW, None),
        ("A B C", False, False, "", RISING),
    ):
        sql = count_query(events, pattern, args.window, by_minute, aggregates, related)
        sides = {"counted": (sql, True), "built": (sql, False)}
        if with_window:
            sides["window aggregation"] = (window_query(events, args.window), True)
        results = {name: rows(q, c) for name, (q, c) in sides.items()}
        assert len({tuple(r) for r in results.values()}) == 1, results
        total = sum(r[-4 if aggregates else -1] for r in results["counted"])
        times = timed_rounds(
            spark,
            {name: q for name, (q, _) in sides.items()},
            runs=args.runs,
            before=lambda name, s=sides: spark.conf.set(COUNT, str(s[name][1]).lower()),
        )
        grouping = ", per key and minute of the first row" if by_minute else ""
        grouping += f", with {aggregates}" if aggregates else ""
        grouping += f", where {' and '.join(related.values())}" if related else ""
        print(f"\nPATTERN ({pattern}): {total:,} matches{grouping}")
        for name, (t, _) in times.items():
            print(f"    {name:20s} {t:8.2f} s   {args.events / t:12,.0f} events/s")
        built = times["built"][0]
        print(f"    built / counted: {built / times['counted'][0]:.2f}x")
        if with_window:
            print(
                f"    window aggregation / counted: "
                f"{times['window aggregation'][0] / times['counted'][0]:.2f}x"
            )

    sql = count_query(events, "A B+ C", args.kleene_window)
    with_values = count_query(events, "A B+ C", args.kleene_window, aggregates=LAST_ROW)
    above_first = count_query(
        events, "A B+ C", args.kleene_window, related={"C": "C.amount > A.amount"}
    )
    counted = rows(sql, True)
    assert [r[:2] for r in rows(with_values, True)] == counted
    times = timed_rounds(
        spark,
        {
            "counted": sql,
            "counted with C amounts": with_values,
            "counted, C above A": above_first,
        },
        runs=args.runs,
        before=lambda _: spark.conf.set(COUNT, "true"),
    )
    total = sum(r[1] for r in counted)
    print(
        f"\nPATTERN (A B+ C) WITHIN {args.kleene_window} s: {total:,} matches "
        f"({total / KEYS:.3g} per key), counted in {times['counted'][0]:.2f} s, "
        f"with {LAST_ROW} in {times['counted with C amounts'][0]:.2f} s"
    )
    above = sum(r[1] for r in rows(above_first, True))
    print(
        f"    with C.amount > A.amount: {above:,} matches, counted in "
        f"{times['counted, C above A'][0]:.2f} s"
    )
    spark.conf.set(COUNT, "false")
    try:
        spark.sql(sql).write.format("noop").mode("overwrite").save()
        print("    built: finished (no guard hit)")
    except Exception as e:  # noqa: BLE001 - the guard's error is the result reported
        text = str(e)
        marker = "MatchRecognizeLimitException: "
        cause = text[text.index(marker) + len(marker) :] if marker in text else text.strip()
        print(f"    built: stopped by the guard: {cause.splitlines()[0][:300]}")
    spark.stop()


if __name__ == "__main__":
    main()
