"""One-pass tree evaluation against the join operators, on skewed event rates.

A four-variable SKIP TILL ANY MATCH sequence `A B C D WITHIN <window>` over generated
events (8 partition keys, one event per key and second): A on over half of the events, B
and C on a fifth each, D on under 1 % with a selective condition. The pattern-order
(left-deep, `trivial`) plan builds the A-B and A-B-C partial matches of every frequent row;
a plan that starts from the rare D builds few. One run prints, side by side on the same
data into the noop sink (median of interleaved rounds):

  - cepExecution = tree and = joins, each under joinOrder = auto and = trivial;
  - the matches, and the partial matches each plan created, per tree node.

    .venv/bin/python bench/tree_vs_joins.py                    # 1M events (docs/benchmarks.md)
    .venv/bin/python bench/tree_vs_joins.py --events 200000    # a quick profile
    .venv/bin/python bench/tree_vs_joins.py --events 100000 --pattern 'PERMUTE(A, B, C, D)'

`--all-trees` (the sequence `A B C D` only) also runs, under cepExecution = tree, every tree
over the four variables up to swapping a join's sides — the 24 left-deep orders and the
3 bushy pairings — forced with the internal conf spark.sql.matchRecognize.internal.joinTree,
checks they all return the same matches, and prints `auto` against the fastest of them.
"""

from __future__ import annotations

import argparse
import itertools

from common import cached_parquet, partial_matches_per_node, session, timed_rounds

KEYS = 8

QUERY = """
SELECT * FROM {events} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, D.ts AS d_ts, D.v AS d_v
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN ({pattern})
  WITHIN INTERVAL '{window}' SECOND
  DEFINE A AS kind = 'A',
         B AS kind = 'B' AND B.v > A.v,
         C AS kind = 'C' AND C.v > B.v,
         D AS kind = 'D' AND D.v >= 90
)"""


def events_sql(n: int) -> str:
    # kind from a hash: A 55 %, B 22 %, C 22.2 %, D 0.8 % (D.v >= 90 keeps a tenth of those).
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts, kind, v FROM (
          SELECT id % {KEYS} AS k, id DIV {KEYS} AS t,
                 CASE WHEN h < 5500 THEN 'A' WHEN h < 7700 THEN 'B'
                      WHEN h < 9920 THEN 'C' ELSE 'D' END AS kind,
                 CAST(pmod(hash(id, 7), 100) AS INT) AS v
          FROM (SELECT id, pmod(hash(id, 3), 10000) AS h FROM range({n})))"""


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--window", type=int, default=120, help="WITHIN, in seconds")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument(
        "--pattern",
        default="A B C D",
        help="over variables A-D, e.g. 'PERMUTE(A, B, C, D)' or 'A B !C D'",
    )
    p.add_argument(
        "--all-trees",
        action="store_true",
        help="also time every tree of A B C D in one pass (see above)",
    )
    args = p.parse_args()

    # The partial matches per node are read from a count(*), which must build its matches
    # rather than count them.
    spark = session(
        "tree_vs_joins", extra={"spark.sql.matchRecognize.countWithoutMatches": "false"}
    )
    events = cached_parquet(spark, f"skewed_{args.events}", events_sql(args.events))
    sql = QUERY.format(events=events, window=args.window, pattern=args.pattern)
    sides = {
        f"{ex} / {order}": (ex, order) for ex in ("tree", "joins") for order in ("auto", "trivial")
    }

    def configure(name: str) -> None:
        ex, order = sides[name]
        spark.conf.set("spark.sql.matchRecognize.cepExecution", ex)
        spark.conf.set("spark.sql.matchRecognize.joinOrder", order)

    print(f"PATTERN ({args.pattern}), {args.events:,} events, {KEYS} keys, WITHIN {args.window} s")
    counts = {}
    for name in sides:
        configure(name)
        df = spark.sql(f"SELECT count(*) AS n FROM ({sql})")
        counts[name] = df.collect()[0][0]
        print(
            f"\n[{name}] {counts[name]:,} matches; partial matches per node "
            "(created, peak buffered summed over tasks):"
        )
        total = peaks = 0
        for node, created, peak in partial_matches_per_node(df):
            total += created
            peaks += peak
            print(f"    {node:40s} {created:>14,} {peak:>12,}")
        print(f"    {'total':40s} {total:>14,} {peaks:>12,}")
    assert len(set(counts.values())) == 1, counts

    times = timed_rounds(spark, {name: sql for name in sides}, runs=args.runs, before=configure)
    cores = spark.sparkContext.defaultParallelism
    print(f"\nside                   median s   events/s   per core ({cores} cores)")
    for name, (t, _) in times.items():
        print(f"{name:22s} {t:9.2f} {args.events / t:12,.0f} {args.events / t / cores:12,.0f}")
    t = {name: v[0] for name, v in times.items()}
    print(
        f"\njoins/tree (auto): {t['joins / auto'] / t['tree / auto']:.2f}x; "
        f"joins/tree (trivial): {t['joins / trivial'] / t['tree / trivial']:.2f}x"
    )
    print(
        f"trivial/auto (tree): {t['tree / trivial'] / t['tree / auto']:.2f}x; "
        f"trivial/auto (joins): {t['joins / trivial'] / t['joins / auto']:.2f}x"
    )
    if args.all_trees:
        all_trees(spark, sql, args.runs)
    spark.stop()


def every_tree() -> list[str]:
    """The trees over A-D up to swapping a join's sides: left-deep orders, bushy pairings."""
    left_deep = ["(" + " ".join(order) + ")" for order in itertools.permutations("ABCD")]
    bushy = ["((A B) (C D))", "((A C) (B D))", "((A D) (B C))"]
    return left_deep + bushy


def all_trees(spark, sql: str, runs: int) -> None:
    """Every tree in one pass, timed in interleaved rounds with `auto`'s plan as one more side."""
    tree_conf = "spark.sql.matchRecognize.internal.joinTree"
    trees = ["auto"] + every_tree()

    def force(name: str) -> None:
        spark.conf.set("spark.sql.matchRecognize.cepExecution", "tree")
        spark.conf.set("spark.sql.matchRecognize.joinOrder", "auto")
        if name == "auto":
            spark.conf.unset(tree_conf)
        else:
            spark.conf.set(tree_conf, name)

    counts = set()
    for name in trees:
        force(name)
        counts.add(spark.sql(f"SELECT count(*) FROM ({sql})").collect()[0][0])
    assert len(counts) == 1, f"the trees disagree: {counts}"
    times = timed_rounds(spark, {name: sql for name in trees}, runs=runs, before=force)
    spark.conf.unset(tree_conf)
    ranked = sorted((v[0], name) for name, v in times.items())
    print(
        f"\nevery tree in one pass ({len(trees) - 1} trees, {counts.pop():,} matches each), "
        "median s, fastest first:"
    )
    for seconds, name in ranked:
        print(f"    {name:20s} {seconds:8.2f}")
    fastest = min(s for s, name in ranked if name != "auto")
    print(f"auto / fastest tree: {times['auto'][0] / fastest:.2f}x")


if __name__ == "__main__":
    main()
