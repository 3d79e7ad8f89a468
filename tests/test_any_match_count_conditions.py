"""Counting SKIP TILL ANY MATCH matches without building them when DEFINE conditions
compare two rows, through spark.sql(): a condition on the match's first row (of a single
row, a closure's rows or a negation) asked of each open first row, a comparison between
neighbouring single rows followed per key, each counting what building the matches counts,
and the conditions it cannot follow building the matches with the reason in EXPLAIN.
"""

from __future__ import annotations

import pytest

from count_queries import DEFINES, both, counted_events, later_rows, query  # noqa: F401

# The events table every test reads, for the module.
pytestmark = pytest.mark.usefixtures("counted_events")

FIRST_ROW_RELATIONS = {
    "a closure between": ("A B+ C", "C AS e = 'c' AND C.v > A.v"),
    "a closure's rows": ("A B+ C", "B AS e = 'b' AND B.v >= A.v"),
    "a negation": ("A !D C", "D AS e = 'd' AND D.v = A.v"),
    "any expression": ("A B C", "C AS e = 'c' AND C.t - A.t >= 3 AND C.v * 2 > A.v + 1"),
    "with a pair": ("A B C", "B AS e = 'b' AND B.v > A.v, C AS e = 'c' AND C.v < B.v"),
    "every kind": (
        "A B+ !D C",
        "B AS e = 'b' AND B.v <> A.v, D AS e = 'd' AND D.v < A.v, C AS e = 'c' AND C.v >= A.v",
    ),
}


def _with(pattern: str, conditions: str, within: str = "WITHIN INTERVAL '12' SECOND") -> str:
    """The count over `pattern`, its variables' DEFINE replaced by `conditions` where given."""
    owners = {c.split(" AS ", 1)[0].strip() for c in conditions.split(", ")}
    define = ", ".join(
        [d for v, d in DEFINES.items() if v in pattern and v not in owners] + [conditions]
    )
    return query(pattern, define=define, within=within)


@pytest.mark.parametrize("name", sorted(FIRST_ROW_RELATIONS))
def test_a_condition_on_the_first_row_is_checked_against_each_open_first_row(spark, name):
    counted, built, plan = both(spark, _with(*FIRST_ROW_RELATIONS[name]))
    assert counted == built and sum(r[-1] for r in built) > 0
    assert "CepMatchCount" in plan and "checked against each first row" in plan, plan


PAIRS = {
    "ordered": ("A B C", "C AS e = 'c' AND C.v > B.v"),
    "equal expressions": ("A B C", "C AS e = 'c' AND C.v % 3 = B.v % 3"),
    "equal and ordered": ("A B C", "C AS e = 'c' AND B.v % 2 = C.v % 2 AND C.t >= B.t + 2"),
    "different": ("A B C", "C AS e = 'c' AND C.v <> B.v"),
    "two pairs": ("A B C D", "C AS e = 'c' AND C.v >= B.v, D AS e = 'd' AND D.v < C.v"),
    "times": ("A B C", "C AS e = 'c' AND C.ts > B.ts + INTERVAL '3' SECOND"),
    "a negation between": ("A B !D C", "C AS e = 'c' AND B.v <= C.v"),
    "a closure after": ("A B C D+", "C AS e = 'c' AND C.v < B.v"),
    "a closure before": ("B+ A C", "C AS e = 'c' AND C.v = A.v"),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_a_condition_between_neighbouring_rows_is_counted_per_key(spark, name):
    counted, built, plan = both(spark, _with(*PAIRS[name]))
    assert counted == built and sum(r[-1] for r in built) > 0
    assert "CepMatchCount" in plan and "rows kept per key for" in plan, plan


def test_later_row_values_ride_along_keyed_prefixes(spark):
    sql = query(
        "A C D",
        define="A AS e = 'a', C AS e = 'c' AND C.v > A.v, D AS e = 'd' AND D.v <> C.v",
        within="WITHIN INTERVAL '12' SECOND",
        measures=later_rows("A C D"),
        group="k, date_trunc('MINUTE', first_ts)",
    ).replace("count(*) AS n", "count(*) AS n, sum(c_v), max(d_v), avg(d_v)")
    counted, built, plan = both(spark, sql)
    assert counted == built and len(counted) > 1
    assert "CepMatchCount" in plan and "over the matches" in plan, plan


@pytest.mark.parametrize(
    "pattern, condition, reason",
    [
        (
            "A B D C",
            "C AS e = 'c' AND C.v > B.v",
            "compares its row with `B`, neither the match's first row nor",
        ),
        ("A B+ C", "C AS e = 'c' AND C.v > B.v", "compares its row with `B`, neither"),
        (
            "A B C",
            "C AS e = 'c' AND C.v > B.v AND C.t < B.t + 5",
            "orders its row against `B`'s more than once",
        ),
        (
            "A B C",
            "C AS e = 'c' AND C.v + B.v > 4",
            "by more than =, <, <=, >, >= or <> between an expression of each row",
        ),
        (
            "A B C",
            "C AS e = 'c' AND CAST(C.v AS DOUBLE) = CAST(B.v AS DOUBLE)",
            "on a value of type double",
        ),
    ],
)
def test_other_conditions_between_rows_build_the_matches_and_explain_says_why(
    spark, pattern, condition, reason
):
    counted, built, plan = both(
        spark, _with(pattern, condition, within="WITHIN INTERVAL '8' SECOND")
    )
    assert counted == built and counted
    assert "CepMatchCount" not in plan
    assert "aggregates of the matches: matches built, as the DEFINE of" in plan, plan
    assert reason in plan, plan
