"""Split matching: one large partition, and one key holding half the rows, matched in ranges
on every core vs one task per partition.

Each query runs with `spark.sql.matchRecognize.split.mode` off (the whole partition, or the
skewed key, in one task) and on (ranges of the order, one task each), side by side in
interleaved rounds on the same data (bench/common.py's protocol). Both sides' rows are
checked equal by count and by a checksum of every output row. One more run of each side
times its stages: the matching stage (the last) and the stages before it, where the split
side pays for the range bounds' sampling pass over the input and the range exchange.

    .venv/bin/python bench/split_partition.py                  # 20M rows, 2 cores
    .venv/bin/python bench/split_partition.py --rows 50000000  # the recorded one-partition figure
    .venv/bin/python bench/split_partition.py --rows 2000000 --runs 1  # a quick profile
    .venv/bin/python bench/split_partition.py --queries "PAST LAST ROW"  # some queries
"""

from __future__ import annotations

import argparse
import datetime
import json
import urllib.request

from common import cached_parquet, report, session, timed_rounds
from spark_match_recognize import operator_metrics

SPLIT = "spark.sql.matchRecognize.split.mode"


def generate_sql(rows: int, keys: int) -> str:
    # k: with keys > 1, key 0 holds half the rows and the others share the rest; ts: a minute
    # per row of a key; x: a wavy price with noise; cat: a selective category code.
    key = "0" if keys == 1 else f"IF(id % 2 = 0, 0, CAST(1 + (id DIV 2) % {keys - 1} AS INT))"
    return f"""
        SELECT CAST({key} AS INT) AS k,
               TIMESTAMP_SECONDS(1767225600 + id * 60) AS ts,
               CAST(100 + 10 * sin(id * 0.37) + 3 * cos(id * 1.91) + (hash(id) % 5) AS DOUBLE) AS x,
               CAST(pmod(hash(id, 7), 100) AS INT) AS cat
        FROM range({rows})"""


# Each pattern under both skip modes: under SKIP PAST LAST ROW (the default) where a match
# starts depends on the one before, which each range finds out from the rows before it.
PATTERNS = {
    "A B* C": """MEASURES A.ts AS a_ts, C.ts AS c_ts, count(B.x) AS bs
              ONE ROW PER MATCH AFTER MATCH {skip}
              PATTERN (A B* C)
              DEFINE A AS cat < 5, B AS cat <> 2, C AS cat = 2 AND x > A.x""",
    "V shape": """MEASURES FIRST(STRT.ts) AS start_ts, LAST(DOWN.ts) AS bottom_ts,
                       LAST(UP.ts) AS end_ts, count(*) AS n
              ONE ROW PER MATCH AFTER MATCH {skip}
              PATTERN (STRT DOWN+ UP+)
              DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x)""",
    # MATCH_NUMBER() counts the matches of the ranges before: split, the ranges' rows are
    # kept while a first job counts them, then handed out numbered on.
    "V shape numbered": """MEASURES MATCH_NUMBER() AS m, FIRST(STRT.ts) AS start_ts,
                       LAST(UP.ts) AS end_ts, count(*) AS n
              ONE ROW PER MATCH AFTER MATCH {skip}
              PATTERN (STRT DOWN+ UP+)
              DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x)""",
    # A measure computing with MATCH_NUMBER(): split, it is computed above the matcher from
    # the renumbered column and the pattern expressions it reads, kept as hidden columns.
    "V shape computed number": """MEASURES MATCH_NUMBER() * 1000000 + count(*) AS m_n,
                       FIRST(STRT.ts) AS start_ts, LAST(UP.ts) AS end_ts
              ONE ROW PER MATCH AFTER MATCH {skip}
              PATTERN (STRT DOWN+ UP+)
              DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x)""",
    # Every row out, in its matches or unmatched: under TO NEXT ROW a range's unmatched rows
    # that a match of an earlier range covers are dropped once every range is matched.
    "V shape unmatched": """MEASURES CLASSIFIER() AS cls, RUNNING count(*) AS n
              ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH {skip}
              PATTERN (STRT DOWN+ UP+)
              DEFINE DOWN AS x < PREV(x), UP AS x > PREV(x)""",
}
SKIPS = ("SKIP TO NEXT ROW", "SKIP PAST LAST ROW")


