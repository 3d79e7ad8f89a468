"""Writes the streaming checkpoints that tests/test_streaming_checkpoint_formats.py restarts,
so that a checkpoint an earlier release wrote is proven to restore in this one.

Each fixture folder (``tests/checkpoints/<folder>/``) holds one sub-folder per query below:
``source/`` (the JSON files of the micro-batches run so far), ``checkpoint/`` (the query's
checkpoint, stopped there, its state holding partial matches, matches held by a negation
and rows waiting for the watermark) and ``fixture.json`` (the query, the rows delivered
and still to deliver, and the rows written before the stop). The queries:

- ``any_match``: SKIP TILL ANY MATCH with a closure, a trailing negation, PREV and
  MATCH_NUMBER(), the state whose layout changed from format 4 (Java serialization) to
  format 5, and in ``transformWithState`` to format 6 (kept entry by entry) and format 7
  (what each call added in one entry);
- ``standard``: the standard semantics (format 2; in ``transformWithState``, format 8: rows
  in entries of what each call released).

With ``--pattern-table`` the queries are those of ``PATTERN_TABLE``: ``PATTERNS FROM`` a
view of two patterns (``fixture.json`` lists them) under SKIP TILL ANY MATCH
(``patterns_any_match``) and the standard semantics (``patterns_standard``), a key's state
holding each pattern's own state (``PatternSetState`` layout 1).

With ``--trees-per-key`` the queries are those of ``TREES_PER_KEY``: SKIP TILL ANY MATCH
sequences (``any_match`` with a trailing negation, ``any_match_sequence`` with many matches)
whose keys move among trees every few rows (forced by a test setting, which ``fixture.json``
lists), so the state stopped holds each key's trees, the tree it runs and the one it is
leaving (the ``PKEY`` section).

The source is read with ``fileNameOnly``, so a test may restart a copy of the folder
anywhere. ``spark.sql.shuffle.partitions`` is 2 to keep the state small. With
``--operator transformWithState`` the queries run in Spark's ``transformWithState`` (the
RocksDB state store), and ``fixture.json`` lists the settings a restart needs. With
``--late-rows`` as well they keep late rows (``streaming.lateRowsKept``) under a time to live
(``streaming.stateTtlMs``, too long to end a key here), and one row delivered before the stop
is late: ``fixture.json`` lists it under ``late``.

Regenerate, from the repository root:

- with this build: ``.venv/bin/python dev/write_checkpoint_fixtures.py tests/checkpoints/format-5``,
  ``... --operator transformWithState tests/checkpoints/format-8``,
  ``... --operator transformWithState tests/checkpoints/transform-with-state`` and
  ``... --operator transformWithState --late-rows
  tests/checkpoints/transform-with-state-late-rows``; ``... --trees-per-key
  tests/checkpoints/trees-per-key`` and ``... --trees-per-key --operator transformWithState
  tests/checkpoints/trees-per-key-transform-with-state`` (likewise
  ``tests/checkpoints/trees-per-key-pairs`` and ``trees-per-key-pairs-transform-with-state``,
  ``trees-per-key-sequence``, ``trees-per-key-leaves`` and their ``-transform-with-state``);
  ``... --pattern-table tests/checkpoints/pattern-table`` and ``... --pattern-table
  --operator transformWithState tests/checkpoints/pattern-table-transform-with-state``;
- with a previous release: build its jar in a scratch worktree (``git worktree add
  /tmp/old <commit> && (cd /tmp/old && ./dev/sbt spark43/package)``) and run
  ``SPARK_MATCH_RECOGNIZE_JAR=/tmp/old/target/spark-match-recognize-spark4.3_2.13-<version>.jar
  .venv/bin/python dev/write_checkpoint_fixtures.py tests/checkpoints/format-4``.

A fixture is written once, by the build whose state format it is named after, and never
rewritten: ``format-4`` by the jar of commit 72acdff (the last to write format 4),
``format-5`` by the commit that introduced format 5, ``transform-with-state`` (formats 2 and
5 in ``transformWithState``) by the commit that introduced that operator,
``transform-with-state-late-rows`` by the commit that introduced kept late rows, ``format-6``
(SKIP TILL ANY MATCH kept entry by entry in ``transformWithState``) by the commit that
introduced format 6, ``format-7`` (what each call added in one entry) by the commit that
introduced format 7, ``format-8`` (standard semantics' rows in entries, beside format 7)
by the commit that introduced format 8, ``trees-per-key`` and
``trees-per-key-transform-with-state`` (formats 5 and 7 with a ``PKEY`` section) by the
commit that committed them, after the one that introduced trees per key over a stream, and
``trees-per-key-pairs`` and ``trees-per-key-pairs-transform-with-state`` (the same with the
``PAIR`` section of the pairs' pass rates) by the commit after the one that introduced it,
``trees-per-key-sequence`` and ``trees-per-key-sequence-transform-with-state`` (adding
``any_match_sequence``, whose keys' leaves did not keep every row: no ``LEAF`` section; with
``--prefix-rows 24``, so that some keys are between moves at the stop) by the jar of commit
26ce647, the last before leaves were kept, and ``trees-per-key-leaves`` and
``trees-per-key-leaves-transform-with-state`` (the ``LEAF`` section) by the commit that
introduced it; ``pattern-table`` and ``pattern-table-transform-with-state`` by the commit
that committed them, the first to run SKIP TILL ANY MATCH patterns of a table over a stream.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "python"))

from streaming_harness import (  # noqa: E402
    FLUSH_ID,
    FLUSH_PART,
    arrival_batches,
    create_pattern_view,
    run_from_checkpoint,
    write_batches,
)

EPOCH = datetime.datetime(2024, 1, 1)
SCHEMA = "id INT, part STRING, x INT, y INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "x", "y", "ts"]
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"

QUERIES = {
    "any_match": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, count(B.*) AS nb, LAST(B.id) AS b_last, C.id AS c_id,
           MATCH_NUMBER() AS n
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B+ C !N) WITHIN INTERVAL '20' SECOND
  DEFINE A AS x > 5, B AS x < A.x, C AS y > 5 AND x > PREV(x), N AS x = 9)""",
    "standard": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES FIRST(A.id) AS a_id, count(*) AS n, MATCH_NUMBER() AS m
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERN (A B+ C) WITHIN INTERVAL '20' SECOND
  DEFINE A AS x > 5, B AS x < PREV(x), C AS x > PREV(x))""",
}

# Keys moving between two trees every four rows, whatever the rates: the state stopped holds
# keys part-way through a move.
TREES_PER_KEY = {
    "any_match": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, B.id AS b_id, C.id AS c_id
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B C !N) WITHIN INTERVAL '20' SECOND
  DEFINE A AS x > 5, B AS x < A.x, C AS y > B.y, N AS x = 9)""",
    # Many matches, and a tree ((A B) C) whose B rows a tree that only probes them never kept
    # before leaves were kept: a key moving off it just after a restart needs them.
    "any_match_sequence": """
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, B.id AS b_id, C.id AS c_id
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERN (A B C) WITHIN INTERVAL '20' SECOND
  DEFINE A AS x > 2, B AS x < A.x, C AS y > B.y)""",
}
TREES_PER_KEY_SETTINGS = {
    "spark.sql.matchRecognize.internal.keyTrees": "(A (B C)); ((A C) B)",
    "spark.sql.matchRecognize.treesPerKey.prefixRows": "4",
}

