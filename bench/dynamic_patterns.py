"""Patterns kept in a table and changed while a stream runs (docs/streaming.md, "Patterns
kept in a table").

`--patterns` patterns live in a global temporary view (one row each: `A B C` with `A` a
value of its own, `B` above it, `C` below `B`); a feeder writes a JSON file of rows every
second (`--rate` rows a second over `--keys` keys, in event-time order, each file renamed
into place whole); the query, `MATCH_RECOGNIZE (... PATTERNS FROM global_temp.rules)`, runs
with a `--trigger`-second processing-time trigger into a parquet sink. Every
`--change-every` seconds `--changed` patterns are replaced by new ones under new names
(their start is then visible in the progress). At the end a row far in the future releases
everything, and the script prints:

- **pick-up**: for each change, the seconds from the view's replacement to the start of the
  first micro-batch that started the new patterns (the progress's `patterns_started`), and
  the same in trigger intervals (within one interval: the table is read as each micro-batch
  is planned);
- **cost of a change**: the median time and planning time of the micro-batches that took a
  change, beside those of the others;
- **no match lost or repeated**: for every pattern never changed, its rows in the sink
  against the batch query's over all the rows the feeder wrote, and for the patterns a
  change started, against the batch query's over the rows of the files read from the
  micro-batch that started them on (the file source's log in the checkpoint says which
  micro-batch read each file); 0 differences expected.

    .venv/bin/python bench/dynamic_patterns.py                      # 100 patterns, 10 a change
    .venv/bin/python bench/dynamic_patterns.py --seconds 200 --change-every 60
    .venv/bin/python bench/dynamic_patterns.py --seconds 200 --change-every 60 --any-match

With `--any-match` the patterns run under SKIP TILL ANY MATCH `WITHIN INTERVAL '2' SECOND`
(`B` within 5 above `A`, `C` more than 50 below `B`, about one match per `A` row).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import statistics
import threading
import time
from collections import Counter

from common import DATA, session

SCHEMA = "id LONG, k STRING, x INT, ts TIMESTAMP"
EPOCH = datetime.datetime(2024, 1, 1)
SHARED = "PARTITION BY k ORDER BY ts MEASURES FIRST(id) AS first_id, LAST(id) AS last_id"
# With --any-match: SKIP TILL ANY MATCH within 2 seconds, each pattern its own trees.
ANY_MATCH_SHARED = (
    "PARTITION BY k ORDER BY ts MEASURES A.id AS first_id, C.id AS last_id "
    "ONE ROW PER MATCH SKIP TILL ANY MATCH"
)
CLAUSES = {
    False: f"{SHARED} PATTERNS FROM global_temp.rules",
    True: f"{ANY_MATCH_SHARED} PATTERNS FROM global_temp.rules WITHIN INTERVAL '2' SECOND",
}
ANY_MATCH = False


def rule(name: str, value: int) -> tuple[str, str, str]:
    if ANY_MATCH:
        # About one match per A row: any combination counts, so the conditions are tighter.
        return (
            name,
            "A B C",
            f"A AS x = {value}, B AS x BETWEEN A.x + 1 AND A.x + 5, C AS x < B.x - 50",
        )
    return (name, "A B C", f"A AS x = {value}, B AS x > A.x, C AS x < B.x")


def replace_view(spark, rules: list[tuple[str, str, str]]) -> None:
    values = ", ".join(f"('{n}', '{p}', '{d}')" for n, p, d in rules)
    spark.sql(
        "CREATE OR REPLACE GLOBAL TEMP VIEW rules (name, pattern, define) AS "
        f"SELECT * FROM VALUES {values}"
    )


class Feeder(threading.Thread):
    """Writes a file of `rate` rows a second into `source` until stopped; keeps every row."""

    def __init__(self, source, rate: int, keys: int, seed: int) -> None:
        super().__init__(daemon=True)
        self.source, self.rate, self.keys = source, rate, keys
        self.rng = random.Random(seed)
        self.rows: list[tuple] = []
        self.stop_flag = threading.Event()

    def write(self, rows: list[tuple], name: str) -> None:
        tmp = self.source.parent / f".{name}"
        with tmp.open("w") as f:
            for r in rows:
                ts = r[3].strftime("%Y-%m-%d %H:%M:%S.%f")
                f.write(json.dumps({"id": r[0], "k": r[1], "x": r[2], "ts": ts}) + "\n")
        os.replace(tmp, self.source / name)

    def run(self) -> None:
        second = 0
        while not self.stop_flag.is_set():
            start = len(self.rows)
            batch = [
                (
                    start + i,
                    f"k{self.rng.randrange(self.keys)}",
                    self.rng.randrange(100),
                    EPOCH + datetime.timedelta(seconds=second + i / self.rate),
                )
                for i in range(self.rate)
            ]
            self.write(batch, f"part-{second:06d}.json")
            self.rows += batch
            second += 1
            self.stop_flag.wait(1.0)


def batch_rows(spark, rows: list[tuple], rules: list[tuple[str, str, str]]) -> Counter:
    spark.createDataFrame(rows, SCHEMA).createOrReplaceTempView("all_rows")
    replace_view(spark, rules)
    sql = f"SELECT * FROM all_rows MATCH_RECOGNIZE ({CLAUSES[ANY_MATCH]})"
    return Counter(tuple(r) for r in spark.sql(sql).collect())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patterns", type=int, default=100)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--change-every", type=float, default=30.0)
    parser.add_argument("--seconds", type=float, default=100.0)
    parser.add_argument("--trigger", type=float, default=5.0)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--any-match", action="store_true", help="the patterns under SKIP TILL ANY MATCH"
    )
    args = parser.parse_args()
    global ANY_MATCH
    ANY_MATCH = args.any_match

    spark = session("dynamic-patterns", extra={"spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    work = DATA / "dynamic_patterns"
    shutil.rmtree(work, ignore_errors=True)
    source = work / "src"
    source.mkdir(parents=True)
    rules = [rule(f"p{i}", i % 100) for i in range(args.patterns)]
    replace_view(spark, rules)
    spark.readStream.schema(SCHEMA).json(str(source)).withWatermark(
        "ts", "2 seconds"
    ).createOrReplaceTempView("events")
    feeder = Feeder(source, args.rate, args.keys, args.seed)
    feeder.start()
    query = (
        spark.sql(f"SELECT * FROM events MATCH_RECOGNIZE ({CLAUSES[ANY_MATCH]})")
        .writeStream.format("parquet")
        .option("path", str(work / "sink"))
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(processingTime=f"{args.trigger} seconds")
        .start()
    )
    started = time.time()
    changes = []  # (wall time, rows written before, new rules, names replaced)
    number = 0
    while time.time() - started < args.seconds:
        time.sleep(min(args.change_every, args.seconds - (time.time() - started)))
        if time.time() - started >= args.seconds - 1:
            break
        number += 1
        first = ((number - 1) * args.changed) % args.patterns
        replaced = {f"p{i}" for i in range(first, first + args.changed)}
        fresh = [
            rule(f"p{i}_v{number}", (i * 37 + number) % 100)
            for i in range(first, first + args.changed)
        ]
        rules = [
            r for r in rules if r[0] not in replaced and r[0].split("_")[0] not in replaced
        ] + fresh
        replace_view(spark, rules)
        changes.append((time.time(), len(feeder.rows), fresh, replaced))
        print(f"change {number} at {time.time() - started:.1f} s: {len(fresh)} patterns replaced")
    feeder.stop_flag.set()
    feeder.join()
    flush = (len(feeder.rows), "zz", 0, EPOCH + datetime.timedelta(days=30))
    feeder.write([flush], "part-flush.json")
    deadline = time.time() + 120
    while time.time() < deadline:
        query.processAllAvailable()
        if query.lastProgress and query.lastProgress["numInputRows"] == 0:
            break
    progress = list(query.recentProgress)
    query.stop()

    # Pick-up and cost.
    def started_time(p) -> float:
        return datetime.datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()

    def metrics(p) -> dict:
        found = p.get("observedMetrics", {}).get("match_recognize_patterns")
        return found.asDict() if hasattr(found, "asDict") else dict(found or {})

    took = []
    for when, _, _, _ in changes:
        later = [
            p
            for p in progress
            if started_time(p) >= when - 0.001 and metrics(p).get("patterns_started", 0)
        ]
        if later:
            took.append(later[0]["batchId"])
            delay = started_time(later[0]) - when
            print(
                f"  picked up by micro-batch {later[0]['batchId']} {delay:.2f} s after the change "
                f"({delay / args.trigger:.2f} trigger intervals)"
            )
        else:
            print("  change not picked up")
    first = progress[0]["durationMs"]
    print(
        f"first micro-batch (every pattern compiled): {first.get('triggerExecution', 0)} ms "
        f"(planning {first.get('queryPlanning', 0)} ms)"
    )
    with_change = [p for p in progress if p["batchId"] in took]
    others = [p for p in progress if p["batchId"] not in took and p["numInputRows"] > 0]

    def medians(ps, key):
        return statistics.median(p["durationMs"].get(key, 0) for p in ps) if ps else float("nan")

    for label, ps in (("micro-batches that took a change", with_change), ("the others", others)):
        print(
            f"{label}: {len(ps)}, median {medians(ps, 'triggerExecution'):.0f} ms "
            f"(planning {medians(ps, 'queryPlanning'):.0f} ms)"
        )

    # No match lost or repeated.
    written = Counter(tuple(r) for r in spark.read.parquet(str(work / "sink")).collect())
    by_pattern: dict[str, Counter] = {}
    for row, n in written.items():
        by_pattern.setdefault(row[0], Counter())[row] += n
    ever_changed = set().union(*(c[3] for c in changes)) if changes else set()
    initial = [rule(f"p{i}", i % 100) for i in range(args.patterns)]
    unchanged = [r for r in initial if r[0] not in ever_changed]
    expected = batch_rows(spark, feeder.rows, unchanged)
    got = sum((by_pattern.get(r[0], Counter()) for r in unchanged), Counter())
    differences = sum(((expected - got) + (got - expected)).values())
    print(
        f"patterns never changed: {len(unchanged)}, matches {sum(expected.values())} in batch, "
        f"{sum(got.values())} streamed, differences {differences}"
    )
    # The micro-batch each file was read in, from the file source's log in the checkpoint.
    read_in: dict[str, int] = {}
    for log in (work / "checkpoint" / "sources" / "0").glob("[0-9]*"):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                read_in[entry["path"].rsplit("/", 1)[1]] = entry["batchId"]
    rate = args.rate
    for number, ((_, _, fresh, _), batch_id) in enumerate(zip(changes, took, strict=False), 1):
        # Exactly the rows of the files read from the micro-batch that started the patterns.
        seen = [
            r for r in feeder.rows if read_in.get(f"part-{r[0] // rate:06d}.json", -1) >= batch_id
        ]
        names = {r[0] for r in fresh}
        expected = batch_rows(spark, seen, fresh)
        got = sum((by_pattern.get(n, Counter()) for n in names), Counter())
        differences = sum(((expected - got) + (got - expected)).values())
        print(
            f"patterns started by change {number}: {len(names)}, matches "
            f"{sum(expected.values())} in batch over the rows read from micro-batch "
            f"{batch_id} on, {sum(got.values())} streamed, differences {differences}"
        )
    spark.stop()


if __name__ == "__main__":
    main()
