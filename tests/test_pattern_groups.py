"""Several SKIP TILL ANY MATCH patterns over one input, planned together
(spark.sql.matchRecognize.planPatternsTogether), through spark.sql() and match_patterns():
the rows are those of each pattern planned alone, whatever the patterns share (leaf
conditions, sub-trees, nothing) and whatever windows, negations or closures they have;
EXPLAIN shows one scan, one shuffle and one one-pass operator for the group; a union the
rule cannot take (other inputs, other keys, a WHERE above a pattern, WITHIN n ROWS) is
planned pattern by pattern, with the same rows.
"""

from __future__ import annotations

import random
import re

import pytest

from result_compare import compare_rows

TOGETHER = "spark.sql.matchRecognize.planPatternsTogether"


@pytest.fixture(scope="module")
def grouped_events(spark):
    rng = random.Random(41)
    rows = []
    for k in ("k1", "k2", "k3"):
        t = 0
        for _ in range(160):
            t += rng.choice([0, 1, 1, 2, 3])  # ORDER BY peers share a second
            rows.append((k, t, rng.choice("abcdx"), rng.randint(0, 9)))
    events = spark.createDataFrame(rows, "k string, t long, e string, v int").selectExpr(
        "k", "timestamp_seconds(t) AS ts", "t", "e", "v"
    )
    events.createOrReplaceTempView("grp")
    events.createOrReplaceTempView("grp_again")
    spark.createDataFrame(rows[:200], "k string, t long, e string, v int").selectExpr(
        "k", "timestamp_seconds(t) AS ts", "t", "e", "v"
    ).createOrReplaceTempView("grp_other")
    yield events
    for view in ("grp", "grp_again", "grp_other"):
        spark.catalog.dropTempView(view)


def _pattern(
    name,
    pattern,
    define,
    *,
    within="8",
    table="grp",
    partition="PARTITION BY k",
    measures="FIRST(A.t) AS first_t, LAST(C.t) AS last_t",
    where="",
):
    return f"""SELECT '{name}' AS pattern, * FROM {table} MATCH_RECOGNIZE (
        {partition} ORDER BY ts MEASURES {measures}
        SKIP TILL ANY MATCH PATTERN ({pattern}) WITHIN INTERVAL '{within}' SECOND
        DEFINE {define}) {where}"""


ABC = "A AS e = 'a', B AS e = 'b', C AS e = 'c' AND C.v > B.v"
AC = "A AS e = 'a', C AS e = 'c'"
ADC = "A AS e = 'a', D AS e = 'd', C AS e = 'c'"


def _rows(spark, sql, together: bool):
    spark.conf.set(TOGETHER, str(together).lower())
    try:
        return [tuple(r) for r in spark.sql(sql).collect()]
    finally:
        spark.conf.unset(TOGETHER)


def _plan(spark, sql) -> str:
    return _executed(spark.sql(sql))


def _executed(df) -> str:
    """The physical plan (the final one once adaptive execution has run it)."""
    return df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]


def _same_rows_both_ways(spark, sql):
    together = _rows(spark, sql, True)
    alone = _rows(spark, sql, False)
    assert alone, "the case must have matches"
    diff = compare_rows(together, alone, False)
    assert diff is None, diff
    return together


def test_three_patterns_run_in_one_pass_with_the_rows_of_each_alone(spark, grouped_events):
    sql = " UNION ALL ".join(
        [
            _pattern("p1", "A B C", ABC),
            _pattern("p2", "A C", AC, within="5"),
            _pattern("p3", "A D C", ADC, within="10"),
        ]
    )
    rows = _same_rows_both_ways(spark, sql)
    assert {r[0] for r in rows} == {"p1", "p2", "p3"}
    plan = _plan(spark, sql)
    assert plan.count("CepTreeMatch") == 1, plan
    assert plan.count("Exchange") == 1, plan
    assert "pattern 1: " in plan and "pattern 3: " in plan, plan
    # A, C (and whatever the trees have alike) once for the three trees.
    assert "3 trees sharing nodes: " in plan, plan


def test_each_pattern_keeps_its_own_window_on_a_shared_sub_tree(spark, grouped_events):
    # A C within 3 s and A C D within 12 s share A and C (and the join of A and C when
    # both trees build it): the shorter window must still cut the first pattern's matches.
    sql = " UNION ALL ".join(
        [
            _pattern("short", "A C", AC, within="3"),
            _pattern("long", "A C D", AC + ", D AS e = 'd'", within="12"),
        ]
    )
    rows = _same_rows_both_ways(spark, sql)
    # In pattern order, both trees join A and C first: one node for both patterns.
    spark.conf.set("spark.sql.matchRecognize.joinOrder", "trivial")
    try:
        ordered = _rows(spark, sql, True)
    finally:
        spark.conf.unset("spark.sql.matchRecognize.joinOrder")
    assert compare_rows(ordered, rows, False) is None


