"""MATCH_NUMBER() and CLASSIFIER() inside aggregates and navigation, and uncorrelated IN and
EXISTS subqueries in DEFINE, with results worked out by hand."""

import pytest
from pyspark.errors import AnalysisException

# value by ts: 1, 3, 1, 2, 0, 1
SERIES = "VALUES (1, 1), (2, 3), (3, 1), (4, 2), (5, 0), (6, 1) AS v(ts, value)"


def rows(spark, sql, execution=None):
    """The query's rows; under SKIP TILL ANY MATCH, `execution` sets cepExecution."""
    if execution is None:
        return [tuple(r) for r in spark.sql(sql).collect()]
    spark.conf.set("spark.sql.matchRecognize.cepExecution", execution)
    try:
        return [tuple(r) for r in spark.sql(sql).collect()]
    finally:
        spark.conf.unset("spark.sql.matchRecognize.cepExecution")


def test_match_number_inside_an_aggregate_in_define(spark):
    # PATTERN (A B): B holds when max(value + MATCH_NUMBER()) over A's and B's rows is > 3.
    # Match 1 at ts 1-2: max(1+1, 3+1) = 4. From ts 3 the attempt would be match 2:
    # max(1+2, 2+2) = 4 (with 1 instead of 2 it would be 3 and fail); from ts 5, match 3:
    # max(0+3, 1+3) = 4.
    got = rows(
        spark,
        f"""
        SELECT * FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES MATCH_NUMBER() AS m, A.ts AS a_ts, B.ts AS b_ts,
                   sum(B.value * 10 + MATCH_NUMBER()) AS s,
                   FIRST(value * 10 + MATCH_NUMBER()) AS f
          PATTERN (A B)
          DEFINE B AS max(value + MATCH_NUMBER()) > 3)""",
    )
    assert got == [(1, 1, 2, 31, 11), (2, 3, 4, 22, 12), (3, 5, 6, 13, 3)]


def test_match_number_inside_navigation_in_define(spark):
    # B holds when the previous row's value plus the match number is at least 3: from ts 1
    # (match 1) PREV at ts 2 is 1 + 1 = 2, no; from ts 2, B = ts 3 reads 3 + 1 = 4: match 1
    # is ts 2-3. Then match 2 from ts 4: B = ts 5 reads 2 + 2 = 4: match 2 is ts 4-5.
    # ts 6 alone cannot match (B needs a row after A).
    got = rows(
        spark,
        f"""
        SELECT * FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES MATCH_NUMBER() AS m, A.ts AS a_ts
          PATTERN (A B)
          DEFINE B AS PREV(value + MATCH_NUMBER()) >= 3)""",
    )
    assert got == [(1, 2), (2, 4)]


def test_classifier_inside_an_aggregate_in_define_sees_the_tested_row(spark):
    # B's condition counts the rows classified B so far, the tested row included (it is
    # tentatively B): from ts 1, B takes ts 2 (1) and ts 3 (2), not ts 4 (3). Then from
    # ts 4: A = ts 4, B = ts 5, ts 6.
    got = rows(
        spark,
        f"""
        SELECT * FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES MATCH_NUMBER() AS m, FIRST(ts) AS first_ts, count(*) AS n
          PATTERN (A B+)
          DEFINE B AS count(CASE WHEN CLASSIFIER() = 'B' THEN 1 END) <= 2)""",
    )
    assert got == [(1, 1, 3), (2, 4, 3)]


def test_classifier_inside_aggregates_running_and_final(spark):
    # A+ takes rows with value < 3; B needs at least two A rows before it. From ts 1 A
    # stops at ts 2 (3) and B sees one A row: no match. From ts 3 A+ takes ts 3-6 greedily,
    # gives back ts 6 for B, which sees three A rows. RUNNING counts per output row, FINAL
    # the whole match.
    got = rows(
        spark,
        f"""
        SELECT ts, cls, na, max_a, nb FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES CLASSIFIER() AS cls,
                   count(CASE WHEN CLASSIFIER() = 'A' THEN 1 END) AS na,
                   max(CASE WHEN CLASSIFIER() = 'A' THEN value END) AS max_a,
                   FINAL count(CASE WHEN CLASSIFIER() = 'B' THEN 1 END) AS nb
          ALL ROWS PER MATCH
          PATTERN (A+ B)
          DEFINE A AS value < 3, B AS count(CASE WHEN CLASSIFIER() = 'A' THEN 1 END) >= 2)""",
    )
    assert got == [(3, "A", 1, 1, 1), (4, "A", 2, 2, 1), (5, "A", 3, 2, 1), (6, "B", 3, 2, 1)]


