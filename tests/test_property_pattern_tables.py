"""A stream over ``PATTERNS FROM table`` whose table changes at random while it runs: patterns
added, removed, changed and added again, the query restarted from its checkpoint at a random
point. The stream's output equals, pattern by pattern, the batch query of each version of
the pattern over the rows it was live for (the segments of rows between the change that
started it and the one that stopped it), under the standard semantics and under SKIP TILL
ANY MATCH.

Each segment's rows are all released (a row in a key of its own moves the watermark past
them) before the table changes, so that the rows a version saw are known exactly; the
patterns have a fixed length or a window shorter than the gap between segments, so every
match of a version's rows is decided before it stops.
"""

from __future__ import annotations

import datetime
import os
import random
import uuid
from pathlib import Path

import pytest

import test_pattern_tables as tables
from result_compare import compare_rows
from session_settings import settings
from streaming_harness import STATEFUL_OPERATORS, operator_settings

SEED = int(os.environ.get("SMR_PATTERN_TABLE_SEED", "20261201"))
SEGMENTS = 5
ROWS_PER_SEGMENT = 40
# Each name's versions: a change replaces the one live by the next.
POOL = {
    "rise": [
        ("A B C", "B AS x > PREV(x), C AS x > PREV(x)"),
        ("A B C", "B AS x >= PREV(x), C AS x > PREV(x) + 1"),
    ],
    "low": [("L", "L AS x < 2"), ("L", "L AS x < 3")],
    "peak": [("U D", "U AS x > 6, D AS x < 3"), ("U D", "U AS x > 7, D AS x < 2")],
    "dip": [("D U", "D AS x < 3, U AS x > 6"), ("D U V", "D AS x < 3, U AS x > 6, V AS x < U.x")],
    "flat": [("F G", "G AS x = PREV(x)"), ("F G H", "G AS x = PREV(x), H AS x <> G.x")],
    "ends": [
        ("(P | Q) R", "P AS x < 1, Q AS x > 8, R AS x = 4 OR x = 5"),
        ("(P | Q) R", "P AS x < 2, Q AS x > 7, R AS x = 5"),
    ],
}

# The same under SKIP TILL ANY MATCH: every version binds A first and Z last.
ANY_SHARED = """PARTITION BY part ORDER BY ts MEASURES A.id AS first_id, Z.id AS last_id
  ONE ROW PER MATCH SKIP TILL ANY MATCH"""
ANY_WITHIN = "WITHIN INTERVAL '5' SECOND"
ANY_POOL = {
    "fall": [("A Z", "A AS x > 6, Z AS x < A.x"), ("A Z", "A AS x > 7, Z AS x < A.x - 2")],
    "vee": [
        ("A B Z", "A AS x > 5, B AS x < A.x, Z AS x > B.x"),
        ("A B Z", "A AS x > 4, B AS x < A.x - 2, Z AS x > B.x + 1"),
    ],
    "run": [
        ("A B+ Z", "A AS x < 4, B AS x > A.x, Z AS x < A.x"),
        ("A B+ Z", "A AS x < 3, Z AS x > 7"),
    ],
    "fork": [
        ("A (B | C) Z", "A AS x = 5, B AS x < 3, C AS x > 7, Z AS x = A.x"),
        ("A (B | C) Z", "A AS x = 4, B AS x < 2, C AS x > 6, Z AS x <> A.x"),
    ],
    "pair": [("A Z", "A AS x < 2, Z AS x > 8"), ("A Z", "A AS x < 3, Z AS x > 6")],
    "tail": [("A B Z", "A AS x = 9, B AS x < 5, Z AS x < B.x"), ("A Z", "A AS x = 9, Z AS x = 0")],
}


class Semantics:
    """The patterns' pool, the query over the table of patterns, and one version's query."""

    def __init__(self, pool: dict, shared: str, after: str) -> None:
        self.pool, self.shared, self.after = pool, shared, after

    def table_query(self, view: str) -> str:
        return (
            f"SELECT * FROM stream_events MATCH_RECOGNIZE ({self.shared} "
            f"PATTERNS FROM {view} {self.after})"
        )

    def batch(self, spark, name: str, version: int, rows: list[tuple]) -> list[tuple]:
        pattern, define = self.pool[name][version]
        spark.createDataFrame(rows, tables.SCHEMA).createOrReplaceTempView("segment")
        return tables._collect(
            spark,
            f"SELECT '{name}' AS pattern, * FROM segment MATCH_RECOGNIZE ({self.shared} "
            f"PATTERN ({pattern}) {self.after} DEFINE {define})",
        )


SEMANTICS = {
    "standard": Semantics(POOL, tables.SHARED, ""),
    "any match": Semantics(ANY_POOL, ANY_SHARED, ANY_WITHIN),
}


def _segment(k: int, rng: random.Random) -> list[tuple]:
    """Segment k: rows a second apart from 100 s * k, ids from 1000 * k."""
    base = tables.EPOCH + datetime.timedelta(seconds=100 * k)
    return [
        (
            1000 * k + i,
            rng.choice(["p", "q", "r"]),
            rng.randint(0, 9),
            base + datetime.timedelta(seconds=i),
        )
        for i in range(ROWS_PER_SEGMENT)
    ]