def queries(view: str, keyed: bool) -> dict[str, str]:
    keys = "PARTITION BY k " if keyed else ""
    return {
        f"{name}, {skip}": f"""SELECT * FROM {view} MATCH_RECOGNIZE (
              {keys}ORDER BY ts
              {body.format(skip=skip)})"""
        for skip in SKIPS
        for name, body in PATTERNS.items()
    }


def checksum(spark, sql: str) -> tuple[tuple, dict]:
    """The rows' count and a checksum of them, and the MATCH_RECOGNIZE operator's metrics."""
    df = spark.sql(f"SELECT count(*), sum(hash(*)) FROM ({sql})")
    rows = tuple(df.collect()[0])
    (operator,) = [o for o in operator_metrics(df) if o.operator == "MatchRecognizeExec"]
    return rows, operator.metrics


def _stages(spark) -> dict[int, dict]:
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages?status=complete"
    with urllib.request.urlopen(url) as response:
        return {s["stageId"]: s for s in json.load(response)}


def _seconds(stamp: str) -> float:
    return datetime.datetime.strptime(stamp[:23], "%Y-%m-%dT%H:%M:%S.%f").timestamp()


def stage_split(spark, sql: str) -> tuple[float, float]:
    """One more run of `sql`: the wall seconds of its last stage (the matching) and of the
    stages before it (reading, the range bounds' sampling pass, the exchange's writes)."""
    before = set(_stages(spark))
    spark.sql(sql).write.format("noop").mode("overwrite").save()
    new = sorted(
        (s for i, s in _stages(spark).items() if i not in before), key=lambda s: s["stageId"]
    )
    last = new[-1]
    start = min(_seconds(s["submissionTime"]) for s in new)
    matching = _seconds(last["completionTime"]) - _seconds(last["submissionTime"])
    return matching, _seconds(last["submissionTime"]) - start


def run(spark, rows: int, keys: int, runs: int, only: set[str] | None = None) -> list[dict]:
    view = cached_parquet(spark, f"split-{rows}-{keys}", generate_sql(rows, keys))
    label = "one partition" if keys == 1 else f"{keys} keys, one with half the rows"
    results = []
    for name, sql in queries(view, keyed=keys > 1).items():
        if only and not any(word in name for word in only):
            continue
        sides = {"one task": sql, "split": sql}

        def before(side: str) -> None:
            spark.conf.set(SPLIT, "on" if side == "split" else "off")

        sums, metrics = {}, {}
        for side in sides:
            before(side)
            sums[side], metrics[side] = checksum(spark, sql)
        assert sums["one task"] == sums["split"], f"{name}: different rows {sums}"
        timings = timed_rounds(spark, sides, runs=runs, before=before)
        one, split = timings["one task"][0], timings["split"][0]
        stages = {}
        for side in sides:
            before(side)
            stages[side] = stage_split(spark, sql)
        results.append(
            {
                "data": f"{rows:,} rows, {label}",
                "query": name,
                "one task (s)": round(one, 2),
                "split (s)": round(split, 2),
                "speed-up": round(one / split, 2),
                "matches (both)": sums["split"][0],
                "rows read of neighbours (split)": metrics["split"]["neighbourRows"],
                "ranges read from the start": metrics["split"]["rangesReadFromStart"],
                "matching stage one / split (s)": f"{stages['one task'][0]:.1f} / "
                f"{stages['split'][0]:.1f}",
                "stages before it one / split (s)": f"{stages['one task'][1]:.1f} / "
                f"{stages['split'][1]:.1f}",
                "runs one / split": " ".join(f"{x:.1f}" for x in timings["one task"][1])
                + " / "
                + " ".join(f"{x:.1f}" for x in timings["split"][1]),
            }
        )
    spark.conf.unset(SPLIT)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--keys", type=int, default=1000, help="keys of the skewed run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-skewed", action="store_true")
    parser.add_argument(
        "--queries", default=None, help="comma-separated words; queries naming one of them run"
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    # The web UI's REST API gives each stage's times (the matching stage against the others).
    spark = session(
        "bench-split-partition", driver_memory="12g", extra={"spark.ui.enabled": "true"}
    )
    only = set(args.queries.split(",")) if args.queries else None
    results = run(spark, args.rows, 1, args.runs, only)
    if not args.skip_skewed:
        results += run(spark, args.rows, args.keys, args.runs, only)
    report("Split matching: ranges on every core vs one task per partition", results, args.out)


if __name__ == "__main__":
    main()
