"""SKIP TILL ANY MATCH evaluated in one pass per partition key (cepExecution = tree), through
spark.sql(): the same rows as the join operators (cepExecution = joins) under every tree
shape and clause (negations and Kleene closures included, next to each other and read by
conditions), EXPLAIN naming the execution and why, the refusal under both executions of a
closure reading a later one, the guard on buffered partial matches and `auto` turning to the
joins when the statistics say the one pass would reach it.
"""

from __future__ import annotations

import random

import pytest

EXECUTION = "spark.sql.matchRecognize.cepExecution"
TREE = "spark.sql.matchRecognize.internal.joinTree"
ORDER = "spark.sql.matchRecognize.joinOrder"
MAX_BUFFERED = "spark.sql.matchRecognize.maxBufferedPartialMatches"


@pytest.fixture(scope="module")
def events(spark):
    rng = random.Random(11)
    rows = []
    for k in ("k1", "k2", "k3"):
        t = 0
        for _ in range(120):
            t += rng.randint(0, 3)
            rows.append((k, t, rng.choice("abcdx"), rng.randint(0, 9)))
    spark.createDataFrame(rows, "k string, t long, e string, v int").selectExpr(
        "k", "timestamp_seconds(t) AS ts", "t", "e", "v"
    ).createOrReplaceTempView("tree_events")
    yield
    spark.catalog.dropTempView("tree_events")


DEFINES = {
    "A": "A AS e = 'a'",
    "B": "B AS e = 'b' AND B.v > A.v",
    "C": "C AS e = 'c'",
    "D": "D AS e = 'd' AND D.v < C.v",
}


def _query(
    pattern: str,
    *,
    partition: str = "PARTITION BY k",
    order: str = "ts",
    within: str = "WITHIN INTERVAL '12' SECOND",
    rows: str = "ONE ROW PER MATCH",
    measures: str = "A.t AS a_t, B.t AS b_t, C.t AS c_t, MATCH_NUMBER() AS n",
    define: str | None = None,
) -> str:
    if define is None:
        define = ", ".join(d for v, d in DEFINES.items() if v in pattern)
    return f"""
        SELECT * FROM tree_events MATCH_RECOGNIZE (
          {partition} ORDER BY {order}
          MEASURES {measures}
          {rows}
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          {within}
          DEFINE {define}
        )"""


CLOSURE_MEASURES = (
    "A.t AS a_t, FIRST(B.t) AS b_first, LAST(B.t) AS b_last, count(B.*) AS nb, "
    "sum(B.v) AS b_sum, MATCH_NUMBER() AS n"
)


def _rows(spark, sql: str, execution: str, tree: str = "", order: str = "auto"):
    spark.conf.set(EXECUTION, execution)
    spark.conf.set(TREE, tree)
    spark.conf.set(ORDER, order)
    try:
        return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)
    finally:
        for key in (EXECUTION, TREE, ORDER):
            spark.conf.unset(key)


