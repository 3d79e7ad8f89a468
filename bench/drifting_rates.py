"""Rates that drift: each key's event types trade places every x events, and each key moves
to the tree its latest rows call for, against plans fixed for the whole input.

The drift workload of the multi-pattern CEP paper (Kolchinsky and Schuster), in batch: a
four-variable SKIP TILL ANY MATCH sequence `A B C D WITHIN <window>` over generated events
(8 partition keys, one event per key and second) whose rates are permuted every x events
of a key: in each segment one of A, B, C, D is rare (1 % of the rows) and the other three
share the rest, the rare one moving A, D, B, C, A, ... from segment to segment. The
conditions relate neighbours only and cannot be looked up by value (`pmod(B.v + A.v, 100) =
0`, ...), so a tree costs the pairs its nodes test: one that binds the rare variable early
tests few per row, one that joins frequent neighbours first tests hundreds. Side by side on
the same data into the noop sink (median of interleaved rounds), under cepExecution = tree:

  - adaptive: trees per key, with each key choosing again after every
    spark.sql.matchRecognize.treesPerKey.prefixRows rows (1,000) and moving at a row
    position when another tree costs 1.25 times less (treesPerKey.minGain);
  - static, the sample's average: treesPerKey.max = 1;
  - static, each tree the adaptive side may run, forced on every key for the whole input
    with the internal conf spark.sql.matchRecognize.internal.joinTree (what a plan chosen
    at the start keeps, whichever profile the start had);
  - each segment's fastest tree: the input split by its rare variable, each part run under
    each of those trees, the fastest per part summed (matches spanning two segments are
    lost here: a figure of speed, not of rows).

All the whole-input sides must return the same matches.

    .venv/bin/python bench/drifting_rates.py                       # x = 10,000, 20,000, 50,000
    .venv/bin/python bench/drifting_rates.py --segments 5000 --events 400000   # a quick profile
"""

from __future__ import annotations

import argparse

from common import cached_parquet, report, session, timed_rounds
from spark_match_recognize import operator_metrics

KEYS = 8
MAX_TREES = "spark.sql.matchRecognize.treesPerKey.max"
FORCED_TREE = "spark.sql.matchRecognize.internal.joinTree"
RARE_ORDER = "ADBC"

QUERY = """
SELECT * FROM {events} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, D.ts AS d_ts
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C D)
  WITHIN INTERVAL '{window}' SECOND
  DEFINE A AS kind = 'A',
         B AS kind = 'B' AND pmod(B.v + A.v, 100) = 0,
         C AS kind = 'C' AND pmod(C.v + B.v, 100) = 0,
         D AS kind = 'D' AND pmod(D.v + C.v, 100) = 0
)"""


