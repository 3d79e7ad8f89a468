"""Unbounded quantifiers whose body can match no row, end to end through spark.sql.

An iteration that consumed no row ends the loop only while the iteration count is at most
max(min, 1); a later empty iteration is abandoned, and the matcher goes on to the
iteration's next alternative. The expected rows are those Trino gives for the same queries;
the reference matcher (tests/reference/rpr.py) must agree with them.
"""

from __future__ import annotations

import pytest

from reference import rpr

DEFINES = {
    "A": lambda c: c.col("x") == 1,
    "B": lambda c: c.col("x") == 2,
    "C": lambda c: c.col("x") == 3,
}


def _query(values: list[tuple[int, int]], pattern: str) -> str:
    rows = ", ".join(f"({i}, {x})" for i, x in values)
    conditions = {"A": "x = 1", "B": "x = 2", "C": "x = 3"}
    define = ", ".join(f"{v} AS {conditions[v]}" for v in conditions if v in pattern)
    return f"""
        SELECT * FROM (VALUES {rows}) AS t(id, x)
        MATCH_RECOGNIZE (ORDER BY id ASC NULLS LAST
          MEASURES CLASSIFIER() AS last_label, count(*) AS n
          ONE ROW PER MATCH
          PATTERN ({pattern})
          DEFINE {define}) AS mr"""


def _reference(values: list[tuple[int, int]], pattern: str) -> list[tuple]:
    part = [{"id": i, "x": x} for i, x in values]
    node = rpr.parse_pattern(pattern)
    define = {v: DEFINES[v] for v in rpr.pattern_variables(node)}
    out = []
    for match in rpr.find_matches(part, node, define=define):
        labels = [s.label for s in match.steps]
        out.append((labels[-1] if labels else None, len(labels)))
    return out


CASES = [
    # Row 2: A fails, B? is empty in the second iteration, which is abandoned; C takes it.
    ([(1, 1), (2, 3)], "(A | B? | C)+", [("C", 2)]),
    ([(1, 1), (2, 3)], "(A | B? | C)*", [("C", 2)]),
    ([(1, 1), (2, 3)], "(A | B? | C){1,}", [("C", 2)]),
    ([(1, 1), (2, 3)], "(A | B? | C){0,}", [("C", 2)]),
    # The first iteration may be empty: it ends the loop with an empty match.
    ([(1, 3)], "(B? | C)+", [(None, 0)]),
    # The second iteration is within the minimum of 2: its emptiness ends the loop.
    ([(1, 1), (2, 3)], "(A | B? | C){2,}", [("A", 1), (None, 0)]),
    # Reluctant: stopping is preferred, so the rule never comes into play.
    ([(1, 1), (2, 3)], "(A | B? | C)+?", [("A", 1), (None, 0)]),
]


@pytest.mark.parametrize("values, pattern, expected", CASES)
def test_empty_iteration_rule(spark, values, pattern, expected):
    rows = [tuple(r) for r in spark.sql(_query(values, pattern)).collect()]
    assert rows == expected
    assert _reference(values, pattern) == expected