# The patterns of a table (a global temporary view the fixture lists, created again to
# restart it): one query per semantics, each pattern with its own state in a key's.
PATTERN_VIEW = "mr_fixture_patterns"
PATTERN_TABLE = {
    "patterns_any_match": f"""
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES A.id AS a_id, LAST(B.id) AS b_last, C.id AS c_id, MATCH_NUMBER() AS n
  ONE ROW PER MATCH SKIP TILL ANY MATCH
  PATTERNS FROM global_temp.{PATTERN_VIEW} WITHIN INTERVAL '20' SECOND)""",
    "patterns_standard": f"""
SELECT * FROM events MATCH_RECOGNIZE (
  PARTITION BY part ORDER BY ts
  MEASURES FIRST(A.id) AS a_id, count(*) AS n, MATCH_NUMBER() AS m
  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
  PATTERNS FROM global_temp.{PATTERN_VIEW} WITHIN INTERVAL '20' SECOND)""",
}
PATTERN_ROWS = {
    "patterns_any_match": [
        [
            "closure",
            "A B+ C !N",
            "A AS x > 5, B AS x < A.x, C AS y > 5 AND x > PREV(x), N AS x = 9",
        ],
        ["sequence", "A B C", "A AS x > 6, B AS x < A.x, C AS y > B.y"],
    ],
    "patterns_standard": [
        ["vee", "A B+ C", "A AS x > 5, B AS x < PREV(x), C AS x > PREV(x)"],
        ["pair", "A B", "A AS x < 3, B AS y > 6"],
    ],
}