def events_sql(n: int, segment: int) -> str:
    # Segment s of a key (x events each) has RARE_ORDER[s % 4] on 1 % of its rows; the
    # other kinds, in their order, on 33 % each.
    rare = "substr('" + RARE_ORDER + "', CAST(pmod(t DIV " + str(segment) + ", 4) AS INT) + 1, 1)"
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts, {rare} AS rare,
               CASE WHEN h < 1 THEN {rare}
                    ELSE element_at(filter(array('A', 'B', 'C', 'D'), x -> x != {rare}),
                                    CAST(pmod(h, 3) AS INT) + 1)
               END AS kind,
               CAST(pmod(hash(id, 7), 1000) AS INT) AS v
        FROM (SELECT id, id % {KEYS} AS k, id DIV {KEYS} AS t, pmod(hash(id, 3), 100) AS h
              FROM range({n}))"""


def trees_of(spark, sql: str) -> list[str]:
    """The trees of the one-pass operator EXPLAIN shows for `sql`: its own, then those per key."""
    plan = spark.sql(f"EXPLAIN {sql}").collect()[0][0]
    line = next(line for line in plan.splitlines() if "CepTreeMatch" in line)
    own = line.split("CepTreeMatch ", 1)[1].split(" within")[0]
    if "trees per key: " not in line:
        return [own]
    return line.split("trees per key: ", 1)[1].split(" (each key")[0].split(" | ")


def measure(spark, events: str, x: int, window: int, runs: int) -> list[dict]:
    """The sides over the events whose rates trade places every `x` events of a key."""
    for key in (MAX_TREES, FORCED_TREE):
        spark.conf.unset(key)
    whole = QUERY.format(events=events, window=window)
    trees = trees_of(spark, whole)
    # Each segment kind's part of the input.
    parts = {
        r: QUERY.format(
            events=f"(SELECT * FROM {events} WHERE rare = '{r}') AS part_{r}", window=window
        )
        for r in RARE_ORDER
    }
    sides: dict[str, dict[str, str]] = {
        "adaptive": {},
        "static: the average's tree": {MAX_TREES: "1"},
    }
    sqls = {name: whole for name in sides}
    for t in trees:
        sides[f"static: {t}"] = {FORCED_TREE: t.replace(" ⋈", "")}
        sqls[f"static: {t}"] = whole
        for r in RARE_ORDER:
            sides[f"part {r}: {t}"] = {FORCED_TREE: t.replace(" ⋈", "")}
            sqls[f"part {r}: {t}"] = parts[r]

    def configure(name: str) -> None:
        for key in (MAX_TREES, FORCED_TREE):
            spark.conf.unset(key)
        for key, value in sides[name].items():
            spark.conf.set(key, value)

    whole_sides = [name for name in sides if not name.startswith("part")]
    counts = {}
    moves = 0
    for name in whole_sides:
        configure(name)
        df = spark.sql(f"SELECT count(*) AS n FROM ({sqls[name]})")
        counts[name] = df.collect()[0][0]
        if name == "adaptive":
            moves = sum(
                op.metrics.get("treeMoves", 0)
                for op in operator_metrics(df)
                if op.operator == "TreeMatchExec"
            )
    if len(set(counts.values())) != 1:
        raise SystemExit(f"x = {x}: the sides disagree: {counts}")
    times = timed_rounds(spark, sqls, runs=runs, before=configure)
    for key in (MAX_TREES, FORCED_TREE):
        spark.conf.unset(key)
    adaptive = times["adaptive"][0]
    rows = [
        {
            "x": x,
            "side": name,
            "matches": counts[name],
            "median s": round(times[name][0], 2),
            "against adaptive": f"{times[name][0] / adaptive:.2f}x",
            "moves": moves if name == "adaptive" else "-",
        }
        for name in whole_sides
    ]
    # Each part under the fastest of the trees, the parts' times summed.
    best = {r: min(trees, key=lambda t, r=r: times[f"part {r}: {t}"][0]) for r in RARE_ORDER}
    per_segment = sum(times[f"part {r}: {best[r]}"][0] for r in RARE_ORDER)
    rows.append(
        {
            "x": x,
            "side": "each segment's fastest tree (parts summed): "
            + ", ".join(f"{r} {best[r]}" for r in RARE_ORDER),
            "matches": "-",
            "median s": round(per_segment, 2),
            "against adaptive": f"{per_segment / adaptive:.2f}x",
            "moves": "-",
        }
    )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=2_000_000)
    p.add_argument("--window", type=int, default=1200, help="WITHIN, in seconds")
    p.add_argument("--segments", default="10000,20000,50000", help="x: events of a key per segment")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()

    spark = session(
        "drifting_rates",
        extra={
            "spark.sql.matchRecognize.countWithoutMatches": "false",
            "spark.sql.matchRecognize.cepExecution": "tree",
        },
    )
    rows = []
    for x in (int(s) for s in args.segments.split(",")):
        events = cached_parquet(spark, f"drifting_{args.events}_{x}", events_sql(args.events, x))
        rows += measure(spark, events, x, args.window, args.runs)
    report(f"A B C D over {args.events:,} events, {KEYS} keys, rates permuted every x", rows)


if __name__ == "__main__":
    main()
