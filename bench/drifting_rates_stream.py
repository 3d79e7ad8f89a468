"""Rates that drift, over a stream: the workload of drifting_rates.py (a four-variable SKIP TILL
ANY MATCH sequence `A B C D`, 8 keys, one event per key and second, one variable rare in each
segment of x events of a key, the rare one moving A, D, B, C, ...) read as a stream of
parquet files in event-time order, one file per micro-batch, into the noop sink. Side by side
on the same files (median of interleaved rounds, each from a new checkpoint):

  - adaptive: trees per key (the default): each key starts with the pattern order's tree
    and moves, inside the running stream, to the tree the rates of its latest
    spark.sql.matchRecognize.treesPerKey.prefixRows rows make cheapest;
  - static, the pattern order: treesPerKey.max = 1, what a stream ran before (a stream has
    no sample to plan by at its start);
  - static, each other tree the adaptive side may run, forced on every key for the whole
    stream (spark.sql.matchRecognize.internal.joinTree): the best a plan fixed at the start
    could do, knowing the data in advance.

With `--drift conditions` the rates stay even (each kind on a quarter of the rows) and the
conditions' pass rates move instead: a condition passes when the two rows' values add up to
a multiple of 300 (`pmod(B.v + A.v, 300) = 0`, not a lookup by value); in each segment one
pair of neighbours, A-B, then B-C, then C-D, in turn, has values that always do (all its
pairs pass) and the other rows random values (their pairs pass 1 in 300). A tree that joins
a segment's passing pair first builds every pair of a window's rows of those two variables;
no tree avoids that in every segment, and keys choose by the pass rates they measure
(docs/optimizer.md, "Trees per key over a stream").

Every side must write the same number of matches (summed from the progress's observed
metrics); the adaptive side's moves come from the same metrics.

    .venv/bin/python bench/drifting_rates_stream.py                 # 400,000 events, x = 10,000
    .venv/bin/python bench/drifting_rates_stream.py --events 100000 --segments 2500   # quick
    .venv/bin/python bench/drifting_rates_stream.py --drift conditions --window 600
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from common import DATA, report, session
from drifting_rates import KEYS, QUERY, events_sql

MAX_TREES = "spark.sql.matchRecognize.treesPerKey.max"
FORCED_TREE = "spark.sql.matchRecognize.internal.joinTree"
OPERATOR = "spark.sql.matchRecognize.streaming.operator"
SCHEMA = "k BIGINT, ts TIMESTAMP, rare STRING, kind STRING, v INT"

# Pairs pass when the values add up to a multiple of this: always when both are multiples.
MULTIPLE = 300


def conditions_sql(n: int, segment: int, multiple: int = MULTIPLE) -> str:
    """Events of even rates whose conditions' pass rates move every `segment` events of a
    key: the neighbours A-B, then B-C, then C-D, ... have values adding up to a multiple of
    MULTIPLE (all their pairs pass), the other rows random values (1 pair in MULTIPLE passes);
    `rare` names the pair that passes. Each segment's pair is off a multiple by its own
    amounts, so that where two segments meet their rows do not all pass together."""
    phase = f"CAST(pmod(t DIV {segment}, 3) AS INT)"
    loose = f"element_at(array('AB', 'BC', 'CD'), {phase} + 1)"
    # The offsets of (segment's pair, kind), in sixths of the multiple: AB 0 + 0, BC 2 + 4,
    # CD 1 + 5 (a pair of one segment and the next adds up to 2, 3 or 4 sixths).
    m = multiple // 6
    offset = (
        f"CASE {loose} || kind WHEN 'BCB' THEN {2 * m} WHEN 'BCC' THEN {4 * m} "
        f"WHEN 'CDC' THEN {m} WHEN 'CDD' THEN {5 * m} ELSE 0 END"
    )
    return f"""
        SELECT k, timestamp_seconds(1700000000 + t) AS ts, {loose} AS rare, kind,
               CASE WHEN instr({loose}, kind) > 0
                    THEN {multiple} * CAST(pmod(hash(id, 7), 1000) AS INT) + {offset}
                    ELSE CAST(pmod(hash(id, 7), 1000000) AS INT) END AS v
        FROM (SELECT id, id % {KEYS} AS k, id DIV {KEYS} AS t,
                     element_at(array('A', 'B', 'C', 'D'), CAST(pmod(hash(id, 3), 4) AS INT) + 1)
                       AS kind
              FROM range({n}))"""


def stream_files(
    spark, events: int, segment: int, files: int, drift: str = "rates", multiple: int = MULTIPLE
) -> Path:
    """The events as `files` parquet files in event-time order (written once)."""
    name = "drifting_stream" if drift == "rates" else f"drifting_conditions_{multiple}_stream"
    folder = DATA / f"{name}_{events}_{segment}_{files}"
    if (folder / "_DONE").exists():
        return folder
    print(f"[bench] generating {folder.name} ...", flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    generate = (
        events_sql(events, segment)
        if drift == "rates"
        else conditions_sql(events, segment, multiple)
    )
    spark.sql(generate).createOrReplaceTempView("drift_events")
    seconds = events // KEYS
    per_file = (seconds + files - 1) // files
    for i in range(files):
        lo, hi = 1700000000 + i * per_file, 1700000000 + (i + 1) * per_file
        with tempfile.TemporaryDirectory() as tmp:
            spark.sql(
                f"SELECT * FROM drift_events WHERE unix_timestamp(ts) >= {lo} "
                f"AND unix_timestamp(ts) < {hi}"
            ).coalesce(1).write.parquet(tmp + "/out")
            part = next(Path(tmp, "out").glob("part-*.parquet"))
            shutil.move(str(part), folder / f"chunk-{i:04d}.parquet")
    (folder / "_DONE").touch()
    return folder


def run(spark, folder: Path, query: str, conf: dict[str, str]) -> tuple[float, int, int, str]:
    """Seconds, matches, moves and the plan of one run of the stream under `conf`."""
    for key in (MAX_TREES, FORCED_TREE):
        spark.conf.unset(key)
    operator = spark.conf.get(OPERATOR)
    for key, value in conf.items():
        spark.conf.set(key, value)
    spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(
        str(folder)
    ).withWatermark("ts", "10 seconds").createOrReplaceTempView("drift_stream")
    checkpoint = tempfile.mkdtemp(prefix="drift-chk-")
    try:
        start = time.perf_counter()
        query = (
            spark.sql(query)
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        seconds = time.perf_counter() - start
        metrics = [
            p["observedMetrics"]["match_recognize"]
            for p in query.recentProgress
            if "match_recognize" in p.get("observedMetrics", {})
        ]
        matches = sum(m["matches"] or 0 for m in metrics)
        moves = sum((m.asDict().get("tree_moves") or 0) for m in metrics)
        plan = query._jsq.explainInternal(False)
        return seconds, matches, moves, plan
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
        for key in conf:
            spark.conf.unset(key)
        spark.conf.set(OPERATOR, operator)


def other_trees(plan: str) -> list[str]:
    """The trees per key the plan of the stream's operator names."""
    if "trees per key: " not in plan:
        return []
    return plan.split("trees per key: ", 1)[1].split(", each key")[0].split(", ")


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=400_000)
    p.add_argument("--window", type=int, default=600, help="WITHIN, in seconds")
    p.add_argument("--segments", type=int, default=10_000, help="x: events of a key per segment")
    p.add_argument("--files", type=int, default=20, help="micro-batches")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument(
        "--modulus", type=int, default=100, help="a condition passes 1 pair in this (rates)"
    )
    p.add_argument(
        "--drift",
        choices=["rates", "conditions"],
        default="rates",
        help="what trades places from segment to segment",
    )
    p.add_argument(
        "--multiple",
        type=int,
        default=MULTIPLE,
        help="conditions: a pair passes when its values add up to a multiple of this",
    )
    p.add_argument(
        "--operator",
        default="flatMapGroupsWithState",
        help="spark.sql.matchRecognize.streaming.operator (transformWithState: RocksDB state)",
    )
    args = p.parse_args()

    extra = {
        "spark.sql.shuffle.partitions": "2",
        OPERATOR: args.operator,
    }
    if args.operator == "transformWithState":
        extra["spark.sql.streaming.stateStore.providerClass"] = (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        )
    spark = session("drifting_rates_stream", extra=extra)
    folder = stream_files(spark, args.events, args.segments, args.files, args.drift, args.multiple)
    # A condition passes one pair of neighbours' rows in `modulus`, or (conditions) when
    # their values add up to a multiple of MULTIPLE.
    modulus = args.modulus if args.drift == "rates" else args.multiple
    query = QUERY.format(events="drift_stream", window=args.window).replace(
        ", 100) = 0", f", {modulus}) = 0"
    )
    # The trees per key, as the operator's line in flatMapGroupsWithState names them.
    _, _, _, plan = run(spark, folder, query, {OPERATOR: "flatMapGroupsWithState"})
    sides = {"adaptive": {}, "static: the pattern order": {MAX_TREES: "1"}}
    for t in other_trees(plan):
        sides[f"static: {t}"] = {FORCED_TREE: t.replace(" ⋈", "")}
    times: dict[str, list[float]] = {name: [] for name in sides}
    counts: dict[str, int] = {}
    moves = 0
    for _ in range(args.runs):
        for name, conf in sides.items():
            seconds, matches, moved, _ = run(spark, folder, query, conf)
            times[name].append(seconds)
            counts[name] = matches
            if name == "adaptive":
                moves = moved
    if len(set(counts.values())) != 1:
        raise SystemExit(f"the sides disagree: {counts}")
    median = {name: sorted(ts)[len(ts) // 2] for name, ts in times.items()}
    adaptive = median["adaptive"]
    rows = [
        {
            "side": name,
            "matches": counts[name],
            "median s": round(median[name], 2),
            "events/s": f"{args.events / median[name]:,.0f}",
            "against adaptive": f"{median[name] / adaptive:.2f}x",
            "moves": moves if name == "adaptive" else "-",
        }
        for name in sides
    ]
    report(
        f"A B C D over a stream of {args.events:,} events in {args.files} micro-batches, "
        f"{KEYS} keys, {args.drift} permuted every {args.segments:,} events of a key, WITHIN "
        f"{args.window} s, {args.operator}",
        rows,
    )


if __name__ == "__main__":
    main()
