"""Trees per key (spark.sql.matchRecognize.treesPerKey.*), through spark.sql(): over keys of
two opposite rate profiles a SKIP TILL ANY MATCH pattern run in one pass gets a second tree,
EXPLAIN and explain_pattern() say so, every key runs the tree its first rows make cheapest
(counted in the operator's metrics), and the rows equal one tree's and the join operators'
whatever the prefix; over keys alike, or with treesPerKey.max = 1, one tree runs them all.
"""

from __future__ import annotations

import pytest

from spark_match_recognize import explain_pattern, operator_metrics

EXECUTION = "spark.sql.matchRecognize.cepExecution"
MAX_TREES = "spark.sql.matchRecognize.treesPerKey.max"
PREFIX_ROWS = "spark.sql.matchRecognize.treesPerKey.prefixRows"
KEYS = 8
ROWS_PER_KEY = 500

QUERY = """
SELECT * FROM {view} MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, B.ts AS b_ts, C.ts AS c_ts
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C)
  WITHIN INTERVAL '200' SECOND
  DEFINE A AS kind = 'A',
         B AS kind = 'B' AND pmod(B.v + A.v, 20) = 0,
         C AS kind = 'C' AND pmod(C.v + B.v, 20) = 0
)"""


def _events(spark, view: str, opposite: bool) -> None:
    # Even keys: A on 2 % of the rows, C on 48 %; odd keys (when `opposite`) the reverse.
    flip = "k % 2 = 1" if opposite else "false"
    spark.sql(f"""
        SELECT k, timestamp_seconds(t) AS ts,
               CASE WHEN {flip} THEN
                      CASE WHEN h < 2 THEN 'C' WHEN h < 52 THEN 'B' ELSE 'A' END
                    ELSE
                      CASE WHEN h < 2 THEN 'A' WHEN h < 52 THEN 'B' ELSE 'C' END
               END AS kind,
               CAST(pmod(hash(id, 7), 1000) AS INT) AS v
        FROM (SELECT id, id % {KEYS} AS k, id DIV {KEYS} AS t, pmod(hash(id, 3), 100) AS h
              FROM range({KEYS * ROWS_PER_KEY}))""").createOrReplaceTempView(view)


@pytest.fixture(scope="module")
def views(spark):
    _events(spark, "opposite_keys", opposite=True)
    _events(spark, "alike_keys", opposite=False)
    yield
    for v in ("opposite_keys", "alike_keys"):
        spark.catalog.dropTempView(v)


def _rows(spark, sql: str, **conf: str):
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        df = spark.sql(sql)
        rows = sorted(tuple(r) for r in df.collect())
        tree_ops = [op for op in operator_metrics(df) if op.operator == "TreeMatchExec"]
        return rows, tree_ops
    finally:
        for k in conf:
            spark.conf.unset(k)


def test_opposite_keys_run_two_trees_with_the_rows_of_one(spark, views):
    sql = QUERY.format(view="opposite_keys")
    spark.conf.set(EXECUTION, "tree")
    try:
        plan = spark.sql(f"EXPLAIN {sql}").collect()[0][0]
        assert "trees per key:" in plan, plan
        spark.conf.set(MAX_TREES, "1")
        one_tree_plan = spark.sql(f"EXPLAIN {sql}").collect()[0][0]
        spark.conf.unset(MAX_TREES)
        assert "trees per key" not in one_tree_plan, one_tree_plan

        report = explain_pattern(spark, sql).reports[0]
        per_key = report.trees_per_key
        assert len(per_key["trees"]) == 1, per_key
        assert per_key["trees"][0]["tree"] != report.alternatives[0].tree
        assert per_key["cost_per_key"] * 1.25 <= per_key["cost_one_tree"], per_key
        assert 0.3 < per_key["own_tree_sampled_share"] < 0.7, per_key
        assert "trees per key: the tree above for" in str(explain_pattern(spark, sql))

        # Keys end before 1,000 rows (the default prefix): chosen at the key's end; with a
        # prefix of 50 rows, chosen while the key goes on.
        rows, ops = _rows(spark, sql)
        short_prefix, short_ops = _rows(spark, sql, **{PREFIX_ROWS: "50"})
        one_tree, one_ops = _rows(spark, sql, **{MAX_TREES: "1"})
        joins, _ = _rows(spark, sql, **{EXECUTION: "joins"})
    finally:
        spark.conf.unset(EXECUTION)
    assert len(rows) > 100
    assert rows == one_tree == joins == short_prefix
    for run in (ops, short_ops):
        (op,) = run
        per_tree = {op.labels[k]: v for k, v in op.metrics.items() if k.startswith("keysTree")}
        assert len(per_tree) == 2, per_tree
        # Each profile's keys run their own tree (groups are keys and time slices: a
        # slice's rows from before its start, where no match can begin, make a group too).
        assert min(per_tree.values()) >= KEYS // 2, per_tree

    # Fewer partial matches than the one tree built for the average.
    def created(op):
        return op.metrics["partialMatches"]

    assert created(ops[0]) < created(one_ops[0]), (created(ops[0]), created(one_ops[0]))


