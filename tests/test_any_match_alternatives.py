"""SKIP TILL ANY MATCH alternatives (`|`, `PERMUTE`, `B?`) through spark.sql(): the union of
the alternatives' matches is a set union, and a match is every row it binds, a Kleene
closure's rows included: two matches that bind the same single rows and different closure
rows are two matches, even when they come from alternatives that are merged."""

from __future__ import annotations

import pytest


def _rows(spark, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


def _query(rows: str, pattern: str, measures: str) -> str:
    defines = ", ".join(f"{v} AS sym = '{v.lower()}'" for v in "ABC" if v in pattern)
    return f"""
        SELECT * FROM (VALUES {rows}) AS t(t, sym) MATCH_RECOGNIZE (
          ORDER BY t
          MEASURES {measures}
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          WITHIN 10 ROWS
          DEFINE {defines}
        )"""


CLOSURE_CASES = {
    # A then B (B then A has no match), then each non-empty subset of the two C rows.
    "after a PERMUTE": (
        "(1, 'a'), (2, 'b'), (3, 'c'), (4, 'c')",
        "PERMUTE(A, B) C+",
        "A.t AS a, B.t AS b, count(C.*) AS n, FIRST(C.t) AS c_first, LAST(C.t) AS c_last",
        [(1, 2, 1, 3, 3), (1, 2, 1, 4, 4), (1, 2, 2, 3, 4)],
    ),
    # Every subset of the two A rows (the empty one too), then B and C in that order.
    "before a PERMUTE": (
        "(1, 'a'), (2, 'a'), (3, 'b'), (4, 'c')",
        "A* PERMUTE(B, C)",
        "count(A.*) AS n, FIRST(A.t) AS a_first, LAST(A.t) AS a_last, B.t AS b, C.t AS c",
        [(0, None, None, 3, 4), (1, 1, 1, 3, 4), (1, 2, 2, 3, 4), (2, 1, 2, 3, 4)],
    ),
}


@pytest.mark.parametrize("execution", ["auto", "joins"])
@pytest.mark.parametrize("name", list(CLOSURE_CASES))
def test_a_closure_next_to_a_permute_keeps_every_subset(spark, name, execution):
    rows, pattern, measures, expected = CLOSURE_CASES[name]
    spark.conf.set("spark.sql.matchRecognize.cepExecution", execution)
    try:
        got = _rows(spark, _query(rows, pattern, measures))
    finally:
        spark.conf.unset("spark.sql.matchRecognize.cepExecution")
    assert got == sorted(expected, key=repr)


def test_alternatives_binding_the_same_rows_are_one_match(spark):
    got = _rows(spark, _query("(1, 'a'), (2, 'b')", "PERMUTE(A, B) | A B", "A.t AS a, B.t AS b"))
    assert got == [(1, 2)]