def test_classifier_of_one_variable_in_an_aggregate_under_any_match(spark):
    # Rows of B are classified B: CLASSIFIER() inside an aggregate or navigation over B is
    # 'B'. A = ts 2 (value 3), B+ any non-empty subset of ts 3-4 within 3 rows.
    got = rows(
        spark,
        f"""
        SELECT * FROM (SELECT TIMESTAMP'2024-01-01 00:00:00' + make_interval(0,0,0,0,0,0,ts) AS t,
                              ts, value FROM {SERIES})
        MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES A.ts AS a_ts, count(CASE WHEN CLASSIFIER(B) = 'B' THEN 1 END) AS nb,
                   FIRST(concat(CLASSIFIER(B), CAST(B.ts AS STRING))) AS fb
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B+) WITHIN 3 ROWS
          DEFINE A AS A.value = 3, B AS B.value < A.value)""",
    )
    assert sorted(got) == [(2, 1, "B3"), (2, 1, "B4"), (2, 2, "B3")]


def test_match_number_inside_an_aggregate_under_any_match_is_refused_by_name(spark):
    refusal = r"MATCH_NUMBER\(\) inside a navigation or aggregate"
    with pytest.raises(AnalysisException, match=refusal):
        spark.sql(f"""
            SELECT * FROM (SELECT TIMESTAMP'2024-01-01 00:00:00'
                                  + make_interval(0,0,0,0,0,0,ts) AS t,
                                  ts, value FROM {SERIES})
            MATCH_RECOGNIZE (
              ORDER BY t MEASURES sum(B.value + MATCH_NUMBER()) AS s
              ONE ROW PER MATCH SKIP TILL ANY MATCH PATTERN (A B+) WITHIN 3 ROWS
              DEFINE A AS A.value = 3)""").collect()


@pytest.fixture(scope="module")
def allowed(spark):
    spark.sql("SELECT * FROM VALUES (3), (2) AS a(p)").createOrReplaceTempView("allowed")
    spark.sql("SELECT * FROM VALUES (3), (NULL) AS a(p)").createOrReplaceTempView("allowed_null")