def test_keys_alike_run_one_tree(spark, views):
    sql = QUERY.format(view="alike_keys")
    spark.conf.set(EXECUTION, "tree")
    try:
        plan = spark.sql(f"EXPLAIN {sql}").collect()[0][0]
        assert "trees per key" not in plan, plan
        assert explain_pattern(spark, sql).reports[0].trees_per_key == {}
    finally:
        spark.conf.unset(EXECUTION)


def test_the_settings_are_checked(spark):
    from pyspark.errors import IllegalArgumentException

    for key, bad in (
        (MAX_TREES, "0"),
        (MAX_TREES, "9"),
        (PREFIX_ROWS, "1"),
        ("spark.sql.matchRecognize.treesPerKey.minGain", "0.5"),
    ):
        with pytest.raises(IllegalArgumentException):
            spark.conf.set(key, bad)


KEY_TREES = "spark.sql.matchRecognize.internal.keyTrees"

MOVING = """
SELECT * FROM (SELECT k, timestamp_seconds(t) AS ts, t, kind, v FROM moving_keys)
MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.t AS a, B.t AS b, C.t AS c{measures}
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN ({pattern})
  {within}
  DEFINE A AS kind = 'A', B AS kind = 'B' AND B.v > A.v, C AS kind = 'C' AND C.v >= B.v{more}
)"""


@pytest.mark.parametrize(
    "pattern, within, measures",
    [
        ("A B C", "WITHIN 15 ROWS", ""),
        ("A B !X C", "WITHIN 30 ROWS", ""),
        ("A B C !X", "WITHIN INTERVAL '20' SECOND", ""),
        ("A K+ B C", "WITHIN INTERVAL '12' SECOND", ", COUNT(K.t) AS ks"),
    ],
)
def test_keys_moving_between_trees_lose_and_repeat_no_match(spark, pattern, within, measures):
    """A key whose rates call for another tree moves to it at a row position: the matches
    starting before come from the tree it leaves (which reads on until their windows have
    passed), the others from the next. Forced here (internal.keyTrees) with short prefixes,
    so that keys move every few rows, on timestamps with ties."""
    import random

    from pyspark.sql import Row

    rng = random.Random(5)
    rows = [
        Row(k=k, t=t, kind=rng.choice("ABCX"), v=rng.randint(0, 9))
        for k in range(5)
        for t in sorted(rng.randint(0, 400) for _ in range(150))
    ]
    spark.createDataFrame(rows, "k int, t long, kind string, v int").createOrReplaceTempView(
        "moving_keys"
    )
    more = "".join(
        d
        for v, d in (
            ("X", ", X AS kind = 'X' AND X.v > 6"),
            ("K", ", K AS kind = 'X' AND K.v <= 6"),
        )
        if v in pattern
    )
    sql = MOVING.format(pattern=pattern, within=within, measures=measures, more=more)
    try:
        expected, _ = _rows(spark, sql, **{EXECUTION: "joins"})
        assert expected
        moves = 0
        for prefix in ("2", "3", "5", "1000"):
            got, ops = _rows(
                spark,
                sql,
                **{EXECUTION: "tree", KEY_TREES: "(C B A); ((B C) A)", PREFIX_ROWS: prefix},
            )
            assert got == expected, (prefix, len(got), len(expected))
            (op,) = ops
            moves += op.metrics["treeMoves"]
            assert prefix != "1000" or op.metrics["treeMoves"] == 0
        assert moves > 0
    finally:
        spark.catalog.dropTempView("moving_keys")


