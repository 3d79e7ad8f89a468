"""A trailing negation under SKIP TILL ANY MATCH, through spark.sql(): `A B C !N WITHIN w`
keeps a match only if no N row lies after its last row up to the end of the window that
opens at its FIRST row (first + w, inclusive as for the match itself; for WITHIN n ROWS the
rows from the first row's key up to the N row's key, its ties included, number at most n).

The queries run under each join-order algorithm and under join trees forced through the
internal conf: every tree that binds the pattern's first variable last (its row, and so the
end of the window, is known only at the root) and one that binds it first with the last
variable. The expected rows are worked out by hand in the comments.
"""

from __future__ import annotations

import itertools
import re

import pytest

from spark_match_recognize import JOIN_ORDERS

TREE_CONF = "spark.sql.matchRecognize.internal.joinTree"
ORDER_CONF = "spark.sql.matchRecognize.joinOrder"


def _all_trees(variables):
    """Every binary join tree over the variables (each leaf order, each shape)."""

    def shapes(leaves):
        if len(leaves) == 1:
            yield leaves[0]
            return
        for cut in range(1, len(leaves)):
            for left in shapes(leaves[:cut]):
                for right in shapes(leaves[cut:]):
                    yield f"({left} {right})"

    return sorted({t for order in itertools.permutations(variables) for t in shapes(order)})


def _first_last_trees(variables):
    """The trees joining the pattern's first variable at the root, and the tree binding it
    with the last variable first."""
    first, rest = variables[0], variables[1:]
    at_root = [t for r in _all_trees(rest) for t in (f"({r} {first})", f"({first} {r})")]
    early = (
        "((" + first + " " + variables[-1] + ")" + "".join(" " + v for v in variables[1:-1]) + ")"
    )
    return at_root + ([early] if len(variables) > 2 else [])


def _plans(variables, orders=JOIN_ORDERS):
    return [(ORDER_CONF, o) for o in orders] + [
        (TREE_CONF, t) for t in _first_last_trees(variables)
    ]


def _run(spark, sql, conf):
    key, value = conf
    spark.conf.set(key, value)
    try:
        return sorted(tuple(r) for r in spark.sql(sql).collect())
    finally:
        spark.conf.unset(key)


def _check_every_plan(spark, sql, variables, expected, orders=JOIN_ORDERS):
    wrong = []
    for conf in _plans(variables, orders) if len(variables) > 1 else [(ORDER_CONF, "auto")]:
        got = _run(spark, sql, conf)
        if got != sorted(expected):
            wrong.append(f"{conf[0]}={conf[1]}: {got}")
    assert not wrong, "expected " + str(sorted(expected)) + "\n" + "\n".join(wrong)


def _values(rows):
    """(k, id, minute, sym) as an inline table with a TIMESTAMP `ts`."""
    body = ",\n    ".join(
        f"({k}, {i}, TIMESTAMP'2026-01-01 10:00:00' + INTERVAL '{m}' MINUTE, '{s}')"
        for k, i, m, s in rows
    )
    return f"(SELECT * FROM VALUES\n    {body}\n  AS t(k, id, ts, sym))"


def _query(rows, pattern, within, measures):
    define = ", ".join(
        f"{v} AS {v}.sym = '{v.lower()}'" for v in "ABCN" if re.search(rf"\b{v}\b", pattern)
    )
    return f"""
        SELECT * FROM {_values(rows)}
        MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES {measures}
          ONE ROW PER MATCH
          SKIP TILL ANY MATCH
          PATTERN ({pattern})
          {within}
          DEFINE {define}
        )"""


ABC = "A.id AS a, B.id AS b, C.id AS c"

# Each partition is one scenario (k, id, minute, sym).
INTERVAL_ROWS = [
    # 1: A@0 B@3 C@8 N@12. The match's window is [0, 10]; N lies within C's own ten minutes
    #    but past the end of the match's window: a match.
    (1, 11, 0, "a"),
    (1, 12, 3, "b"),
    (1, 13, 8, "c"),
    (1, 14, 12, "n"),
    # 2: N@10, exactly at the end of the window (inclusive): no match.
    (2, 21, 0, "a"),
    (2, 22, 3, "b"),
    (2, 23, 8, "c"),
    (2, 24, 10, "n"),
    # 3: N@11, one minute past the end: a match.
    (3, 31, 0, "a"),
    (3, 32, 3, "b"),
    (3, 33, 8, "c"),
    (3, 34, 11, "n"),
    # 4: A@0 and A@2, B@3 C@8 N@11: (A@0 ...) has [0, 10], N past it: a match; (A@2 ...)
    #    has [2, 12], N inside it: none.
    (4, 41, 0, "a"),
    (4, 42, 2, "a"),
    (4, 43, 3, "b"),
    (4, 44, 8, "c"),
    (4, 45, 11, "n"),
    # 5: N@5 between B and C and N@8 on C's key are not after the last row: a match.
    (5, 51, 0, "a"),
    (5, 52, 3, "b"),
    (5, 53, 5, "n"),
    (5, 54, 8, "c"),
    (5, 55, 8, "n"),
]
INTERVAL_EXPECTED = [(1, 11, 12, 13), (3, 31, 32, 33), (4, 41, 43, 44), (5, 51, 52, 54)]