@pytest.mark.parametrize(
    "condition, expected",
    [
        ("A.value IN (SELECT p FROM allowed)", [2, 4]),
        ("A.value NOT IN (SELECT p FROM allowed)", [1, 3, 5, 6]),
        # 3 is in the list; every other value compares with NULL: unknown, never true.
        ("A.value IN (SELECT p FROM allowed_null)", [2]),
        ("NOT (A.value IN (SELECT p FROM allowed_null))", []),
        ("A.value IN (SELECT p FROM allowed WHERE p > 100)", []),
        ("NOT (A.value IN (SELECT p FROM allowed WHERE p > 100))", [1, 2, 3, 4, 5, 6]),
        ("(A.ts, A.value) IN (SELECT p - 1, p FROM allowed)", [2]),
        ("value > 1 AND EXISTS (SELECT 1 FROM allowed WHERE p > 2)", [2, 4]),
        ("value > 1 AND EXISTS (SELECT 1 FROM allowed WHERE p > 3)", []),
        ("value = 0 AND NOT EXISTS (SELECT 1 FROM allowed WHERE p > 10)", [5]),
    ],
)
def test_in_and_exists_subqueries_in_define(spark, allowed, condition, expected):
    got = rows(
        spark,
        f"""
        SELECT * FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts MEASURES A.ts AS a_ts PATTERN (A) DEFINE A AS {condition})""",
    )
    assert got == [(t,) for t in expected]


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_in_and_exists_subqueries_in_define_under_any_match(spark, allowed, execution):
    # A: value in (3, 2) -> ts 2, 4; B right after A with value in (1, 0) and a smaller
    # value plus the largest allowed value above A's: (2, 3) and (4, 5).
    got = rows(
        spark,
        f"""
        SELECT * FROM (SELECT TIMESTAMP'2024-01-01 00:00:00' + make_interval(0,0,0,0,0,0,ts) AS t,
                              ts, value FROM {SERIES})
        MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES A.ts AS a_ts, B.ts AS b_ts
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B) WITHIN 2 ROWS
          DEFINE A AS A.value IN (SELECT p FROM allowed),
                 B AS B.value IN (SELECT p - 2 FROM allowed)
                      AND EXISTS (SELECT 1 FROM allowed WHERE p = 3)
                      AND B.value + (SELECT max(p) FROM allowed) > A.value)""",
        execution,
    )
    assert sorted(got) == [(2, 3), (4, 5)]


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_in_subquery_over_a_kleene_variable_under_any_match(spark, allowed, execution):
    # A = ts 2 (value 3); B+ within 3 rows over rows whose value is in (1, 0): ts 3 only
    # (ts 4 has value 2).
    got = rows(
        spark,
        f"""
        SELECT * FROM (SELECT TIMESTAMP'2024-01-01 00:00:00' + make_interval(0,0,0,0,0,0,ts) AS t,
                              ts, value FROM {SERIES})
        MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES A.ts AS a_ts, count(B.*) AS nb, LAST(B.ts) AS b_ts
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B+) WITHIN 3 ROWS
          DEFINE A AS A.value = 3, B AS B.value IN (SELECT p - 2 FROM allowed))""",
        execution,
    )
    assert got == [(2, 1, 3)]


def test_in_and_exists_inside_navigation_and_aggregates_in_measures(spark, allowed):
    # One match of A+ over all six rows (values 1, 3, 1, 2, 0, 1). Allowed values: 3, 2.
    got = rows(
        spark,
        f"""
        SELECT * FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts
          MEASURES LAST(A.value < 0 OR 1 IN (SELECT 1)) AS last_in,
                   FIRST(A.value IN (SELECT p FROM allowed)) AS first_in,
                   array_agg(A.value IN (SELECT p FROM allowed)) AS each_in,
                   array_agg(EXISTS (SELECT 1 FROM allowed WHERE p > 2)) AS each_exists,
                   count_if(NOT EXISTS (SELECT 1 FROM allowed WHERE p > 3)) AS none_above
          PATTERN (A+) DEFINE A AS true)""",
    )
    assert got == [(True, False, [False, True, False, True, False, False], [True] * 6, 6)]


@pytest.mark.parametrize("execution", ["tree", "joins"])
def test_in_inside_navigation_in_define_and_aggregate_in_measures_under_any_match(
    spark, allowed, execution
):
    # A: the first A row's value is allowed (ts 2: 3, ts 4: 2); B follows within 2 rows with
    # a smaller value. MEASURES aggregates an IN over B's single row.
    got = rows(
        spark,
        f"""
        SELECT * FROM (SELECT TIMESTAMP'2024-01-01 00:00:00' + make_interval(0,0,0,0,0,0,ts) AS t,
                              ts, value FROM {SERIES})
        MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES A.ts AS a_ts, B.ts AS b_ts, max(B.value IN (SELECT p - 2 FROM allowed)) AS low
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN (A B) WITHIN 2 ROWS
          DEFINE A AS FIRST(A.value IN (SELECT p FROM allowed)), B AS B.value < A.value)""",
        execution,
    )
    assert sorted(got) == [(2, 3, True), (4, 5, True)]


def test_in_inside_first_in_define(spark, allowed):
    # A+ starts where the value is allowed (FIRST reads the match's first A row) and goes on
    # while the value is below 4: ts 2-6 (3, 1, 2, 0, 1).
    got = rows(
        spark,
        f"""
        SELECT * FROM {SERIES} MATCH_RECOGNIZE (
          ORDER BY ts MEASURES FIRST(A.ts) AS a_ts, count(*) AS n PATTERN (A+)
          DEFINE A AS FIRST(A.value IN (SELECT p FROM allowed)) AND value < 4)""",
    )
    assert got == [(2, 5)]


