"""Several SKIP TILL ANY MATCH patterns over one stream, planned together: a UNION ALL of
patterns with the same PARTITION BY and ORDER BY over one streaming view runs in one
stateful operator (one state per key for all patterns), and writes the rows the batch union
writes over the same rows, whatever the micro-batches; a union member one operator cannot
take (ALL ROWS PER MATCH here) gets its own operator beside the group. match_patterns()
over a streaming DataFrame is the same query.

Every stream ends with a flush row far in the future, in a partition of its own, that moves
the watermark past every other row (see streaming_harness).
"""

from __future__ import annotations

import datetime
import random

from result_compare import compare_rows
from streaming_harness import (
    FLUSH_ID,
    arrival_batches,
    assert_stream_equals_batch,
    run_batch,
    run_restarted,
)

EPOCH = datetime.datetime(2024, 1, 1)
SCHEMA = "id INT, part STRING, x INT, y INT, ts TIMESTAMP"
COLUMNS = ["id", "part", "x", "y", "ts"]


def _rows(n: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    rows, t = [], 0
    for i in range(1, n + 1):
        t += rng.choice([0, 1, 1, 2, 3])
        ts = EPOCH + datetime.timedelta(seconds=t)
        rows.append((i, rng.choice(["p", "q"]), rng.randint(0, 9), rng.randint(0, 9), ts))
    return rows


def _stream_and_batch(spark, tmp_path, rows, sql, seed=0):
    """The stream equals the batch query on `rows`: the stream's run and the batch rows."""
    return assert_stream_equals_batch(
        spark,
        tmp_path,
        SCHEMA,
        COLUMNS,
        rows,
        sql,
        time_of=lambda r: r[4].timestamp(),
        flush=(FLUSH_ID, "zz_flush", None, None, EPOCH + datetime.timedelta(days=30)),
        seed=seed,
        max_batch=10,
    )


def _stateful_operators(stream) -> int:
    return len(stream.progress[-1].get("stateOperators", []))


def _pattern(
    name,
    pattern,
    define,
    within="20",
    rows="ONE ROW PER MATCH",
    measures="A.id AS a_id, LAST(C.id) AS c_id",
):
    return f"""SELECT '{name}' AS pattern, * FROM events MATCH_RECOGNIZE (
        PARTITION BY part ORDER BY ts MEASURES {measures} {rows} SKIP TILL ANY MATCH
        PATTERN ({pattern}) WITHIN INTERVAL '{within}' SECOND DEFINE {define})"""


def test_patterns_of_one_stream_run_in_one_stateful_operator(spark, tmp_path):
    sql = " UNION ALL ".join(
        [
            _pattern("abc", "A B C", "A AS x > 6, B AS x < A.x, C AS x > B.x AND y > 4"),
            _pattern(
                "ac",
                "A C",
                "A AS x > 6, C AS x > B.x AND y > 4".replace(" > B.x AND", " > 3 AND"),
                within="10",
            ),
            _pattern("abd", "A B C", "A AS x > 6, B AS x < A.x, C AS y < 2", within="30"),
        ]
    )
    rows = _rows(160, 5)
    stream, expected = _stream_and_batch(spark, tmp_path, rows, sql, seed=5)
    assert len(expected) > 30
    assert {r[0] for r in expected} == {"abc", "ac", "abd"}
    assert _stateful_operators(stream) == 1
    metrics = [
        p["observedMetrics"]["match_recognize"]
        for p in stream.progress
        if "match_recognize" in p.get("observedMetrics", {})
    ]
    assert sum(m["matches"] for m in metrics) == len(expected)


def test_negations_closures_and_a_trailing_negation_in_one_stateful_operator(spark, tmp_path):
    sql = " UNION ALL ".join(
        [
            _pattern("neg", "A !N C", "A AS x > 6, N AS x = 0, C AS y > 5"),
            _pattern(
                "kleene",
                "A B+ C",
                "A AS x > 6, B AS x < A.x, C AS y > 5",
                measures="A.id AS a_id, count(B.*) AS c_id",
                within="8",
            ),
            _pattern("trailing", "A C !N", "A AS x > 6, C AS y > 5, N AS x = 9", within="12"),
        ]
    )
    rows = _rows(140, 8)
    stream, expected = _stream_and_batch(spark, tmp_path, rows, sql, seed=8)
    assert {r[0] for r in expected} == {"neg", "kleene", "trailing"}
    assert _stateful_operators(stream) == 1


def test_a_member_one_operator_cannot_take_gets_its_own(spark, tmp_path):
    all_rows = _pattern(
        "all",
        "A C",
        "A AS x > 6, C AS y > 5",
        rows="ALL ROWS PER MATCH",
        measures="A.id AS a_id, LAST(C.id) AS c_id",
    )
    sql = (
        "SELECT pattern, a_id, c_id FROM ("
        + all_rows
        + ") UNION ALL "
        + " UNION ALL ".join(
            f"SELECT pattern, a_id, c_id FROM ({p})"
            for p in [
                _pattern("ac", "A C", "A AS x > 6, C AS y > 5"),
                _pattern("abc", "A B C", "A AS x > 6, B AS x < A.x, C AS y > 5"),
            ]
        )
    )
    rows = _rows(100, 11)
    stream, expected = _stream_and_batch(spark, tmp_path, rows, sql, seed=11)
    # The ALL ROWS pattern is wrapped in a projection the group takes too, but its output is
    # not one row per match: it runs alone, the two others together.
    assert _stateful_operators(stream) == 2


def test_match_patterns_over_a_stream_equals_batch(spark, tmp_path):
    from spark_match_recognize import match_patterns_sql

    patterns = {
        "rise": {"pattern": "A B", "define": {"A": "x < 3", "B": "x > A.x + 4"}},
        "fall": {
            "pattern": "A B",
            "define": {"A": "x > 6", "B": "x < A.x - 4"},
            "within": "INTERVAL '8' SECOND",
        },
    }
    sql = match_patterns_sql(
        "events",
        patterns,
        partition_by="part",
        order_by="ts",
        measures={"a_id": "A.id", "b_id": "B.id"},
        strategy="SKIP TILL ANY MATCH",
        within="INTERVAL '15' SECOND",
    )
    rows = _rows(120, 13)
    stream, expected = _stream_and_batch(spark, tmp_path, rows, sql, seed=13)
    assert {r[0] for r in expected} == {"rise", "fall"}
    assert _stateful_operators(stream) == 1


def test_patterns_over_one_stream_in_operators_of_their_own_keep_their_rows(spark, tmp_path):
    # Two stateful operators over the same input, with only some columns read above them:
    # each must still write its own matches (Spark must not serve both from one shuffle).
    ac = _pattern("ac", "A C", "A AS x > 6, C AS y > 5")
    abc = _pattern("abc", "A B C", "A AS x > 6, B AS x < A.x, C AS y > 5")
    sql = f"SELECT pattern, a_id FROM ({ac}) UNION ALL SELECT pattern, a_id FROM ({abc})"
    spark.conf.set("spark.sql.matchRecognize.planPatternsTogether", "false")
    try:
        stream, expected = _stream_and_batch(spark, tmp_path, _rows(100, 11), sql, seed=11)
    finally:
        spark.conf.unset("spark.sql.matchRecognize.planPatternsTogether")
    assert {r[0] for r in expected} == {"ac", "abc"}
    assert _stateful_operators(stream) == 2


def _partial_matches(stream) -> int:
    return sum(
        metrics["partial_matches"]
        for p in stream.progress
        for name, metrics in p.get("observedMetrics", {}).items()
        if name.startswith("match_recognize")
    )


def test_patterns_over_one_stream_share_the_tree_nodes_they_have_alike(spark, tmp_path):
    # Three patterns whose pattern-order trees all start with the same (A B): over the
    # stream that node is evaluated once for the three, as in batch, each pattern still
    # keeping its own window.
    sql = " UNION ALL ".join(
        [
            _pattern("abc", "A B C", "A AS x > 5, B AS x < A.x, C AS y > 6"),
            _pattern("abd", "A B C", "A AS x > 5, B AS x < A.x, C AS y < 2", within="30"),
            _pattern("abe", "A B C", "A AS x > 5, B AS x < A.x, C AS x = 9", within="12"),
        ]
    )
    rows = _rows(160, 21)
    shared, expected = _stream_and_batch(spark, tmp_path, rows, sql, seed=21)
    assert {r[0] for r in expected} == {"abc", "abd", "abe"}
    assert _stateful_operators(shared) == 1

    # The stream's trees are the pattern order: so are the batch plan's under `trivial`.
    spark.conf.set("spark.sql.matchRecognize.joinOrder", "trivial")
    try:
        batch_plan = "\n".join(r[0] for r in spark.sql("EXPLAIN " + sql).collect())
    finally:
        spark.conf.unset("spark.sql.matchRecognize.joinOrder")
    (tmp_path / "no-rows").mkdir()
    spark.readStream.schema(SCHEMA).json(str(tmp_path / "no-rows")).withWatermark(
        "ts", "5 seconds"
    ).createOrReplaceTempView("events")
    stream_plan = spark.sql(sql)._jdf.queryExecution().analyzed().toString()
    # Leaves A, B and three C's, one (A B), three roots: 9 nodes for the trees' 3 x 5.
    sharing = "3 trees sharing nodes: 9 nodes evaluated for their 15"
    assert sharing in batch_plan, batch_plan
    assert sharing in stream_plan, stream_plan

    spark.conf.set("spark.sql.matchRecognize.planPatternsTogether", "false")
    try:
        alone, _ = _stream_and_batch(spark, tmp_path, rows, sql, seed=21)
    finally:
        spark.conf.unset("spark.sql.matchRecognize.planPatternsTogether")
    diff = compare_rows(alone.rows, expected, ordered=False)
    assert diff is None, diff
    # Each (A B) partial match is created once instead of three times.
    assert 0 < _partial_matches(shared) < _partial_matches(alone)


def _run_parts(spark, tmp_path, sql_of_part, parts):
    return run_restarted(spark, tmp_path, SCHEMA, COLUMNS, sql_of_part, parts)


SHARING = [
    _pattern("abc", "A B C", "A AS x > 5, B AS x < A.x, C AS y > 6"),
    _pattern("abd", "A B C", "A AS x > 5, B AS x < A.x, C AS y < 2", within="30"),
]


def test_shared_tree_nodes_restart_from_checkpoint_losing_and_repeating_nothing(spark, tmp_path):
    sql = " UNION ALL ".join(SHARING)
    rows = _rows(140, 23)
    batches = arrival_batches(rows, lambda r: r[4].timestamp(), 5.0, random.Random(23), 10)
    flush = [(FLUSH_ID, "zz_flush", None, None, EPOCH + datetime.timedelta(days=30))]
    cut = len(batches) // 2
    got, error = _run_parts(spark, tmp_path, [sql, sql], [batches[:cut], batches[cut:] + [flush]])
    assert error is None, error
    expected = run_batch(spark, SCHEMA, rows, sql)
    assert len(expected) >= 10
    diff = compare_rows(got, expected, ordered=False)
    assert diff is None, diff


def test_a_checkpoint_of_other_shared_trees_is_refused_by_name(spark, tmp_path):
    # The restarted query's patterns no longer share (A B): its state per key has another
    # layout, and the condition that changed is named instead of the state read wrongly.
    before = " UNION ALL ".join(SHARING)
    after = " UNION ALL ".join([SHARING[0], SHARING[1].replace("B AS x < A.x", "B AS x <= A.x")])
    rows = _rows(80, 29)
    batches = arrival_batches(rows, lambda r: r[4].timestamp(), 5.0, random.Random(29), 10)
    cut = len(batches) // 2
    _, error = _run_parts(spark, tmp_path, [before, after], [batches[:cut], batches[cut:]])
    assert error is not None
    assert "DEFINE or SUBSET changed" in str(error), str(error)[:2000]


# Conditions drawn per variable: patterns of a random group often start alike, so their
# pattern-order trees share leaves and nodes.
DRAWN = {
    "A": ["x > 5", "x < 3"],
    "B": ["x < A.x", "y > A.y"],
    "C": ["y > 6", "y < 2", "x = B.x"],
    "D": ["x > 7", "y <> A.y"],
}


def test_random_groups_sharing_tree_nodes_stream_equals_batch(spark, tmp_path):
    for g in range(2):
        rng = random.Random(3100 + g)
        members = []
        for i in range(rng.randint(3, 5)):
            names = "ABCD"[: rng.choice([2, 3, 3, 4])]
            define = ", ".join(f"{v} AS {rng.choice(DRAWN[v])}" for v in names)
            members.append(
                _pattern(
                    f"p{i}",
                    " ".join(names),
                    define,
                    within=rng.choice(["10", "20", "30"]),
                    measures="A.id AS a_id, B.id AS c_id",
                )
            )
        sql = " UNION ALL ".join(members)
        rows = _rows(120, 3200 + g)
        stream, _ = _stream_and_batch(spark, tmp_path / f"g{g}", rows, sql, seed=g)
        assert _stateful_operators(stream) == 1
