"""Anchors under quantifiers, end to end through spark.sql.

``^`` holds only before the first row of a partition and ``$`` only after its last row;
both are zero-width. Under a quantifier an anchor may be matched 0..n times, and an
iteration of an unbounded quantifier that consumed no row ends the loop when it is within
max(min, 1) iterations and is abandoned after that (so ``(^)*`` at the partition start is
one empty iteration, elsewhere zero). The expected rows are worked out by
hand below each case; the reference matcher (tests/reference/rpr.py) must agree with them.
"""

from __future__ import annotations

import pytest

from reference import rpr

# Two partitions: x has v = 10..50 (A rows are v < 30: ts 1, 2; B rows are v >= 30: ts 3-5),
# y has v = 5, 35 (A then B).
ROWS = [
    ("x", 1, 10),
    ("x", 2, 20),
    ("x", 3, 30),
    ("x", 4, 40),
    ("x", 5, 50),
    ("y", 1, 5),
    ("y", 2, 35),
]
DATA = "SELECT * FROM VALUES " + ", ".join(f"('{k}', {ts}, {v})" for k, ts, v in ROWS)
DEFINES = {"A": "v < 30", "B": "v >= 30", "T": "v > 0"}


def _define(pattern: str) -> str:
    used = [name for name in DEFINES if name in pattern]
    return "DEFINE " + ", ".join(f"{name} AS {DEFINES[name]}" for name in used) if used else ""


def _a_rows(pattern: str) -> str:
    return "count(A.*)" if "A" in pattern else "0"


def _one_row(spark, pattern: str, skip: str = "") -> list[tuple]:
    sql = f"""
        SELECT k, s, e, m, n, na FROM ({DATA} AS t(k, ts, v)) MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES FIRST(ts) AS s, LAST(ts) AS e, MATCH_NUMBER() AS m, count(*) AS n,
                   {_a_rows(pattern)} AS na
          ONE ROW PER MATCH {skip}
          PATTERN ({pattern})
          {_define(pattern)}
        ) ORDER BY k, m"""
    return [tuple(r) for r in spark.sql(sql).collect()]


def _all_rows(spark, pattern: str, mode: str, skip: str = "") -> list[tuple]:
    sql = f"""
        SELECT k, ts, cls, m FROM ({DATA} AS t(k, ts, v)) MATCH_RECOGNIZE (
          PARTITION BY k ORDER BY ts
          MEASURES CLASSIFIER() AS cls, MATCH_NUMBER() AS m
          {mode} {skip}
          PATTERN ({pattern})
          {_define(pattern)}
        ) ORDER BY k, ts, m"""
    return [tuple(r) for r in spark.sql(sql).collect()]


def _reference_one_row(pattern: str, skip) -> list[tuple]:
    """The same query through the reference matcher, for the cross-check."""
    conditions = {
        "A": lambda c: c.col("v") < 30,
        "B": lambda c: c.col("v") >= 30,
        "T": lambda c: c.col("v") > 0,
    }
    node = rpr.parse_pattern(pattern)
    out = []
    for key in ("x", "y"):
        part = [{"k": k, "ts": ts, "v": v} for k, ts, v in ROWS if k == key]
        define = {v: conditions[v] for v in rpr.pattern_variables(node)}
        for match in rpr.find_matches(part, node, define=define, skip=skip):
            rows = [part[s.row]["ts"] for s in match.steps]
            labels = [s.label for s in match.steps]
            out.append(
                (
                    key,
                    rows[0] if rows else None,
                    rows[-1] if rows else None,
                    match.number,
                    len(rows),
                    labels.count("A"),
                )
            )
    return out