def test_subquery_in_define_correlated_with_the_input_is_refused_by_name(spark, allowed):
    with pytest.raises(AnalysisException, match="refers to the input or to pattern variables"):
        spark.sql(f"""
            SELECT * FROM {SERIES} MATCH_RECOGNIZE (
              ORDER BY ts MEASURES A.ts AS a_ts PATTERN (A)
              DEFINE A AS EXISTS (SELECT 1 FROM allowed WHERE p = value))""").collect()


def test_hand_worked_matches_agree_with_the_reference_matcher():
    """The reference matcher (tests/reference/rpr.py) finds the same matches for the DEFINE
    conditions above, written as Python over its view of the match so far."""
    from reference.rpr import find_matches

    values = [1, 3, 1, 2, 0, 1]
    data = [{"ts": i + 1, "value": v} for i, v in enumerate(values)]

    def labels(ctx):  # the labels of the match so far, the tested row included
        return [s.label for s in ctx._steps_of(None)]

    def summary(matches):
        return [(m.number, [data[r]["ts"] for r in m.rows], m.labels) for m in matches]

    max_plus_number = find_matches(
        data,
        "A B",
        {"B": lambda ctx: max(ctx._values(lambda r: r["value"] + ctx.match_number(), None)) > 3},
    )
    assert summary(max_plus_number) == [
        (1, [1, 2], ["A", "B"]),
        (2, [3, 4], ["A", "B"]),
        (3, [5, 6], ["A", "B"]),
    ]

    prev_plus_number = find_matches(
        data, "A B", {"B": lambda ctx: ctx.prev("value") + ctx.match_number() >= 3}
    )
    assert [(n, ts[0]) for n, ts, _ in summary(prev_plus_number)] == [(1, 2), (2, 4)]

    at_most_two_b = find_matches(data, "A B+", {"B": lambda ctx: labels(ctx).count("B") <= 2})
    assert [(n, ts[0], len(ts)) for n, ts, _ in summary(at_most_two_b)] == [(1, 1, 3), (2, 4, 3)]

    two_a_before_b = find_matches(
        data,
        "A+ B",
        {"A": lambda ctx: ctx.col("value") < 3, "B": lambda ctx: labels(ctx).count("A") >= 2},
    )
    assert summary(two_a_before_b) == [(1, [3, 4, 5, 6], ["A", "A", "A", "B"])]


@pytest.mark.parametrize(
    "pattern, define",
    [
        # a closure's row condition reading another variable, with a subquery (min p = 2)
        (
            "A B+ C",
            "A AS A.value >= 1, B AS B.value + (SELECT min(p) FROM allowed) > A.value, "
            "C AS C.value < A.value",
        ),
        # a negation's condition reading its neighbour, with a subquery (max p = 3)
        (
            "A !N C",
            "A AS A.value >= 1, N AS N.value + (SELECT max(p) FROM allowed) > A.value + 3, "
            "C AS C.value <= A.value",
        ),
    ],
)
def test_subqueries_in_conditions_the_one_pass_evaluates_itself(spark, allowed, pattern, define):
    sql = f"""
        SELECT * FROM (SELECT TIMESTAMP'2024-01-01 00:00:00' + make_interval(0,0,0,0,0,0,ts) AS t,
                              ts, value FROM {SERIES})
        MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES A.ts AS a_ts, LAST(C.ts) AS c_ts
          ONE ROW PER MATCH SKIP TILL ANY MATCH
          PATTERN ({pattern}) WITHIN 4 ROWS
          DEFINE {define})"""
    one_pass = sorted(rows(spark, sql, "tree"))
    joins = sorted(rows(spark, sql, "joins"))
    assert one_pass == joins and one_pass, (one_pass, joins)
    explained = "\n".join(r[0] for r in spark.sql("EXPLAIN " + sql).collect())
    assert "cepExecution=tree (auto" in explained, explained
