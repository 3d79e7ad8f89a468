"""Trees per key: keys of opposite rate profiles, each running its own tree, against one tree.

A three-variable SKIP TILL ANY MATCH sequence `A B C WITHIN <window>` over generated events
(16 partition keys, one event per key and second) whose keys come in two opposite profiles:
on even keys A is rare and C floods, on odd keys A floods and C is rare (B on a third of
the rows of both). The tree that starts from the rare end builds few partial matches on a
key; the other builds the flooding pair's, so one tree for all keys is right for half of
them. One run prints, side by side on the same data into the noop sink (median of
interleaved rounds), under cepExecution = tree:

  - trees per key (spark.sql.matchRecognize.treesPerKey.max = 4, the default);
  - one tree for all (treesPerKey.max = 1), the tree the sample's average picks;
  - each profile's best tree forced on every key (the internal conf
    spark.sql.matchRecognize.internal.joinTree), so that no single tree is left untried;
  - the matches of every side (which must be equal), the trees EXPLAIN shows, the partial
    matches each side created and, with trees per key, the groups (keys and time slices)
    that ran each tree.

    .venv/bin/python bench/trees_per_key.py                   # 2M events (docs/benchmarks.md)
    .venv/bin/python bench/trees_per_key.py --events 200000   # a quick profile
"""

from __future__ import annotations

import argparse

from common import cached_parquet, partial_matches_per_node, report, session, timed_rounds
from spark_match_recognize import operator_metrics

KEYS = 16
MAX_TREES = "spark.sql.matchRecognize.treesPerKey.max"
FORCED_TREE = "spark.sql.matchRecognize.internal.joinTree"

QUERY = """
SELECT * FROM {events} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, C.ts AS c_ts
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C)
  WITHIN INTERVAL '{window}' SECOND
  DEFINE A AS kind = 'A',
         B AS kind = 'B' AND pmod(B.v + A.v, 100) = 0,
         C AS kind = 'C' AND pmod(C.v + B.v, 100) = 0
)"""


def events_sql(n: int) -> str:
    # Even keys: A 1 %, B 50 %, C 49 %; odd keys: A 49 %, B 50 %, C 1 %. v in 0-999.
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts,
               CASE WHEN k % 2 = 0 THEN
                      CASE WHEN h < 100 THEN 'A' WHEN h < 5100 THEN 'B' ELSE 'C' END
                    ELSE
                      CASE WHEN h < 100 THEN 'C' WHEN h < 5100 THEN 'B' ELSE 'A' END
               END AS kind,
               CAST(pmod(hash(id, 7), 1000) AS INT) AS v
        FROM (SELECT id, id % {KEYS} AS k, id DIV {KEYS} AS t, pmod(hash(id, 3), 10000) AS h
              FROM range({n}))"""


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=2_000_000)
    p.add_argument("--window", type=int, default=1200, help="WITHIN, in seconds")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()

    spark = session(
        "trees_per_key",
        extra={
            "spark.sql.matchRecognize.countWithoutMatches": "false",
            "spark.sql.matchRecognize.cepExecution": "tree",
        },
    )
    events = cached_parquet(spark, f"opposite_profiles_{args.events}", events_sql(args.events))
    sql = QUERY.format(events=events, window=args.window)
    # Each side's settings: trees per key, the one tree `auto` picks for the average, and
    # each profile's own tree forced on every key.
    sides = {
        "trees per key": {},
        "one tree (auto)": {MAX_TREES: "1"},
        "((A B) C) for all": {FORCED_TREE: "((A B) C)"},
        "((C B) A) for all": {FORCED_TREE: "((C B) A)"},
    }

    def configure(name: str) -> None:
        for key in (MAX_TREES, FORCED_TREE):
            spark.conf.unset(key)
        for key, value in sides[name].items():
            spark.conf.set(key, value)

    rows = []
    for name in sides:
        configure(name)
        plan = spark.sql(f"EXPLAIN {sql}").collect()[0][0]
        tree_line = next(
            (line.strip() for line in plan.splitlines() if "CepTreeMatch" in line), "?"
        )
        df = spark.sql(f"SELECT count(*) AS n FROM ({sql})")
        n = df.collect()[0][0]
        created = sum(c for _, c, _ in partial_matches_per_node(df))
        keys = {
            op.labels[k].removeprefix("keys run with tree "): v
            for op in operator_metrics(df)
            for k, v in op.metrics.items()
            if k.startswith("keysTree")
        }
        rows.append(
            {
                "side": name,
                "matches": n,
                "partial matches": created,
                "groups per tree": keys or "-",
                "plan": tree_line.removeprefix("+- "),
            }
        )
    if len({r["matches"] for r in rows}) != 1:
        raise SystemExit(f"the sides disagree: {[r['matches'] for r in rows]} matches")
    times = timed_rounds(spark, {name: sql for name in sides}, runs=args.runs, before=configure)
    for r in rows:
        r["median s"] = round(times[r["side"]][0], 2)
        r["runs s"] = " ".join(f"{t:.2f}" for t in times[r["side"]][1])
    report(f"A B C over {args.events:,} events, {KEYS} keys of two opposite profiles", rows)
    per_key = times["trees per key"][0]
    for name in list(sides)[1:]:
        print(f"{name} / trees per key: {times[name][0] / per_key:.2f}x")


if __name__ == "__main__":
    main()