CASES = {
    "sequence": (_query("A B C"), ["", "((A B) C)", "(A (B C))", "((A C) B)", "((C B) A)"]),
    "four variables, bushy": (
        _query("A B C D", measures="A.t AS a, D.t AS d"),
        ["((A B) (C D))", "((D C) (B A))", "(A ((C D) B))"],
    ),
    "keyless": (_query("A B C", partition=""), ["", "(C (A B))"]),
    "within rows": (_query("A B C", within="WITHIN 6 ROWS"), ["", "((B C) A)"]),
    "two order keys": (_query("A B C", order="ts, v"), ["", "((A C) B)"]),
    "all rows per match": (
        _query(
            "A B C", rows="ALL ROWS PER MATCH", measures="CLASSIFIER() AS cls, MATCH_NUMBER() AS n"
        ),
        ["", "(C (B A))"],
    ),
    "alternation": (
        _query(
            "A (B | D) C",
            measures="A.t AS a, C.t AS c, B.t AS b, D.t AS d",
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd'",
        ),
        [""],
    ),
    "negation between elements, with a condition": (
        _query("A B !D C"),
        ["", "((A B) C)", "(C (B A))", "((A C) B)"],
    ),
    "two negations, keyless": (
        _query(
            "A !D B !X C",
            partition="",
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd', X AS e = 'x'",
        ),
        ["", "((C B) A)"],
    ),
    "trailing negation": (
        _query(
            "A B !D",
            measures="A.t AS a_t, B.t AS b_t, MATCH_NUMBER() AS n",
            define="A AS e = 'a', B AS e = 'b' AND B.v > A.v, D AS e = 'd' AND D.v > A.v",
        ),
        ["", "(B A)"],
    ),
    "trailing negation within rows, all rows": (
        _query(
            "A C !D",
            within="WITHIN 5 ROWS",
            rows="ALL ROWS PER MATCH",
            measures="CLASSIFIER() AS cls",
            define="A AS e = 'a', C AS e = 'c', D AS e = 'd' AND D.v < C.v",
        ),
        ["", "(C A)"],
    ),
    "condition over three variables": (
        _query("A B C", define="A AS e = 'a', B AS e = 'b', C AS e = 'c' AND C.v > A.v + B.v - 9"),
        ["", "((A C) B)"],
    ),
    "closure between elements, previous row and aggregates": (
        _query(
            "A B+ C",
            measures=CLOSURE_MEASURES,
            define="A AS e = 'a', B AS e = 'b' AND B.v > A.v AND "
            "(LAST(B.v, 1) IS NULL OR B.v >= LAST(B.v, 1)), C AS e = 'c'",
        ),
        ["", "(C A)"],
    ),
    "closure opening the pattern, keyless": (
        # (without MATCH_NUMBER(): keys share timestamps, so ties in ORDER BY)
        _query(
            "B* A C",
            partition="",
            measures=CLOSURE_MEASURES.replace(", MATCH_NUMBER() AS n", ""),
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c'",
        ),
        ["", "(C A)"],
    ),
    "closure ending the pattern, read by a condition": (
        _query(
            "A C B{1,3}",
            measures=CLOSURE_MEASURES,
            define="A AS e = 'a', B AS e = 'b' AND B.v > C.v, C AS e = 'c'",
        ),
        ["", "(C A)"],
    ),
    "condition reading a closure": (
        _query(
            "A B* C",
            measures=CLOSURE_MEASURES,
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c' AND C.v >= COALESCE(avg(B.v), 0)",
        ),
        ["", "(C A)"],
    ),
    "closure, all rows per match": (
        _query(
            "A B{0,2} C",
            rows="ALL ROWS PER MATCH",
            measures="CLASSIFIER() AS cls, count(B.*) AS nb, MATCH_NUMBER() AS n",
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c' AND C.v > A.v",
        ),
        ["", "(C A)"],
    ),
    "closure and a negation between other elements": (
        _query(
            "A !D B C+",
            measures=CLOSURE_MEASURES.replace("B.t", "C.t"),
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd'",
        ),
        ["", "(B A)"],
    ),
    "negation after a closure, with a condition": (
        _query(
            "A B+ !D C",
            measures=CLOSURE_MEASURES,
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd' AND D.v > A.v",
        ),
        ["", "(C A)", "(A C)"],
    ),
    "negation before a closure": (
        _query(
            "A !D C+",
            measures="A.t AS a_t, FIRST(C.t) AS c_first, count(C.*) AS nc, MATCH_NUMBER() AS n",
            define="A AS e = 'a', C AS e = 'c', D AS e = 'd'",
        ),
        [""],
    ),
    "closure opening the pattern, then a negation": (
        _query(
            "B{1,3} !D A C",
            measures=CLOSURE_MEASURES,
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd'",
        ),
        ["", "(C A)"],
    ),
    "negation ending the pattern after a closure": (
        _query(
            "A B+ !D",
            measures=CLOSURE_MEASURES,
            define="A AS e = 'a', B AS e = 'b' AND B.v > A.v, D AS e = 'd'",
        ),
        [""],
    ),
    "negation reading a closure": (
        _query(
            "A B+ C !D X",
            measures=CLOSURE_MEASURES,
            within="WITHIN INTERVAL '20' SECOND",
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd' AND D.v > avg(B.v), "
            "X AS e = 'x'",
        ),
        ["", "((C X) A)", "(A (X C))"],
    ),
    "closure reading an earlier closure": (
        _query(
            "A B+ C D{1,2} X",
            measures=CLOSURE_MEASURES + ", count(D.*) AS nd",
            within="WITHIN INTERVAL '20' SECOND",
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd' AND D.v >= avg(B.v), "
            "X AS e = 'x'",
        ),
        ["", "((C X) A)", "(A (X C))"],
    ),
    "negation ending a pattern with a closure, keyless, all rows": (
        _query(
            "A B{1,2} C !D",
            partition="",
            rows="ALL ROWS PER MATCH",
            measures="CLASSIFIER() AS cls, count(B.*) AS nb",
            define="A AS e = 'a', B AS e = 'b', C AS e = 'c', D AS e = 'd' AND D.v < C.v",
        ),
        ["", "(C A)"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_tree_returns_the_rows_of_the_joins(spark, events, name):
    sql, trees = CASES[name]
    expected = _rows(spark, sql, "joins")
    assert expected, f"{name}: the data should produce matches"
    for tree in trees:
        assert _rows(spark, sql, "tree", tree) == expected, f"{name}, tree {tree or 'auto'}"
    assert _rows(spark, sql, "tree", order="trivial") == expected


def _explain(spark, sql: str, execution: str, mode: str = "") -> str:
    spark.conf.set(EXECUTION, execution)
    try:
        return spark.sql(f"EXPLAIN {mode} {sql}").collect()[0][0]
    finally:
        spark.conf.unset(EXECUTION)


def test_explain_names_the_execution_and_why(spark, events):
    plan = _explain(spark, _query("A B C"), "auto")
    assert "CepTreeMatch" in plan and "SequenceJoin" not in plan
    assert "cepExecution=tree (auto: one pass over each partition key, about" in plan
    plan = _explain(spark, _query("A B C"), "tree")
    assert "CepTreeMatch" in plan and "SequenceJoin" not in plan
    assert "cepExecution=tree (requested)" in plan
    plan = _explain(spark, _query("A B C"), "joins")
    assert "CepTreeMatch" not in plan and "SequenceJoin" in plan
    assert "cepExecution=joins (requested)" in plan
    plan = _explain(spark, _query("A B+ C"), "auto")
    assert "CepTreeMatch" in plan and "KleeneClosure" not in plan
    assert "+ B+" in plan
    plan = _explain(
        spark,
        _query(
            "A !D C+",
            measures="A.t AS a_t, count(C.*) AS nc",
            define="A AS e = 'a', C AS e = 'c', D AS e = 'd'",
        ),
        "auto",
        "FORMATTED",
    )
    assert "TreeMatch (" in plan and "Negation (" not in plan
    assert "cepExecution=tree (auto: one pass over each partition key, about" in plan


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_a_closure_reading_a_later_closure_is_refused_naming_both(spark, events, execution):
    with pytest.raises(Exception) as err:
        _rows(
            spark,
            _query(
                "A B+ C D+",
                measures="A.t AS a_t, count(B.*) AS nb",
                define="A AS e = 'a', B AS e = 'b' AND B.v > COALESCE(max(D.v), 0), "
                "C AS e = 'c', D AS e = 'd'",
            ),
            execution,
        )
    message = str(err.value)
    assert "MATCH_RECOGNIZE.UNSUPPORTED_FEATURE" in message
    assert "the DEFINE of the Kleene closure `B` reading the Kleene closure `D`" in message


def test_buffered_partial_matches_are_bounded_with_an_error_naming_the_key(spark, events):
    spark.conf.set(MAX_BUFFERED, "5")
    try:
        with pytest.raises(Exception) as err:
            _rows(spark, _query("A B C", within="WITHIN INTERVAL '1' HOUR"), "tree")
    finally:
        spark.conf.unset(MAX_BUFFERED)
    message = str(err.value)
    assert "spark.sql.matchRecognize.maxBufferedPartialMatches" in message
    assert "partition key (k=k" in message


def test_auto_runs_the_joins_when_one_pass_would_buffer_too_many_partial_matches(spark, events):
    # Over an hour every a, b and c row of a key shares one window: the one pass would
    # buffer thousands of partial matches per key, far over a bound of 50, while the joins
    # spill what does not fit. Forced, the one pass fails on the bound (test above).
    sql = _query("A B C", within="WITHIN INTERVAL '1' HOUR")
    expected = _rows(spark, sql, "joins")
    spark.conf.set(MAX_BUFFERED, "50")
    try:
        plan = _explain(spark, sql, "auto")
        rows = _rows(spark, sql, "auto")
    finally:
        spark.conf.unset(MAX_BUFFERED)
    assert "SequenceJoin" in plan and "CepTreeMatch" not in plan
    assert "cepExecution=joins (auto: one pass would buffer about" in plan
    assert "over half of maxBufferedPartialMatches = 50)" in plan
    assert len(expected) > 100 and rows == expected
    plan = _explain(spark, sql, "auto")
    assert "CepTreeMatch" in plan and "SequenceJoin" not in plan
    assert "partial matches buffered per key)" in plan


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_a_one_row_match_with_more_peers_than_the_rows_window_is_not_a_match(spark, execution):
    # WITHIN 2 ROWS admits at most 2 rows whose key lies between a match's first and last
    # keys: the three rows at t = 3 share their key, so none of them is a match on its own.
    sql = """
        SELECT * FROM VALUES (1, 1), (2, 3), (3, 3), (4, 3), (5, 4) AS t(id, t)
        MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES A.id AS a_id, B.id AS b_id
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN (A | B)
          WITHIN 2 ROWS
          DEFINE A AS id % 2 = 1, B AS id % 2 = 0
        )"""
    got = _rows(spark, sql, execution)
    assert got == sorted([(1, None), (5, None)], key=repr)
