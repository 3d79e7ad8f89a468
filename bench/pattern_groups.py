"""Twenty SKIP TILL ANY MATCH patterns over one input: planned together against each planned
alone.

Generated events (KEYS partition keys, one event per key and second, kinds a-h drawn from a
hash at different rates, a value v) and twenty sequences of three or four kinds that overlap
heavily (most start with `A B`, many continue alike; `B.v > A.v` wherever both are bound),
WITHIN 30, 60 or 90 s. The sides, run in interleaved rounds in one process on the same data
into the noop sink (medians), with their per-pattern match counts checked equal:

  - together: the UNION ALL of the twenty, planned together (one scan and shuffle, one
    pass, leaves and sub-trees the trees have alike evaluated once; the trees chosen
    together by local search, a shared node paid once);
  - together, in turn: the same with each pattern's tree chosen in the union's order,
    counting the nodes of the patterns before it as free;
  - together, own trees: the same with each pattern's tree chosen as alone (the nodes
    shared where those trees happen to coincide);
  - alone, one query: the same UNION ALL with planPatternsTogether = false (each pattern its
    own scan, shuffle, sort and pass);
  - alone, pattern order: as above under joinOrder = trivial, the multi-pattern paper's
    baseline (neither reordering nor sharing);
  - twenty queries: each pattern as its own query, one after the other (the sum).

Each round runs the sides in a rotated order; the three `together` sides are then also run
alternately on their own. It also prints the partial matches each side creates (the cost the
optimizer models).

    .venv/bin/python bench/pattern_groups.py                  # 200,000 events
    .venv/bin/python bench/pattern_groups.py --events 50000   # a quick profile
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import cached_parquet, session

KEYS = 8
TOGETHER = "spark.sql.matchRecognize.planPatternsTogether"
ORDER = "spark.sql.matchRecognize.joinOrder"
GROUP_CHOICE = "spark.sql.matchRecognize.internal.groupTreeChoice"

# Sequences of kinds (each variable is named after its kind), with their windows in seconds.
OVERLAPPING = [
    ("A B C", 60), ("A B D", 60), ("A B E", 90), ("A B C D", 60), ("A B C E", 90),
    ("A B F", 30), ("B C D", 60), ("B C E", 60), ("A C D", 90), ("A B G", 60),
    ("A B C F", 60), ("A B D E", 90), ("C D E", 30), ("A D E", 60), ("B C F", 90),
    ("A B E F", 60), ("A C E", 30), ("B D E", 60), ("A B C G", 90), ("A B H", 60),
]  # fmt: skip

# A common prefix and a rare end: `A B R` with R one of twenty kinds of 0.5 % each.
RARE_ENDS = [("A B R", 120, {"R": f"r{i:02d}"}) for i in range(20)]


def events_sql(n: int) -> str:
    # kinds from a hash: a 4 %, b 8 %, c 8 %, d 6 %, e 10 %, f 12 %, g 3 %, h 5 %, x the rest.
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts, kind, v FROM (
          SELECT id % {KEYS} AS k, id DIV {KEYS} AS t, pmod(hash(id, 11), 100) AS v,
                 CASE WHEN h < 400 THEN 'a' WHEN h < 1200 THEN 'b' WHEN h < 2000 THEN 'c'
                      WHEN h < 2600 THEN 'd' WHEN h < 3600 THEN 'e' WHEN h < 4800 THEN 'f'
                      WHEN h < 5100 THEN 'g' WHEN h < 5600 THEN 'h' ELSE 'x' END AS kind
          FROM (SELECT id, pmod(hash(id, 7), 10000) AS h FROM range({n})))"""