# (pattern, skip clause, reference skip, expected rows (k, s, e, m, n, na))
ONE_ROW_CASES = [
    # ^ holds only at the partition start: there ^* is one empty iteration, elsewhere none;
    # every A row (x: 1, 2; y: 1) is a match of its own.
    (
        "^* A",
        "",
        ("past_last_row",),
        [("x", 1, 1, 1, 1, 1), ("x", 2, 2, 2, 1, 1), ("y", 1, 1, 1, 1, 1)],
    ),
    # x from ts 1: ^ first (left branch, zero-width), the loop's next ^ iteration is empty
    # and ends it, B fails at ts 1; so A ts 1, A ts 2, then A fails at ts 3 and B takes it.
    # ts 4 and 5: neither ^ nor A holds, and + needs one iteration. y: A ts 1, B ts 2.
    ("(^ | A)+ B", "", ("past_last_row",), [("x", 1, 3, 1, 3, 2), ("y", 1, 2, 1, 2, 1)]),
    # SKIP TO NEXT ROW adds x from ts 2 (A ts 2, B ts 3); from ts 3 nothing matches.
    (
        "(^ | A)+ B",
        "AFTER MATCH SKIP TO NEXT ROW",
        ("to_next_row",),
        [("x", 1, 3, 1, 3, 2), ("x", 2, 3, 2, 2, 1), ("y", 1, 2, 1, 2, 1)],
    ),
    # Skipping to the B row (ts 3 in x, ts 2 in y) finds nothing more there.
    (
        "(^ | A)+ B",
        "AFTER MATCH SKIP TO LAST B",
        ("to_last", "B"),
        [("x", 1, 3, 1, 3, 2), ("y", 1, 2, 1, 2, 1)],
    ),
    (
        "(^ | A)+ B",
        "AFTER MATCH SKIP TO FIRST B",
        ("to_first", "B"),
        [("x", 1, 3, 1, 3, 2), ("y", 1, 2, 1, 2, 1)],
    ),
    # Reluctant: zero iterations first (B fails at ts 1), then ^ (empty, B fails again),
    # then A ts 1 and stop (B fails at ts 2), A ts 2 and stop: B ts 3. From ts 4 and 5
    # zero iterations and B.
    (
        "(^ | A)*? B",
        "",
        ("past_last_row",),
        [("x", 1, 3, 1, 3, 2), ("x", 4, 4, 2, 1, 0), ("x", 5, 5, 3, 1, 0), ("y", 1, 2, 1, 2, 1)],
    ),
    # (A $) holds only for the last row: before it every start row gives an empty match
    # (zero iterations), the last row is a one-row match.
    (
        "(T $)*",
        "",
        ("past_last_row",),
        [
            ("x", None, None, 1, 0, 0),
            ("x", None, None, 2, 0, 0),
            ("x", None, None, 3, 0, 0),
            ("x", None, None, 4, 0, 0),
            ("x", 5, 5, 5, 1, 0),
            ("y", None, None, 1, 0, 0),
            ("y", 2, 2, 2, 1, 0),
        ],
    ),
    # $ never holds before B, so this is A* B: x ts 1-3, then B alone at ts 4 and 5.
    (
        "($ | A)* B",
        "",
        ("past_last_row",),
        [("x", 1, 3, 1, 3, 2), ("x", 4, 4, 2, 1, 0), ("x", 5, 5, 3, 1, 0), ("y", 1, 2, 1, 2, 1)],
    ),
    # (^)? holds at most once; T+ $ runs to the partition end from every start row.
    (
        "(^)? T+ $",
        "AFTER MATCH SKIP TO NEXT ROW",
        ("to_next_row",),
        [
            ("x", 1, 5, 1, 5, 0),
            ("x", 2, 5, 2, 4, 0),
            ("x", 3, 5, 3, 3, 0),
            ("x", 4, 5, 4, 2, 0),
            ("x", 5, 5, 5, 1, 0),
            ("y", 1, 2, 1, 2, 0),
            ("y", 2, 2, 2, 1, 0),
        ],
    ),
    # x ts 1: ^ A takes ts 1, but B fails at ts 2, and without the iteration B fails at ts 1;
    # ts 2: B fails; ts 3: B+ to the end. y: ^ A ts 1, B ts 2.
    ("(^ A)* B+", "", ("past_last_row",), [("x", 3, 5, 1, 3, 0), ("y", 1, 2, 1, 2, 1)]),
    (
        "(^ A)* B+",
        "AFTER MATCH SKIP TO NEXT ROW",
        ("to_next_row",),
        [
            ("x", 3, 5, 1, 3, 0),
            ("x", 4, 5, 2, 2, 0),
            ("x", 5, 5, 3, 1, 0),
            ("y", 1, 2, 1, 2, 1),
            ("y", 2, 2, 2, 1, 0),
        ],
    ),
    # A bounded repetition of ^ holds only at the partition start (twice, zero-width).
    ("(^){2,3} A", "", ("past_last_row",), [("x", 1, 1, 1, 1, 1), ("y", 1, 1, 1, 1, 1)]),
    # After a row, ^ no longer holds: zero iterations, so this is A.
    (
        "A (^)*",
        "",
        ("past_last_row",),
        [("x", 1, 1, 1, 1, 1), ("x", 2, 2, 2, 1, 1), ("y", 1, 1, 1, 1, 1)],
    ),
    # $+ needs one $: only after the last row.
    ("T $+", "", ("past_last_row",), [("x", 5, 5, 1, 1, 0), ("y", 2, 2, 1, 1, 0)]),
    # Anchors inside an alternation inside *: (^ | $ | A)* B is A* B here, after the
    # empty ^ iteration at the partition start.
    (
        "(^ | $ | A)* B",
        "",
        ("past_last_row",),
        [("x", 1, 3, 1, 3, 2), ("x", 4, 4, 2, 1, 0), ("x", 5, 5, 3, 1, 0), ("y", 1, 2, 1, 2, 1)],
    ),
]