DRIFT = """
SELECT * FROM drifting_keys MATCH_RECOGNIZE (
  PARTITION BY k ORDER BY ts
  MEASURES A.ts AS a_ts, D.ts AS d_ts
  ONE ROW PER MATCH
  SKIP TILL ANY MATCH
  PATTERN (A B C D)
  WITHIN INTERVAL '60' SECOND
  DEFINE A AS kind = 'A',
         B AS kind = 'B' AND pmod(B.v + A.v, 10) = 0,
         C AS kind = 'C' AND pmod(C.v + B.v, 10) = 0,
         D AS kind = 'D' AND pmod(D.v + C.v, 10) = 0
)"""


DRIFT_ROWS = """
        SELECT k, timestamp_seconds(t) AS ts,
               CASE WHEN h < 2 THEN rare
                    ELSE element_at(filter(array('A', 'B', 'C', 'D'), x -> x != rare),
                                    CAST(pmod(h, 3) AS INT) + 1) END AS kind,
               CAST(pmod(hash(id, 7), 100) AS INT) AS v
        FROM (SELECT id, k, t, h, substr('ADBC', CAST(pmod(t DIV 200, 4) AS INT) + 1, 1) AS rare
              FROM (SELECT id, id % 4 AS k, id DIV 4 AS t, pmod(hash(id, 3), 100) AS h
                    FROM range(9600)))"""


def test_keys_whose_rates_drift_move_to_the_trees_made_for_them(spark):
    """Each key's rare variable changes every 200 rows (A, D, B, C, ...); the sample reads
    a key's first rows only, which show the rates moving: trees are kept ready for each
    variable being rare, and keys move between them as they go, with the rows of one tree."""
    spark.sql(DRIFT_ROWS).createOrReplaceTempView("drifting_keys")
    conf = {
        EXECUTION: "tree",
        PREFIX_ROWS: "100",
        "spark.sql.matchRecognize.statistics.sampleRows": "1000",
    }
    try:
        for k, v in conf.items():
            spark.conf.set(k, v)
        plan = spark.sql(f"EXPLAIN {DRIFT}").collect()[0][0]
        assert "for rates the sample shows moving" in plan, plan
        report = explain_pattern(spark, DRIFT).reports[0]
        assert any(t["for_drift"] for t in report.trees_per_key["trees"]), report.trees_per_key
        rows, ops = _rows(spark, DRIFT)
        one_tree, _ = _rows(spark, DRIFT, **{MAX_TREES: "1"})
        joins, _ = _rows(spark, DRIFT, **{EXECUTION: "joins"})
    finally:
        for k in conf:
            spark.conf.unset(k)
        spark.catalog.dropTempView("drifting_keys")
    assert rows and rows == one_tree == joins
    (op,) = ops
    assert op.metrics["treeMoves"] > 0
    # What the keys chose by: every row of a kind is admitted by its variable's own condition,
    # once per time slice that reads it (a slice reads on past its end to finish the matches
    # starting in it: those rows count again, and only those).
    kinds = {
        r["kind"]: r["n"]
        for r in spark.sql(
            f"SELECT kind, count(*) AS n FROM ({DRIFT_ROWS}) GROUP BY kind"
        ).collect()
    }
    admitted = {v: op.metrics[f"rows_{v}"] for v in "ABCD"}
    assert all(admitted[v] >= kinds[v] for v in "ABCD"), (admitted, kinds)
    read_again = op.metrics["numInputRows"] - sum(kinds.values())
    assert sum(admitted.values()) - sum(kinds.values()) <= read_again, (admitted, kinds)
    # A pair of neighbours passes when the values add up to a multiple of 10: 1 pair in 10.
    for a, b in ("AB", "BC", "CD"):
        tested, passed = op.metrics[f"pairs_tested_{a}_{b}"], op.metrics[f"pairs_passed_{a}_{b}"]
        assert tested > 1000, (a, b, tested)
        assert 0.05 < passed / tested < 0.15, (a, b, passed, tested)