def rare_end_events_sql(n: int) -> str:
    # a 10 %, b 10 %, r00 to r19 0.5 % each, x the rest.
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts, kind, v FROM (
          SELECT id % {KEYS} AS k, id DIV {KEYS} AS t, pmod(hash(id, 11), 100) AS v,
                 CASE WHEN h < 1000 THEN 'a' WHEN h < 2000 THEN 'b'
                      WHEN h < 3000
                        THEN concat('r', lpad(CAST((h - 2000) DIV 50 AS STRING), 2, '0'))
                      ELSE 'x' END AS kind
          FROM (SELECT id, pmod(hash(id, 7), 10000) AS h FROM range({n})))"""


def pattern_query(events: str, i: int, pattern: str, window: int, kinds: dict | None = None) -> str:
    variables = pattern.split()
    define = [
        f"{x} AS kind = '{(kinds or {}).get(x, x.lower())}'"
        + (" AND B.v > A.v" if x == "B" and "A" in variables else "")
        for x in variables
    ]
    return f"""
        SELECT {i} AS pattern, * FROM {events} MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES {variables[0]}.ts AS first_ts, {variables[-1]}.ts AS last_ts
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          WITHIN INTERVAL '{window}' SECOND
          DEFINE {", ".join(define)}
        )"""


def compare(spark, title: str, events: str, patterns: list, runs: int) -> None:
    """Every side over `patterns`, checked to return the same matches, timed in rounds."""
    from spark_match_recognize import operator_metrics

    singles = [pattern_query(events, i + 1, *p) for i, p in enumerate(patterns)]
    union = "\nUNION ALL\n".join(singles)
    confs = {
        "together": {TOGETHER: "true"},
        "together, in turn": {TOGETHER: "true", GROUP_CHOICE: "in_turn"},
        "together, own trees": {TOGETHER: "true", GROUP_CHOICE: "alone"},
        "alone, one query": {TOGETHER: "false"},
        "alone, pattern order": {TOGETHER: "false", ORDER: "trivial"},
    }

    def use(name: str) -> None:
        spark.conf.unset(ORDER)
        spark.conf.unset(GROUP_CHOICE)
        for k, v in confs[name].items():
            spark.conf.set(k, v)

    counts, partial = {}, {}
    for name in confs:
        use(name)
        df = spark.sql(f"SELECT pattern, count(*) AS n FROM ({union}) GROUP BY pattern")
        counts[name] = sorted(tuple(r) for r in df.collect())
        partial[name] = sum(
            op.metrics.get("partialMatches", 0)
            for op in operator_metrics(df)
            if op.operator.endswith("TreeMatchExec")
        )
    assert len({tuple(c) for c in counts.values()}) == 1, counts
    total = sum(n for _, n in counts["together"])
    print(f"\n{title}: {len(patterns)} patterns, {total:,} matches")

    # Each round runs the sides in another order: a side run right after one that left much
    # garbage pays for its collection, and the same side must not always be that one.
    names = list(confs)
    runs_of: dict[str, list[float]] = {name: [] for name in names}
    for r in range(2 + runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            use(name)
            t0 = time.perf_counter()
            spark.sql(union).write.format("noop").mode("overwrite").save()
            if r >= 2:  # two warm-up rounds
                runs_of[name].append(time.perf_counter() - t0)
    times = {name: (statistics.median(ts), ts) for name, ts in runs_of.items()}
    use("together")
    separate = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for sql in singles:
            spark.sql(sql).write.format("noop").mode("overwrite").save()
        separate.append(time.perf_counter() - t0)
    separate.sort()
    times["twenty queries"] = (separate[len(separate) // 2], separate)
    base = times["together"][0]
    for name, (t, _) in times.items():
        pm = f"{partial[name]:14,d} partial matches" if name in partial else ""
        print(f"    {name:22s} {t:7.2f} s  {t / base:6.2f}x together  {pm}")
    # The `together` sides differ only in trees, by less than the others' garbage moves a
    # run: alternated alone, run after run.
    trees = {"together": [], "together, in turn": [], "together, own trees": []}
    for r in range(3 * runs):
        for name in list(trees)[r % 3 :] + list(trees)[: r % 3]:
            use(name)
            t0 = time.perf_counter()
            spark.sql(union).write.format("noop").mode("overwrite").save()
            trees[name].append(time.perf_counter() - t0)
    a, b, c = (statistics.median(ts) for ts in trees.values())
    print(
        f"    alternated alone: together {a:.2f} s, in turn {b:.2f} s ({b / a:.2f}x), "
        f"own trees {c:.2f} s ({c / a:.2f}x)"
    )


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=200_000)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    spark = session("pattern_groups")
    print(f"{args.events:,} events, {KEYS} keys")
    overlapping = cached_parquet(spark, f"pattern_groups_{args.events}", events_sql(args.events))
    compare(spark, "overlapping sequences", overlapping, OVERLAPPING, args.runs)
    rare = cached_parquet(
        spark, f"pattern_groups_rare_{args.events}", rare_end_events_sql(args.events)
    )
    compare(spark, "a common prefix, rare ends", rare, RARE_ENDS, args.runs)
    spark.stop()


if __name__ == "__main__":
    main()