def test_the_trees_chosen_together_share_a_node_both_patterns_have(spark, grouped_events):
    # A B's only node is (A ⋈ B): paid once, it makes A B C's tree that builds on it the
    # cheaper plan for the two.
    sql = " UNION ALL ".join(
        [
            _pattern(
                "ab",
                "A B",
                "A AS e = 'a', B AS e = 'b' AND B.v > A.v",
                measures="FIRST(A.t) AS first_t, LAST(B.t) AS last_t",
            ),
            _pattern("abc", "A B C", "A AS e = 'a', B AS e = 'b' AND B.v > A.v, C AS e = 'c'"),
        ]
    )
    _same_rows_both_ways(spark, sql)
    plan = _plan(spark, sql)
    assert "shares (A ⋈ B) with pattern 2 |" in plan, plan
    assert "shares (A ⋈ B) with pattern 1" in plan, plan
    assert "pattern 2: ((A ⋈ B) ⋈ C)" in plan, plan
    chosen = re.search(
        r"trees chosen together \((\d+) steps of local search, \d+ ms\): estimated cost (\S+), "
        r"against (\S+) with each pattern's own tree and (\S+) choosing in turn",
        plan,
    )
    assert chosen, plan
    together, own, in_turn = (float(chosen.group(i).rstrip(",")) for i in (2, 3, 4))
    assert together <= min(own, in_turn)
    assert "2 trees sharing nodes: 5 nodes evaluated for their 8" in plan, plan
    # Another condition between A and B is another node: nothing to share there.
    other = sql.replace("B AS e = 'b' AND B.v > A.v, C", "B AS e = 'b' AND B.v < A.v, C")
    _same_rows_both_ways(spark, other)
    assert "shares" not in _plan(spark, other)


def test_the_same_pattern_twice_gives_its_rows_twice(spark, grouped_events):
    sql = " UNION ALL ".join([_pattern("x", "A B C", ABC), _pattern("y", "A B C", ABC)])
    rows = _same_rows_both_ways(spark, sql)
    xs = sorted(r[1:] for r in rows if r[0] == "x")
    assert xs == sorted(r[1:] for r in rows if r[0] == "y")


def test_variables_named_differently_with_the_same_conditions(spark, grouped_events):
    sql = " UNION ALL ".join(
        [
            _pattern("p1", "A B C", ABC),
            _pattern(
                "p2",
                "X Y C",
                "X AS e = 'a', Y AS e = 'b', C AS e = 'c'",
                measures="FIRST(X.t) AS first_t, LAST(C.t) AS last_t",
            ),
        ]
    )
    _same_rows_both_ways(spark, sql)


def test_two_variables_of_one_pattern_with_the_same_condition(spark, grouped_events):
    sql = " UNION ALL ".join(
        [
            _pattern("p1", "A B C", "A AS e = 'a', B AS e = 'a', C AS e = 'c'"),
            _pattern("p2", "A C", AC),
        ]
    )
    _same_rows_both_ways(spark, sql)


def test_negations_closures_and_alternatives_run_beside_the_shared_trees(spark, grouped_events):
    sql = " UNION ALL ".join(
        [
            _pattern("neg", "A !D C", ADC),
            _pattern(
                "kleene",
                "A B+ C",
                "A AS e = 'a', B AS e = 'b', C AS e = 'c'",
                measures="FIRST(A.t) AS first_t, count(B.*) AS last_t",
                within="6",
            ),
            _pattern(
                "alt", "A (B | D) C", "A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd'"
            ),
            _pattern("plain", "A C", AC),
        ]
    )
    rows = _same_rows_both_ways(spark, sql)
    assert {r[0] for r in rows} == {"neg", "kleene", "alt", "plain"}
    assert _plan(spark, sql).count("CepTreeMatch") == 1


def test_without_partition_by_the_slices_are_shared(spark, grouped_events):
    spark.conf.set("spark.sql.matchRecognize.targetRowsPerTask", "60")
    try:
        sql = " UNION ALL ".join(
            [
                _pattern("p1", "A C", AC, partition=""),
                _pattern("p2", "A D C", ADC, partition="", within="12"),
            ]
        )
        _same_rows_both_ways(spark, sql)
    finally:
        spark.conf.unset("spark.sql.matchRecognize.targetRowsPerTask")