@pytest.mark.parametrize(
    "pattern, skip, ref_skip, expected",
    ONE_ROW_CASES,
    ids=[f"{c[0]} {c[1]}".strip() for c in ONE_ROW_CASES],
)
def test_quantified_anchor_one_row_per_match(spark, pattern, skip, ref_skip, expected):
    assert _one_row(spark, pattern, skip) == expected
    assert _reference_one_row(pattern, ref_skip) == expected


def test_empty_loop_of_anchor_shows_each_row_as_an_empty_match(spark):
    # (^)* matches empty everywhere: one empty match per row (the ^ iteration at the
    # partition start consumes nothing either).
    expected = [
        ("x", 1, None, 1),
        ("x", 2, None, 2),
        ("x", 3, None, 3),
        ("x", 4, None, 4),
        ("x", 5, None, 5),
        ("y", 1, None, 1),
        ("y", 2, None, 2),
    ]
    assert _all_rows(spark, "(^)*", "ALL ROWS PER MATCH") == expected
    assert _all_rows(spark, "(^)*", "ALL ROWS PER MATCH SHOW EMPTY MATCHES") == expected
    assert _all_rows(spark, "(^)*", "ALL ROWS PER MATCH OMIT EMPTY MATCHES") == []
    assert _all_rows(spark, "(^)*", "ALL ROWS PER MATCH WITH UNMATCHED ROWS") == expected


def test_quantified_anchor_all_rows_per_match(spark):
    matched = [
        ("x", 1, "A", 1),
        ("x", 2, "A", 1),
        ("x", 3, "B", 1),
        ("y", 1, "A", 1),
        ("y", 2, "B", 1),
    ]
    assert _all_rows(spark, "(^ | A)+ B", "ALL ROWS PER MATCH") == matched
    assert _all_rows(spark, "(^ | A)+ B", "ALL ROWS PER MATCH OMIT EMPTY MATCHES") == matched
    # The rows in no match come out with NULL measures.
    assert _all_rows(spark, "(^ | A)+ B", "ALL ROWS PER MATCH WITH UNMATCHED ROWS") == [
        ("x", 1, "A", 1),
        ("x", 2, "A", 1),
        ("x", 3, "B", 1),
        ("x", 4, None, None),
        ("x", 5, None, None),
        ("y", 1, "A", 1),
        ("y", 2, "B", 1),
    ]
    # SKIP TO NEXT ROW: x ts 2-3 is a second match (its rows come out again).
    assert _all_rows(spark, "(^ | A)+ B", "ALL ROWS PER MATCH", "AFTER MATCH SKIP TO NEXT ROW") == [
        ("x", 1, "A", 1),
        ("x", 2, "A", 1),
        ("x", 2, "A", 2),
        ("x", 3, "B", 1),
        ("x", 3, "B", 2),
        ("y", 1, "A", 1),
        ("y", 2, "B", 1),
    ]
    # Empty matches of (T $)* before the last row; WITH UNMATCHED ROWS shows them too.
    assert _all_rows(spark, "(T $)*", "ALL ROWS PER MATCH OMIT EMPTY MATCHES") == [
        ("x", 5, "T", 5),
        ("y", 2, "T", 2),
    ]
    assert _all_rows(spark, "(T $)*", "ALL ROWS PER MATCH WITH UNMATCHED ROWS") == [
        ("x", 1, None, 1),
        ("x", 2, None, 2),
        ("x", 3, None, 3),
        ("x", 4, None, 4),
        ("x", 5, "T", 5),
        ("y", 1, None, 1),
        ("y", 2, "T", 2),
    ]


def test_quantified_anchor_inside_exclusion(spark):
    # {- ^ -}* contributes no row: the output is that of A alone.
    assert _all_rows(spark, "{- ^ -}* A", "ALL ROWS PER MATCH") == [
        ("x", 1, "A", 1),
        ("x", 2, "A", 2),
        ("y", 1, "A", 1),
    ]


def test_the_pre_checker_accepts_quantified_anchors():
    from spark_match_recognize import check

    for pattern in ("^* A", "(^)? A", "(^ | A)+ B", "(A $)*", "($ | A)* B", "$+"):
        sql = f"""SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN ({pattern})
                  DEFINE A AS v > 0)"""
        assert [p for p in check(sql) if "anchor" in p.message] == [], pattern