def _release(k: int) -> tuple:
    """A row in a key of its own whose watermark (3 s behind) passes every row of segment k,
    and is still behind segment k + 1."""
    return (1000 * k + 999, "zz", 4, tables.EPOCH + datetime.timedelta(seconds=100 * k + 60))


def _schedule(rng: random.Random, pool: dict) -> list[dict[str, int]]:
    """The table during each segment: each live name and the number of its version.
    Between segments, up to two names are added (one may be a name removed before), one
    removed and one changed, at random."""
    live = {name: 0 for name in rng.sample(sorted(pool), 3)}
    tables_by_segment = [dict(live)]
    for _ in range(SEGMENTS - 1):
        live = dict(live)
        if live and rng.random() < 0.6:
            del live[rng.choice(sorted(live))]
        if live and rng.random() < 0.6:
            name = rng.choice(sorted(live))
            live[name] = (live[name] + 1) % len(pool[name])
        for name in rng.sample(sorted(set(pool) - set(live)), min(2, len(set(pool) - set(live)))):
            if rng.random() < 0.5:
                live[name] = rng.randrange(len(pool[name]))
        tables_by_segment.append(live)
    return tables_by_segment


def _lives(schedule: list[dict[str, int]]) -> list[tuple[str, int, int, int]]:
    """Each version's run: (name, version, first segment, segment after its last). A name
    whose version changes, or that leaves and comes back, starts a new run."""
    runs, open_runs = [], {}
    for k, table in enumerate([*schedule, {}]):
        for name, (version, start) in list(open_runs.items()):
            if table.get(name) != version:
                runs.append((name, version, start, k))
                del open_runs[name]
        for name, version in table.items():
            if name not in open_runs:
                open_runs[name] = (version, k)
    return runs


def _write(spark, view: str, pool: dict, table: dict[str, int]) -> None:
    tables._write_rules(
        spark, view, {name: (*pool[name][version], None) for name, version in table.items()}
    )


def _run(spark, tmp_path: Path, view: str, rng: random.Random, semantics: Semantics):
    pool = semantics.pool
    schedule = _schedule(rng, pool)
    segments = [_segment(k, rng) for k in range(SEGMENTS)]
    restart_at = rng.randrange(1, SEGMENTS)
    source, checkpoint, sink = tmp_path / "src", tmp_path / "chk", tmp_path / "sink"
    sql = semantics.table_query(view)
    _write(spark, view, pool, schedule[0])
    query = tables._start(spark, source, sql, checkpoint, sink)
    try:
        for k in range(SEGMENTS):
            if k > 0:
                _write(spark, view, pool, schedule[k])
            if k == restart_at:
                query.stop()
                query = tables._start(spark, source, sql, checkpoint, sink)
            tables._feed(query, source, segments[k])
            tables._feed(query, source, [_release(k)])
            tables._await_watermark(query, _release(k)[3] - datetime.timedelta(seconds=3))
    finally:
        query.stop()
    written = [tuple(r) for r in spark.read.parquet(str(sink)).collect() if r["part"] != "zz"]
    return schedule, segments, restart_at, written


def _check(spark, schedule, segments, written, semantics: Semantics) -> list[str]:
    problems = []
    by_name = tables._by_pattern(written)
    for name, version, start, end in _lives(schedule):
        rows = [r for s in segments[start:end] for r in s]
        expected = semantics.batch(spark, name, version, rows)
        # A run's matches start in its segments (the first id's thousands are the segment).
        got = [r for r in by_name.get(name, []) if start <= r[2] // 1000 < end]
        diff = compare_rows(got, expected, ordered=False)
        if diff is not None:
            problems.append(f"{name} v{version} over segments {start}-{end - 1}: {diff}")
    return problems


@pytest.mark.parametrize("semantics", list(SEMANTICS))
@pytest.mark.parametrize("operator", STATEFUL_OPERATORS)
def test_random_pattern_set_changes_give_each_version_its_batch_rows(
    spark, tmp_path, operator, semantics
):
    seed = SEED + (0 if operator == "flatMapGroupsWithState" else 1) + 2 * (semantics != "standard")
    view = f"global_temp.mr_rules_{uuid.uuid4().hex[:8]}"
    try:
        with settings(spark, operator_settings(operator)):
            schedule, segments, restart_at, written = _run(
                spark, tmp_path, view, random.Random(seed), SEMANTICS[semantics]
            )
    finally:
        spark.sql(f"DROP VIEW IF EXISTS {view}")
    problems = _check(spark, schedule, segments, written, SEMANTICS[semantics])
    assert not problems, (
        f"seed {seed}, restarted before segment {restart_at}, tables {schedule}:\n"
        + "\n".join(problems)
    )
    runs = _lives(schedule)
    assert len(runs) > len(schedule[0]), f"seed {seed}: the table never changed: {schedule}"
    assert len(written) > 10, f"seed {seed}: {len(written)} matches exercise too little"