def test_two_scans_of_the_same_input_are_one_input(spark, grouped_events):
    sql = (
        _pattern("p1", "A C", AC) + " UNION ALL " + _pattern("p2", "A D C", ADC, table="grp_again")
    )
    _same_rows_both_ways(spark, sql)
    assert _plan(spark, sql).count("CepTreeMatch") == 1


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(dict(table="grp_other"), id="another input"),
        pytest.param(dict(partition="PARTITION BY e"), id="other keys"),
        pytest.param(dict(where="WHERE last_t > 100"), id="a filter above"),
    ],
)
def test_unions_it_cannot_take_are_planned_pattern_by_pattern(spark, grouped_events, second):
    measures = "FIRST(A.t) AS first_t, LAST(C.t) AS last_t"
    sql = (
        _pattern("p1", "A C", AC)
        + " UNION ALL "
        + _pattern("p2", "A D C", ADC, measures=measures, **second)
    )
    if "partition" in second:
        sql = sql.replace(
            "SELECT 'p2' AS pattern, *", "SELECT 'p2' AS pattern, e AS k, first_t, last_t"
        )
    _same_rows_both_ways(spark, sql)
    assert _plan(spark, sql).count("CepTreeMatch") == 2


def test_within_rows_is_planned_alone_beside_a_group(spark, grouped_events):
    rows_window = _pattern("rows", "A C", AC).replace("WITHIN INTERVAL '8' SECOND", "WITHIN 6 ROWS")
    sql = " UNION ALL ".join([_pattern("p1", "A C", AC), rows_window, _pattern("p2", "A D C", ADC)])
    _same_rows_both_ways(spark, sql)
    assert _plan(spark, sql).count("CepTreeMatch") == 2


def test_the_guard_counts_each_pattern_apart(spark, grouped_events):
    # The guard counts per key in one task: windows long enough for one time slice per key.
    sql = " UNION ALL ".join(
        [_pattern("p1", "A C", AC, within="30"), _pattern("p2", "A D C", ADC, within="30")]
    )
    per_key = {}
    for r in _rows(spark, sql, False):
        per_key[(r[0], r[1])] = per_key.get((r[0], r[1]), 0) + 1
    most = max(per_key.values())
    spark.conf.set("spark.sql.matchRecognize.maxMatchesPerPartition", str(most))
    try:
        assert len(_rows(spark, sql, True)) == sum(per_key.values())
        spark.conf.set("spark.sql.matchRecognize.maxMatchesPerPartition", str(most - 1))
        with pytest.raises(Exception, match="maxMatchesPerPartition"):
            _rows(spark, sql, True)
    finally:
        spark.conf.unset("spark.sql.matchRecognize.maxMatchesPerPartition")


def test_match_patterns_returns_one_dataframe_with_the_pattern_names(spark, grouped_events):
    from spark_match_recognize import match_patterns

    df = match_patterns(
        grouped_events,
        {
            "a_then_c": {"pattern": "A C", "define": {"A": "e = 'a'", "C": "e = 'c'"}},
            "a_d_c": {
                "pattern": "A D C",
                "define": {"A": "e = 'a'", "D": "e = 'd'", "C": "e = 'c'"},
                "within": "INTERVAL '10' SECOND",
            },
        },
        name_column="rule",
        partition_by="k",
        order_by="ts",
        measures={"first_t": "FIRST(A.t)", "last_t": "LAST(C.t)"},
        strategy="SKIP TILL ANY MATCH",
        within="INTERVAL '8' SECOND",
    )
    assert df.columns == ["rule", "k", "first_t", "last_t"]
    got = [tuple(r) for r in df.collect()]
    sql = (
        _pattern("a_then_c", "A C", AC)
        + " UNION ALL "
        + _pattern("a_d_c", "A D C", ADC, within="10")
    )
    assert compare_rows(got, _rows(spark, sql, False), False) is None
    assert _executed(df).count("CepTreeMatch") == 1


def test_match_patterns_names_what_is_wrong():
    from spark_match_recognize import match_patterns_sql

    with pytest.raises(TypeError, match="non-empty mapping"):
        match_patterns_sql("t", {})
    with pytest.raises(ValueError, match="has no 'pattern'"):
        match_patterns_sql("t", {"x": {"define": {}}}, order_by="ts")
    with pytest.raises(ValueError, match="same measures"):
        match_patterns_sql(
            "t",
            {
                "x": {"pattern": "A", "measures": {"m": "A.v"}},
                "y": {"pattern": "A", "measures": {"n": "A.v"}},
            },
            order_by="ts",
            define={"A": "v > 0"},
        )
    with pytest.raises(ValueError, match="pattern 'y'"):
        match_patterns_sql("t", {"x": {"pattern": "A"}, "y": {"pattern": "A ("}}, order_by="ts")
    text = match_patterns_sql("t", {"it's": {"pattern": "A"}}, order_by="ts", define={"A": "v > 0"})
    # No escapes, which spark.sql.parser.escapedStringLiterals=true would keep.
    assert text.startswith("SELECT concat('it', chr(39), 's') AS pattern, * FROM t MATCH_RECOGNIZE")