ROWS_ROWS = [
    # WITHIN 4 ROWS. 1: A B C X N: A's window is A, B, C, X; N is the fifth row: a match.
    (1, 11, 0, "a"),
    (1, 12, 1, "b"),
    (1, 13, 2, "c"),
    (1, 14, 3, "x"),
    (1, 15, 4, "n"),
    # 2: A B C N: N is the fourth row of A's window: no match.
    (2, 21, 0, "a"),
    (2, 22, 1, "b"),
    (2, 23, 2, "c"),
    (2, 24, 3, "n"),
    # 3: A B C, then N and X on one key: the rows from A's key to N's are five, more than
    #    four (a match ending on that key would not fit either): a match.
    (3, 31, 0, "a"),
    (3, 32, 1, "b"),
    (3, 33, 2, "c"),
    (3, 34, 3, "n"),
    (3, 35, 3, "x"),
    # 4: A A B C N: (A@0 ...) has A, A, B, C, N is fifth: a match; (A@1 ...) has A, B, C,
    #    N: none.
    (4, 41, 0, "a"),
    (4, 42, 1, "a"),
    (4, 43, 2, "b"),
    (4, 44, 3, "c"),
    (4, 45, 4, "n"),
]
ROWS_EXPECTED = [(1, 11, 12, 13), (3, 31, 32, 33), (4, 41, 43, 44)]


def test_trailing_negation_looks_up_to_the_window_of_the_first_row(spark):
    sql = _query(INTERVAL_ROWS, "A B C !N", "WITHIN INTERVAL '10' MINUTE", ABC)
    _check_every_plan(spark, sql, ["A", "B", "C"], INTERVAL_EXPECTED)


def test_trailing_negation_within_rows_counts_from_the_first_row(spark):
    sql = _query(ROWS_ROWS, "A B C !N", "WITHIN 4 ROWS", ABC)
    _check_every_plan(spark, sql, ["A", "B", "C"], ROWS_EXPECTED)


def test_trailing_negation_with_a_kleene_first_element(spark):
    # PATTERN (A+ B !N) WITHIN 5 minutes: A@0, A@2, B@4, N@6. {A@0}: window [0, 5], N past
    # it: a match; {A@2}: [2, 7], N inside: none; {A@0, A@2}: opens at A@0: a match.
    rows = [(1, 1, 0, "a"), (1, 2, 2, "a"), (1, 3, 4, "b"), (1, 4, 6, "n")]
    sql = _query(
        rows,
        "A+ B !N",
        "WITHIN INTERVAL '5' MINUTE",
        "FIRST(A.id) AS first_a, count(A.*) AS n_a, B.id AS b",
    )
    _check_every_plan(spark, sql, ["B"], [(1, 1, 1, 3), (1, 1, 2, 3)])


def test_trailing_negation_with_a_kleene_in_the_middle(spark):
    # PATTERN (A B+ C !N) WITHIN 10 minutes: A@0 B@2 B@4 C@8 N@12 (past [0, 10]): the three
    # bindings of B are matches. A second partition has N@9 instead: none.
    rows = [
        (1, 1, 0, "a"),
        (1, 2, 2, "b"),
        (1, 3, 4, "b"),
        (1, 4, 8, "c"),
        (1, 5, 12, "n"),
        (2, 6, 0, "a"),
        (2, 7, 2, "b"),
        (2, 8, 4, "b"),
        (2, 9, 8, "c"),
        (2, 10, 9, "n"),
    ]
    sql = _query(
        rows,
        "A B+ C !N",
        "WITHIN INTERVAL '10' MINUTE",
        "A.id AS a, FIRST(B.id) AS b1, count(B.*) AS nb, C.id AS c",
    )
    _check_every_plan(
        spark,
        sql,
        ["A", "C"],
        [(1, 1, 2, 1, 4), (1, 1, 2, 2, 4), (1, 1, 3, 1, 4)],
        ("auto", "trivial"),
    )


def test_a_tree_that_binds_the_first_variable_last_checks_at_its_root(spark):
    sql = _query(INTERVAL_ROWS, "A B C !N", "WITHIN INTERVAL '10' MINUTE", ABC)
    spark.conf.set(TREE_CONF, "((B C) A)")
    try:
        # The join operators: a Negation operator over the root join.
        spark.conf.set("spark.sql.matchRecognize.cepExecution", "joins")
        plan = "\n".join(r[0] for r in spark.sql("EXPLAIN " + sql).collect())
        assert "Negation ((B ⋈ C) ⋈ A) !N" in plan, plan
        # The one pass: the check is part of the tree's evaluation, at its root.
        spark.conf.set("spark.sql.matchRecognize.cepExecution", "tree")
        plan = "\n".join(r[0] for r in spark.sql("EXPLAIN " + sql).collect())
        assert "CepTreeMatch ((B ⋈ C) ⋈ A) !N" in plan, plan
    finally:
        spark.conf.unset(TREE_CONF)
        spark.conf.unset("spark.sql.matchRecognize.cepExecution")


@pytest.mark.parametrize("first_rare", [True, False])
def test_the_cost_model_checks_a_trailing_negation_where_the_first_variable_is_bound(
    spark, first_rare
):
    from spark_match_recognize import explain_pattern

    # Many B and C rows, few A rows (or the reverse): whatever order the optimizer picks,
    # the check is attached where A (the window's first row) and C (the last) are bound.
    rows = []
    ident = 0
    for minute in range(60):
        for sym in ("b", "c") if first_rare else ("a",):
            ident += 1
            rows.append((1, ident, minute, sym))
        if minute % 20 == 0:
            ident += 1
            rows.append((1, ident, minute, "a" if first_rare else "b"))
            ident += 1
            rows.append((1, ident, minute, "n"))
    sql = _query(rows, "A B C !N", "WITHIN INTERVAL '10' MINUTE", ABC)
    [report] = explain_pattern(spark, sql).reports
    [neg] = report.alternatives[0].negations
    assert neg["checked_where_bound"] == ["A", "C"], neg
