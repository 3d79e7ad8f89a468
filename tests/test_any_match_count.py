"""count(*) of SKIP TILL ANY MATCH matches computed without building them, through
spark.sql(): the same counts as building the matches (countWithoutMatches = false) for every
pattern shape it takes (single rows, B+ closures, negations between elements, time and row
windows, ORDER BY peers, keyless patterns cut into time slices), aggregates of first-row and
later-row measures, EXPLAIN naming the counting operator, and the patterns it leaves to the
matches, with the reason in EXPLAIN. Conditions between rows: test_any_match_count_conditions.py.
"""

from __future__ import annotations

import pytest

from count_queries import ROWS_PER_TASK, both, counted_events, later_rows, query  # noqa: F401

# The events table every test reads, for the module.
pytestmark = pytest.mark.usefixtures("counted_events")

CASES = {
    "sequence": query("A B C"),
    "closure": query("A B+ C"),
    "opening closure": query("B+ C"),
    "closing closure": query("A B+"),
    "negation": query("A !D C"),
    "negation next to closures": query("A B+ !D C", within="WITHIN INTERVAL '12' SECOND"),
    "two negations": query("A !D !C B"),
    "one variable": query("A", within="WITHIN INTERVAL '0' SECOND"),
    "rows window": query("A B C", within="WITHIN 6 ROWS"),
    "two order keys": query("A B C", order="ts, v"),
    "four variables": query("A B D C", within="WITHIN INTERVAL '12' SECOND"),
    "physical navigation": query(
        "A B+ C", define="A AS e = 'a', B AS e = 'b' AND B.v > PREV(v), C AS e = 'c'"
    ),
    "keyless": query("A B+ C", partition="", group=""),
    "grouped by nothing": query("A B C", group=""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_counting_returns_the_counts_of_the_built_matches(spark, name):
    counted, built, plan = both(spark, CASES[name])
    assert counted == built
    assert sum(r[-1] for r in built) > 0, "the case has no match, so it shows nothing"
    assert "CepMatchCount" in plan and "CepTreeMatch" not in plan, plan


def test_keyless_counts_in_many_time_slices_count_each_match_once(spark):
    # 600 rows at 50 per task: the keyless pattern's time slices overlap by one window, and
    # a match is counted only by the slice owning its first row.
    spark.conf.set(ROWS_PER_TASK, "50")
    try:
        counted, built, plan = both(spark, CASES["keyless"])
    finally:
        spark.conf.unset(ROWS_PER_TASK)
    assert counted == built and counted[0][0] > 0
    assert "CepMatchCount" in plan


@pytest.mark.parametrize(
    "pattern, reason",
    [
        ("A B{2,3} C", "the closure `B{2,3}` is not of the form `B+`"),
        ("A C !D", "the negation `!D` ends the pattern"),
        ("A B | A C", "the pattern has alternatives (or PERMUTE)"),
    ],
)
def test_other_shapes_build_the_matches(spark, pattern, reason):
    counted, built, plan = both(spark, query(pattern, within="WITHIN INTERVAL '12' SECOND"))
    assert counted == built and counted
    assert "CepMatchCount" not in plan and reason in plan, plan


FIRST_ROW = "A.t AS first_t, A.ts AS first_ts, A.v AS first_v, C.t AS c_t"


@pytest.mark.parametrize(
    "group, where",
    [
        ("k, date_trunc('MINUTE', first_ts)", ""),
        ("window(first_ts, '20 seconds')", ""),
        ("first_v", ""),
        ("k", "WHERE first_v > 3"),
        ("", "WHERE first_t % 2 = 0"),
    ],
)
def test_counts_grouped_by_the_first_row_are_counted_per_first_row(spark, group, where):
    select_group = group
    sql = query(
        "A B+ !D C",
        within="WITHIN INTERVAL '12' SECOND",
        measures=FIRST_ROW,
        group=select_group,
        where=where,
    )
    counted, built, plan = both(spark, sql)
    assert counted == built
    assert len(counted) > 1 or not group, counted
    assert "CepMatchCount" in plan, plan
    if "first_t" in group + where or "first_v" in group + where:
        assert "of the first row" in plan, plan


def test_a_group_read_from_a_later_row_builds_the_matches(spark):
    sql = query("A B C", measures=FIRST_ROW, group="c_t % 5")
    counted, built, plan = both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" not in plan


@pytest.mark.parametrize(
    "aggregates",
    [
        "count(first_v), sum(first_v), avg(first_v), min(first_ts), max(first_v)",
        "count(DISTINCT first_v), sum(DISTINCT first_v), max(first_t) - min(first_t)",
        "sum(first_v) / count(*), avg(CAST(first_v AS BIGINT))",
    ],
)
def test_aggregates_of_first_row_measures_are_weighted_by_the_matches(spark, aggregates):
    sql = query("A B+ !D C", within="WITHIN INTERVAL '12' SECOND", measures=FIRST_ROW)
    sql = sql.replace("count(*) AS n", f"count(*) AS n, {aggregates}")
    counted, built, plan = both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan and "of the first row" in plan, plan


@pytest.mark.parametrize(
    "aggregate",
    [
        "avg(CAST(first_v AS DOUBLE))",
        "count(*) FILTER (WHERE first_v > 2)",
        "sum(b_n)",
        "sum(c_v - first_v)",
        "count(DISTINCT c_v)",
        "max(CAST(c_v AS DOUBLE))",
        "sum(c_v) FILTER (WHERE c_v > 2)",
    ],
)
def test_other_aggregates_build_the_matches_too(spark, aggregate):
    sql = query("A B+ C", measures=later_rows("A B+ C")).replace(
        "count(*) AS n", f"{aggregate} AS x"
    )
    counted, built, plan = both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" not in plan


@pytest.mark.parametrize(
    "pattern, aggregates, group",
    [
        (
            "A D C",
            "sum(c_v), count(c_v), avg(c_v), min(c_ts), max(c_t), sum(d_v) + 2 * max(d_v)",
            "k",
        ),
        ("A B+ !D C", "sum(c_v), min(c_v), max(c_v), avg(c_v), count(c_big), min(c_big)", "k"),
        ("A B+ C", "sum(c_v), avg(c_big), max(c_ts)", "k, date_trunc('MINUTE', first_ts)"),
        ("A B+ C", "sum(c_v), min(c_t) - min(first_t)", "first_v"),
        ("A B+ C", "sum(c_v), count(c_big), max(c_big)", ""),
        ("A B+ C", "sum(b_last), max(b_v), min(b_first_t), avg(b_first_t), count(b_last)", "k"),
        ("B+ C", "sum(b_v), min(b_first_t), max(b_first_t) - min(b_first_t)", "k"),
        (
            "A B+ !D C",
            "sum(b_last) + sum(c_v), max(b_first_t)",
            "k, date_trunc('MINUTE', first_ts)",
        ),
    ],
)
def test_aggregates_of_later_rows_are_counted_with_the_matches(spark, pattern, aggregates, group):
    sql = query(
        pattern, within="WITHIN INTERVAL '12' SECOND", measures=later_rows(pattern), group=group
    )
    sql = sql.replace("count(*) AS n", f"count(*) AS n, {aggregates}")
    counted, built, plan = both(spark, sql)
    assert counted == built and len(counted) >= 1 and counted[0][-1] is not None
    assert "CepMatchCount" in plan and "over the matches" in plan, plan


def test_a_keyless_later_row_sum_in_many_time_slices_counts_each_match_once(spark):
    sql = query(
        "A B+ C",
        partition="",
        group="",
        measures=later_rows("A B+ C"),
        within="WITHIN INTERVAL '12' SECOND",
    ).replace("count(*) AS n", "count(*) AS n, sum(c_v), min(c_ts), max(c_ts)")
    spark.conf.set(ROWS_PER_TASK, "50")
    try:
        counted, built, plan = both(spark, sql)
    finally:
        spark.conf.unset(ROWS_PER_TASK)
    assert counted == built and counted[0][0] > 0
    assert "CepMatchCount" in plan


def test_a_later_row_value_read_through_a_projection_and_filter_is_counted(spark):
    inner = query(
        "A B+ C", measures=later_rows("A B+ C"), within="WITHIN INTERVAL '12' SECOND", group=""
    ).split("FROM", 1)[1]
    sql = f"""
        SELECT k, count(*) AS n, sum(x), max(x), avg(y)
        FROM (SELECT k, first_v, c_v * 2 + 1 AS x, c_big AS y, c_t FROM {inner.strip()})
        WHERE first_v > 2 GROUP BY k"""
    counted, built, plan = both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan and "over the matches" in plan, plan


def test_a_later_row_measure_is_computed_only_on_the_rows_its_variable_binds(spark):
    # 10 div v fails on v = 0 (ANSI); C's own condition keeps those rows out of its binding.
    sql = query(
        "A B C",
        measures="10 div C.v AS c_share",
        group="k",
        within="WITHIN INTERVAL '12' SECOND",
    ).replace("count(*) AS n", "count(*) AS n, sum(c_share), min(c_share)")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        counted, built, plan = both(spark, sql)
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan, plan


def _bits_query(b_rows: int) -> str:
    rows = ", ".join([f"({i}, 'b')" for i in range(b_rows)] + [f"({b_rows}, 'c')"])
    return f"""SELECT count(*) AS n FROM (VALUES {rows}) AS t(ts, e) MATCH_RECOGNIZE (
        ORDER BY ts MEASURES C.ts AS c SKIP TILL ANY MATCH PATTERN (B+ C)
        WITHIN {b_rows + 1} ROWS DEFINE B AS e = 'b', C AS e = 'c')"""


def test_the_largest_count_a_bigint_holds_is_returned_and_one_more_is_refused(spark):
    # B+ C over n B rows and one C: every non-empty subset of the B rows is a match, 2^n - 1.
    plan = spark.sql("EXPLAIN " + _bits_query(63)).collect()[0][0]
    assert "MatchCount" in plan, plan
    assert spark.sql(_bits_query(63)).collect()[0][0] == 2**63 - 1
    too_many = r"more matches \(or partial matches\).*than a BIGINT holds"
    with pytest.raises(Exception, match=too_many):
        spark.sql(_bits_query(64)).collect()
