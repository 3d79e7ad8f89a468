"""Threads that reached the same program position but labelled earlier rows differently
must not be merged when a DEFINE condition can still read those labels (end to end through
spark.sql; the reference matcher must agree)."""

from __future__ import annotations

import pytest

from reference import rpr

DATA = "SELECT * FROM (VALUES (1, 1), (2, 2), (3, 3)) AS t(id, x)"


def _count(spark, pattern: str, define: str) -> list[tuple]:
    sql = f"""{DATA} MATCH_RECOGNIZE (ORDER BY id ASC NULLS LAST
        MEASURES count(*) AS n, CLASSIFIER() AS last_label
        ONE ROW PER MATCH PATTERN ({pattern}) DEFINE {define}) AS mr"""
    return [tuple(r) for r in spark.sql(sql).collect()]


def _reference(pattern: str, define) -> list[tuple]:
    part = [{"id": i, "x": i} for i in (1, 2, 3)]
    out = []
    for match in rpr.find_matches(part, rpr.parse_pattern(pattern), define=define):
        out.append((len(match.steps), match.steps[-1].label if match.steps else None))
    return out


CASES = [
    # A D fails at D (the row before is labelled A); C D A satisfies every condition.
    (
        "(A | C) D A",
        "D AS PREV(CLASSIFIER()) = 'C'",
        {"D": lambda c: c.prev(rpr.CLASSIFIER) == "C"},
        [(3, "A")],
    ),
    # Two rows back: only the path that labelled row 1 C gets past E.
    (
        "(A | C) D E",
        "E AS PREV(CLASSIFIER(), 2) = 'C'",
        {"E": lambda c: c.prev(rpr.CLASSIFIER, 2) == "C"},
        [(3, "E")],
    ),
    # Inside a loop: the preferred path labels rows 1-2 A A and fails at E (row 2 is not C).
    (
        "(A | C)+ E",
        "E AS PREV(CLASSIFIER()) = 'C'",
        {"E": lambda c: c.prev(rpr.CLASSIFIER) == "C"},
        [(3, "E")],
    ),
]


@pytest.mark.parametrize("pattern, define, reference_define, expected", CASES)
def test_label_history_keeps_paths_apart(spark, pattern, define, reference_define, expected):
    assert _count(spark, pattern, define) == expected
    assert _reference(pattern, reference_define) == expected