# A row of key p from the data's first seconds, delivered with the last batch before the
# stop: by then p's rows are matched well past it.
LATE_ROW = (61, "p", 9, 9, EPOCH + datetime.timedelta(seconds=1))


def rows_and_batches() -> tuple[list[list[tuple]], list[list[tuple]]]:
    """60 rows of two keys, one to three seconds apart, in micro-batches up to 5 s out of
    order: the first half of the batches before the stop, the rest and a flush row after."""
    rng = random.Random(4)
    rows, t = [], 0
    for i in range(1, 61):
        t += rng.choice([1, 1, 2, 3])
        rows.append(
            (
                i,
                rng.choice("pq"),
                rng.randint(0, 9),
                rng.randint(0, 9),
                EPOCH + datetime.timedelta(seconds=t),
            )
        )
    batches = arrival_batches(rows, lambda r: r[4].timestamp(), 5, rng, 6)
    cut = len(batches) // 2
    flush = (FLUSH_ID, FLUSH_PART, None, None, EPOCH + datetime.timedelta(seconds=FLUSH_ID))
    return batches[:cut], batches[cut:] + [[flush]]


def to_json(batches: list[list[tuple]]) -> list[list[list]]:
    return [
        [
            [v.strftime(TIME_FORMAT) if isinstance(v, datetime.datetime) else v for v in r]
            for r in batch
        ]
        for batch in batches
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "folder", type=Path, help="the fixture folder, e.g. tests/checkpoints/format-5"
    )
    parser.add_argument(
        "--operator",
        choices=["flatMapGroupsWithState", "transformWithState"],
        default="flatMapGroupsWithState",
        help="Spark's stateful operator the queries run in",
    )
    parser.add_argument(
        "--late-rows",
        action="store_true",
        help="keep late rows under a time to live (transformWithState), one row being late",
    )
    parser.add_argument(
        "--trees-per-key",
        action="store_true",
        help="one SKIP TILL ANY MATCH query whose keys move between trees every few rows",
    )
    parser.add_argument(
        "--prefix-rows",
        type=int,
        default=4,
        help="with --trees-per-key, the rows between two choices of a key's tree, times four",
    )
    parser.add_argument(
        "--pattern-table",
        action="store_true",
        help="the PATTERNS FROM queries, under each semantics, over a view of two patterns",
    )
    args = parser.parse_args()
    folder = args.folder
    settings = (
        {
            "spark.sql.matchRecognize.streaming.operator": "transformWithState",
            "spark.sql.streaming.stateStore.providerClass": (
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
            ),
        }
        if args.operator == "transformWithState"
        else {}
    )
    if args.late_rows:
        settings["spark.sql.matchRecognize.streaming.lateRowsKept"] = "5"
        settings["spark.sql.matchRecognize.streaming.stateTtlMs"] = str(10**9)
    queries = QUERIES
    if args.trees_per_key:
        settings.update(TREES_PER_KEY_SETTINGS)
        settings["spark.sql.matchRecognize.treesPerKey.prefixRows"] = str(args.prefix_rows)
        queries = TREES_PER_KEY
    if args.pattern_table:
        queries = PATTERN_TABLE
    os.environ["TZ"] = "UTC"
    time.tzset()

    from pyspark.sql import SparkSession

    from spark_match_recognize import configure

    spark = configure(
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for key, value in settings.items():
        spark.conf.set(key, value)
    before, after = rows_and_batches()
    late = [LATE_ROW] if args.late_rows else []
    before[-1] = before[-1] + late
    for name, sql in queries.items():
        target = folder / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        write_batches(target / "source", COLUMNS, before)
        patterns = PATTERN_ROWS.get(name)
        if patterns:
            create_pattern_view(spark, PATTERN_VIEW, patterns)
        with tempfile.TemporaryDirectory() as sink:
            written = run_from_checkpoint(
                spark, SCHEMA, sql, target / "source", target / "checkpoint", Path(sink) / "out"
            )
        fixture = {
            "sql": sql.strip(),
            "schema": SCHEMA,
            "columns": COLUMNS,
            "before": to_json(before),
            "after": to_json(after),
            "written": sorted([list(r) for r in written], key=str),
            "spark": spark.version,
            "settings": settings,
            "late": to_json([late])[0],
        }
        if patterns:
            # The view to create before a restart, and where each row's first id is (after
            # the pattern's name and the key).
            fixture.update(patterns=patterns, first_id=2)
        (target / "fixture.json").write_text(json.dumps(fixture, indent=1) + "\n")
        print(f"{target}: {len(written)} rows written before the stop", file=sys.stderr)
    spark.stop()


if __name__ == "__main__":
    main()
