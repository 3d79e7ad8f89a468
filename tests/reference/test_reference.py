"""Unit tests of the reference implementation itself.

Three kinds of evidence:

1. hand-worked examples whose answer is derived in the comments;
2. cases of the conformance suite (``standard.json``), each hand-translated into a reference
   call and checked against the expected rows of the JSON file;
3. properties of the random case generator (determinism, SQL shape, agreement with the
   reference it was rendered from).

Over 400 lines: mostly conformance cases hand-translated into reference calls, one each.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from . import random_cases
from .rpr import (
    CLASSIFIER,
    Alt,
    Concat,
    Context,
    Empty,
    End,
    Exclude,
    MatchRecognizeError,
    Permute,
    Quant,
    Start,
    Step,
    Var,
    WithinInterval,
    WithinRows,
    coalesce,
    find_matches,
    parse_pattern,
    pattern_to_sql,
    run_partitioned,
    run_query,
    simplify_pattern,
    sort_rows,
    sql_and,
    sql_arith,
    sql_compare,
    sql_or,
)

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def lt(a, b):
    return sql_compare("<", a, b)


def le(a, b):
    return sql_compare("<=", a, b)


def gt(a, b):
    return sql_compare(">", a, b)


def ge(a, b):
    return sql_compare(">=", a, b)


def eq(a, b):
    return sql_compare("=", a, b)


def table(columns: str, *values) -> list[dict]:
    """Rows as dicts from a column list ``"id, amt"`` and tuples."""
    names = [c.strip() for c in columns.split(",")]
    return [dict(zip(names, v, strict=True)) for v in values]


def ids(rows: list[dict], values, column="id") -> list:
    """Values of ``column`` at the given row indexes."""
    return [rows[i][column] for i in values]


def labelled(match) -> list[tuple]:
    """A match as ``[(row_index, label), ...]``."""
    return [(s.row, s.label) for s in match.steps]


def ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")


def kind_is(value):
    """DEFINE ``kind = value``."""
    return lambda c: eq(c.col("kind"), value)


def falling(var):
    """DEFINE ``var.amt < PREV(var.amt)``."""
    return lambda c: lt(c.var(var, "amt"), c.prev("amt", var=var))


def rising(var):
    """DEFINE ``var.amt > PREV(var.amt)``."""
    return lambda c: gt(c.var(var, "amt"), c.prev("amt", var=var))


# -- conformance suite --------------------------------------------------------------------------


# The acceptance cases are copied into the repository (tests/conformance), so they are
# always there: a missing file is a failure, never a skip.
CONFORMANCE_FILE = Path(__file__).resolve().parents[1] / "conformance" / "standard.json"

_CASES: dict | None = None


def conformance(case_id: str) -> dict:
    global _CASES
    if _CASES is None:
        _CASES = {c["id"]: c for c in json.loads(CONFORMANCE_FILE.read_text())}
    return _CASES[case_id]


def _normalize(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return round(float(value), 9)
    return str(value)


def assert_rows_equal(columns, rows, expected_columns, expected_rows):
    assert list(columns) == list(expected_columns)
    got = Counter(tuple(_normalize(v) for v in r) for r in rows)
    want = Counter(tuple(_normalize(v) for v in r) for r in expected_rows)
    missing, extra = want - got, got - want
    assert got == want, f"missing rows: {dict(missing)}\nunexpected rows: {dict(extra)}"


def check_conformance(case_id: str, result, select: list[str] | None = None):
    """Compare a ``Result`` with the case's expectation (``select``: the SQL's select list)."""
    case = conformance(case_id)
    expect = case["expect"]
    columns, rows = result.columns, result.rows
    if select is not None:
        positions = [columns.index(c) for c in select]
        columns, rows = select, [[r[p] for p in positions] for r in rows]
    assert_rows_equal(columns, rows, expect["columns"], expect["rows"])


def check_conformance_error(case_id: str, run):
    case = conformance(case_id)
    with pytest.raises(MatchRecognizeError) as error:
        run()
    assert case["expect_error"] in str(error.value).lower()


# ---------------------------------------------------------------------------------------------
# Pattern text
# ---------------------------------------------------------------------------------------------


def test_parse_pattern_builds_the_ast():
    assert parse_pattern("A B+? (C | D)*") == Concat(
        (
            Var("A"),
            Quant(Var("B"), 1, None, greedy=False),
            Quant(Alt((Var("C"), Var("D"))), 0, None),
        )
    )
    assert parse_pattern("^ PERMUTE(A, B{2,3}) {- C{,2} -} $") == Concat(
        (Start(), Permute((Var("A"), Quant(Var("B"), 2, 3))), Exclude(Quant(Var("C"), 0, 2)), End())
    )
    assert parse_pattern("() | A{3}? | B{2,}") == Alt(
        (Empty(), Quant(Var("A"), 3, 3, greedy=False), Quant(Var("B"), 2, None))
    )
    assert parse_pattern("`Fall` A??") == Concat((Var("Fall"), Quant(Var("A"), 0, 1, False)))


@pytest.mark.parametrize(
    "text",
    [
        "A B+ C?",
        "(A | B C)+? D{2}",
        "^ PERMUTE(A, B, C) $",
        "A {- B* -} C{,3}?",
        "((A*)*)",
        "(() | A)+",
        "A{1,2} B{2,}?",
    ],
)
def test_pattern_text_round_trips(text):
    node = parse_pattern(text)
    assert parse_pattern(pattern_to_sql(node)) == node


def test_simplify_pattern_flattens_groups():
    assert simplify_pattern(parse_pattern("(A B) (C) ((D | E) | F)")) == parse_pattern(
        "A B C (D | E | F)"
    )


def test_bad_patterns_are_rejected():
    for text in ["A (B", "A{3,2}", "A |* B", "{- A"]:
        with pytest.raises(MatchRecognizeError):
            parse_pattern(text)


# ---------------------------------------------------------------------------------------------
# Hand-worked examples
# ---------------------------------------------------------------------------------------------

V_SHAPE_ROWS = table(
    "id, price",
    (1, 50),
    (2, 48),
    (3, 45),
    (4, 47),
    (5, 52),
    (6, 51),
    (7, 49),
    (8, 53),
    (9, 53),
)
V_SHAPE_DEFINE = {
    "DOWN": lambda c: lt(c.col("price"), c.prev("price")),
    "UP": lambda c: gt(c.col("price"), c.prev("price")),
}


def test_v_shape():
    # 50 48 45 47 52 | 51 49 53 | 53: STRT=50, DOWN=48,45, UP=47,52; then STRT=51, DOWN=49,
    # UP=53. The last row (53, not above 53) starts nothing.
    matches = find_matches(V_SHAPE_ROWS, parse_pattern("STRT DOWN+ UP+"), V_SHAPE_DEFINE)
    assert [labelled(m) for m in matches] == [
        [(0, "STRT"), (1, "DOWN"), (2, "DOWN"), (3, "UP"), (4, "UP")],
        [(5, "STRT"), (6, "DOWN"), (7, "UP")],
    ]
    assert [m.number for m in matches] == [1, 2]
    out = run_query(
        V_SHAPE_ROWS,
        "STRT DOWN+ UP+",
        V_SHAPE_DEFINE,
        {
            "start": lambda c: c.var("STRT", "id"),
            "bottom": lambda c: c.last("price", var="DOWN"),
            "end": lambda c: c.last("id", var="UP"),
            "n": lambda c: c.count(),
        },
    )
    assert [o.measures for o in out] == [
        {"start": 1, "bottom": 45, "end": 5, "n": 5},
        {"start": 6, "bottom": 49, "end": 8, "n": 3},
    ]


def test_v_shape_all_rows_running_and_final():
    out = run_query(
        V_SHAPE_ROWS,
        "STRT DOWN+ UP+",
        V_SHAPE_DEFINE,
        {
            "cls": lambda c: c.classifier(),
            "running_low": lambda c: c.min("price"),
            "final_low": lambda c: c.final.min("price"),
            "final_n": (lambda c: c.count(), "final"),
        },
        rows_per_match="all_show",
    )
    assert [(o.row_index, *o.measures.values()) for o in out] == [
        (0, "STRT", 50, 45, 5),
        (1, "DOWN", 48, 45, 5),
        (2, "DOWN", 45, 45, 5),
        (3, "UP", 45, 45, 5),
        (4, "UP", 45, 45, 5),
        (5, "STRT", 51, 49, 3),
        (6, "DOWN", 49, 49, 3),
        (7, "UP", 49, 49, 3),
    ]


# -- SKIP TILL NEXT MATCH ------------------------------------------------------------------------

KINDS = {k: kind_is(k.lower()) for k in "ABCD"}


def kinds(*letters) -> list[dict]:
    return table("id, kind", *[(i + 1, k) for i, k in enumerate(letters)])


def test_skip_till_next_alternation_takes_first_fitting_row():
    # a x c b: at row 2 both B and C fail, so row 2 is skipped; at row 3 C succeeds before
    # skipping row 3 is considered.
    (match,) = find_matches(kinds("a", "x", "c", "b"), "A (B | C)", KINDS, skip_till_next=True)
    assert labelled(match) == [(0, "A"), (1, None), (2, "C")]


def test_skip_till_next_leaves_loop_before_skipping():
    # a b c b c: at row 3 another B fails, leaving B+ for C succeeds: the match ends at row 3.
    (match,) = find_matches(kinds("a", "b", "c", "b", "c"), "A B+ C", KINDS, skip_till_next=True)
    assert labelled(match) == [(0, "A"), (1, "B"), (2, "C")]


def test_skip_till_next_optional_element_ends_match():
    # a x b: leaving B? completes the match at once, so row 2 is never skipped.
    (match,) = find_matches(kinds("a", "x", "b"), "A B?", KINDS, skip_till_next=True)
    assert labelled(match) == [(0, "A")]


def test_skip_till_next_never_ends_with_a_skipped_row():
    # A $ on a x: the match would have to end with the skipped row 2.
    assert find_matches(kinds("a", "x"), "A $", KINDS, skip_till_next=True) == []
    (match,) = find_matches(kinds("a", "x", "b"), "A B $", KINDS, skip_till_next=True)
    assert labelled(match) == [(0, "A"), (1, None), (2, "B")]


def test_skip_till_next_skipped_rows_are_invisible_to_variables_but_counted_by_count_star():
    out = run_query(
        kinds("a", "x", "x", "b"),
        "A B",
        KINDS,
        {
            "n_all": lambda c: c.count(),
            "n_named": lambda c: c.count({"A", "B"}),
            "cls_row2": lambda c: c.first(CLASSIFIER, 1),
        },
        skip_till_next=True,
    )
    assert [o.measures for o in out] == [{"n_all": 4, "n_named": 2, "cls_row2": None}]
    # ALL ROWS PER MATCH does not output skipped rows
    out = run_query(kinds("a", "x", "b"), "A B", KINDS, {}, "all_show", skip_till_next=True)
    assert [o.row_index for o in out] == [0, 2]


def test_skip_till_next_rejects_other_skip_modes():
    with pytest.raises(MatchRecognizeError, match="after match skip"):
        find_matches(kinds("a"), "A", KINDS, skip=("to_next_row",), skip_till_next=True)


# -- preferment ------------------------------------------------------------------------------------


def test_alternation_prefers_left_branch_not_longest():
    rows = kinds("a", "b")
    (match,) = find_matches(rows, "A | A B", KINDS)
    assert labelled(match) == [(0, "A")]
    (match,) = find_matches(rows, "A B | A", KINDS)
    assert labelled(match) == [(0, "A"), (1, "B")]


def test_greedy_and_reluctant():
    rows = kinds("a", "a", "a", "b")
    assert [labelled(m) for m in find_matches(rows, "A+", KINDS)] == [
        [(0, "A"), (1, "A"), (2, "A")]
    ]
    assert [labelled(m) for m in find_matches(rows, "A+?", KINDS)] == [
        [(0, "A")],
        [(1, "A")],
        [(2, "A")],
    ]
    # reluctant, but the tail forces more iterations
    assert [labelled(m) for m in find_matches(rows, "A+? B", KINDS)] == [
        [(0, "A"), (1, "A"), (2, "A"), (3, "B")]
    ]
    # {n}? behaves as {n}
    assert [labelled(m) for m in find_matches(rows, "A{2}?", KINDS)] == [[(0, "A"), (1, "A")]]
    # {1,3}? prefers one iteration, ?? prefers none (an empty match at every row)
    assert [len(m.steps) for m in find_matches(rows, "A{1,3}?", KINDS)] == [1, 1, 1]
    assert [len(m.steps) for m in find_matches(rows, "A??", KINDS)] == [0, 0, 0, 0]


def test_greedy_backtracks_for_the_tail():
    rows = table("id, amt", (1, 1), (2, 2), (3, 3), (4, 4))
    (match,) = find_matches(rows, "A* B", {"B": lambda c: gt(c.col("amt"), 2)})
    assert labelled(match) == [(0, "A"), (1, "A"), (2, "A"), (3, "B")]
    # at most two A: A=1, A=2, B=3; then from row 4: A=4 leaves no B, so B=4 alone
    matches = find_matches(rows, "A{,2} B", {"B": lambda c: gt(c.col("amt"), 2)})
    assert [labelled(m) for m in matches] == [[(0, "A"), (1, "A"), (2, "B")], [(3, "B")]]


def test_permute_prefers_lexicographic_order():
    always = {}
    (match,) = find_matches(kinds("x", "x", "x"), "PERMUTE(A, B, C)", always)
    assert match.labels == ["A", "B", "C"]
    # only "c" rows may be A: orders starting with A fail, B A C is the first that works
    rows = kinds("b", "c", "a")
    define = {"A": kind_is("c"), "B": kind_is("b"), "C": kind_is("a")}
    (match,) = find_matches(rows, "PERMUTE(A, B, C)", define)
    assert match.labels == ["B", "A", "C"]
    assert Permute((Var("A"), Var("B"), Var("C"))).as_alternation().items[-1] == Concat(
        (Var("C"), Var("B"), Var("A"))
    )


def test_define_sees_tentative_label_and_running_match():
    # B's condition counts B rows so far including the one being tested: at most 2 B rows.
    rows = kinds("a", "b", "b", "b")
    define = {"A": kind_is("a"), "B": lambda c: le(c.count("B"), 2)}
    (match,) = find_matches(rows, "A B+", define)
    assert match.labels == ["A", "B", "B"]
    # a variable referenced before it has a row is NULL: the comparison is not true
    define = {"A": lambda c: lt(c.var("A", "id"), c.var("B", "id"))}
    assert [m.labels for m in find_matches(rows, "A? B", define)] == [["B"]] * 4


# -- empty matches, empty cycles and output modes --------------------------------------------------

EMPTY_ROWS = table("id, amt", (1, 7), (2, 1), (3, 8), (4, 9), (5, 2))
BIG = {"BIG": lambda c: gt(c.col("amt"), 5)}
EMPTY_MEASURES = {
    "mno": lambda c: c.match_number(),
    "cls": lambda c: c.classifier(),
    "n": lambda c: c.count(),
    "total": lambda c: c.sum("amt"),
}


def test_empty_matches_in_every_output_mode():
    # BIG* on 7 1 8 9 2: [7] #1, empty at 1 #2, [8 9] #3, empty at 2 #4
    one = run_query(EMPTY_ROWS, "BIG*", BIG, EMPTY_MEASURES, "one")
    assert [tuple(o.measures.values()) for o in one] == [
        (1, "BIG", 1, 7),
        (2, None, 0, None),
        (3, "BIG", 2, 17),
        (4, None, 0, None),
    ]

    show = run_query(EMPTY_ROWS, "BIG*", BIG, EMPTY_MEASURES, "all_show")
    assert [(o.row_index, *o.measures.values()) for o in show] == [
        (0, 1, "BIG", 1, 7),
        (1, 2, None, 0, None),
        (2, 3, "BIG", 1, 8),
        (3, 3, "BIG", 2, 17),
        (4, 4, None, 0, None),
    ]

    omit = run_query(EMPTY_ROWS, "BIG*", BIG, EMPTY_MEASURES, "all_omit")
    assert [o.row_index for o in omit] == [0, 2, 3]

    # BIG+: rows 1 and 4 belong to no match and are output with NULL measures
    unmatched = run_query(EMPTY_ROWS, "BIG+", BIG, EMPTY_MEASURES, "all_unmatched")
    assert [(o.row_index, *o.measures.values()) for o in unmatched] == [
        (0, 1, "BIG", 1, 7),
        (1, None, None, None, None),
        (2, 2, "BIG", 1, 8),
        (3, 2, "BIG", 2, 17),
        (4, None, None, None, None),
    ]
    # with BIG* the empty matches take the place of unmatched rows
    assert len(run_query(EMPTY_ROWS, "BIG*", BIG, EMPTY_MEASURES, "all_unmatched")) == 5


def test_empty_cycles_end():
    # (A*)* must terminate: the outer loop stops after an iteration that consumed nothing
    rows = table("id, amt", (1, 2), (2, 9), (3, 8))
    define = {"A": lambda c: gt(c.col("amt"), 5)}
    assert [m.labels for m in find_matches(rows, "(A*)*", define)] == [[], ["A", "A"]]
    assert find_matches(rows, "(A?)+ B", {**define, "B": lambda c: False}) == []
    # the minimum still counts iterations that consumed nothing: (A?){3} matches empty
    assert [m.labels for m in find_matches(rows[:1], "(A?){3}", define)] == [[]]
    assert [m.labels for m in find_matches(rows, "(A | ())+", define)] == [[], ["A", "A"]]


def test_empty_match_measures_are_null_except_match_number_and_counts():
    ctx = Context(EMPTY_ROWS, (), None, 7)
    assert ctx.match_number() == 7
    assert ctx.count() == 0 and ctx.count_col("amt") == 0
    for value in [
        ctx.col("amt"),
        ctx.var("A", "amt"),
        ctx.first("amt"),
        ctx.last("amt", 1),
        ctx.prev("amt"),
        ctx.next("amt"),
        ctx.classifier(),
        ctx.sum("amt"),
        ctx.avg("amt"),
        ctx.final.last("amt"),
        ctx.prev(CLASSIFIER),
    ]:
        assert value is None


# -- exclusion and anchors -------------------------------------------------------------------------


def test_exclusion_hides_rows_from_all_rows_output_only():
    rows = kinds("a", "b", "b", "c")
    measures = {"n_b": lambda c: c.count("B"), "last_b": lambda c: c.last("id", var="B")}
    out = run_query(rows, "A {- B+ -} C", KINDS, measures, "all_show")
    assert [(o.row_index, o.measures["n_b"], o.measures["last_b"]) for o in out] == [
        (0, 0, None),
        (3, 2, 3),
    ]
    (one,) = run_query(rows, "A {- B+ -} C", KINDS, measures, "one")
    assert one.measures == {"n_b": 2, "last_b": 3}
    (match,) = find_matches(rows, "A {- B+ -} C", KINDS)
    assert [s.excluded for s in match.steps] == [False, True, True, False]
    with pytest.raises(MatchRecognizeError, match="exclusion"):
        run_query(rows, "A {- B -}", KINDS, {}, "all_unmatched")


def test_anchors():
    rows = table("part, id, kind", ("p", 1, "a"), ("p", 2, "a"), ("q", 1, "a"))
    result = run_partitioned(
        rows, ["part"], ["id"], "^ A", KINDS, {"first_id": lambda c: c.var("A", "id")}
    )
    assert result.rows == [["p", 1], ["q", 1]]
    result = run_partitioned(
        rows, ["part"], ["id"], "A $", KINDS, {"last_id": lambda c: c.var("A", "id")}
    )
    assert result.rows == [["p", 2], ["q", 1]]
    # ^ only before the first row: an empty pattern ^ matches (empty) only at row 1
    assert [m.start for m in find_matches(rows[:2], "^", {})] == [0]
    assert [m.start for m in find_matches(rows[:2], "A* $", KINDS)] == [0]


# -- AFTER MATCH SKIP ------------------------------------------------------------------------------

SKIP_ROWS = table("id, amt", (1, 5), (2, 3), (3, 2), (4, 4), (5, 6), (6, 1), (7, 3), (8, 8), (9, 7))
SKIP_DEFINE = {"D": falling("D"), "U": rising("U")}


def _starts_and_ends(skip, subsets=None):
    matches = find_matches(SKIP_ROWS, "S D+ U+", SKIP_DEFINE, subsets, skip)
    return [(m.start + 1, m.steps[-1].row + 1) for m in matches]


def test_skip_modes():
    # amt: 5 3 2 4 6 1 3 8 7. From row 1: S=5 D=3,2 U=4,6 (rows 1-5). Rows 3, 4, 6, 7, 8, 9
    # start nothing (no falling row after S, or no rising row after D). From row 2: S=3 D=2
    # U=4,6 (rows 2-5). From row 5: S=6 D=1 U=3,8 (rows 5-8).
    assert _starts_and_ends("past_last_row") == [(1, 5)]
    assert _starts_and_ends("to_next_row") == [(1, 5), (2, 5), (5, 8)]
    # TO LAST D: D = rows 2, 3, resume at row 3; TO FIRST U / TO U (= TO LAST U): U = rows
    # 4, 5, resume at row 4 / 5. All of them find (5, 8) next.
    assert _starts_and_ends(("to_last", "D")) == [(1, 5), (5, 8)]
    assert _starts_and_ends(("to_first", "U")) == [(1, 5), (5, 8)]
    assert _starts_and_ends(("to", "U")) == [(1, 5), (5, 8)]
    # a SUBSET as target: the first of {D, U} is row 2
    assert _starts_and_ends(("to_first", "DU"), {"DU": ["D", "U"]}) == [(1, 5), (2, 5), (5, 8)]


def test_skip_runtime_errors():
    with pytest.raises(MatchRecognizeError, match="skip to first row of match"):
        _starts_and_ends(("to_first", "S"))
    rows = kinds("a", "c")
    with pytest.raises(MatchRecognizeError, match="not present in match"):
        find_matches(rows, "A (B | C)", KINDS, skip=("to_last", "B"))
    # no error after an empty match: the next row is tried
    assert [m.is_empty for m in find_matches(rows, "B?", KINDS, skip=("to_first", "B"))] == [
        True,
        True,
    ]


# -- navigation ------------------------------------------------------------------------------------


def test_navigation_functions():
    rows = table("id, amt", *[(i, 10 * i) for i in range(1, 8)])
    steps = [Step(1, "A"), Step(2, "A"), Step(3, "B"), Step(4, "A")]  # rows 2..5 of 7
    running = Context(rows, steps, 2, 1)  # current row: id 4 (B)
    assert running.col("amt") == 40
    assert running.var("A", "amt") == 30  # last A so far
    assert running.first("amt", 1) == 30 and running.last("amt", 2) == 20
    assert running.last("amt", 3) is None  # only 3 rows so far
    assert running.prev("amt") == 30 and running.prev("amt", 3) == 10
    assert running.prev("amt", 2, logical="first") is None  # before the partition
    assert running.next("amt", 1, var="A", logical="first", logical_offset=1) == 40
    assert running.next("amt", 3) == 70
    assert running.next(CLASSIFIER) == "A"  # the whole match's labels
    assert running.next(CLASSIFIER, 2) is None  # outside the match
    assert running.classifier() == "B" and running.classifier("A") == "A"
    assert running.count("A") == 2 and running.final.count("A") == 3
    assert running.final.last("amt") == 50 and running.final.col("amt") == 50
    assert running.sum("amt") == 90 and running.avg("amt", {"A"}) == 25.0
    assert running.min(lambda r: r["amt"] - r["id"], "A") == 18
    assert running.max("amt", "AB") is None  # not a subset here: a variable without rows
    with_subset = Context(rows, steps, 2, 1, {"AB": ["A", "B"]})
    assert with_subset.max("amt", "AB") == 40 and with_subset.final.max("amt", "AB") == 50
    with pytest.raises(MatchRecognizeError, match="FINAL"):
        _ = Context(rows, steps, 2, 1, in_define=True).final


def test_classifier_of_later_row_is_null_in_define():
    rows = kinds("a", "b")
    seen = []

    def define_a(ctx):
        seen.append((ctx.classifier(), ctx.next(CLASSIFIER), ctx.next("kind")))
        return True

    find_matches(rows, "A B", {"A": define_a, "B": kind_is("b")})
    assert seen[0] == ("A", None, "b")


def test_sql_helpers():
    assert lt(None, 1) is None and lt(1, 2) is True
    assert sql_and(True, None) is None and sql_and(False, None) is False
    assert sql_or(True, None) is True and sql_or(False, None) is None
    assert sql_arith("*", 3, None) is None and coalesce(None, 4, 5) == 4


def test_sort_rows_nulls_and_directions():
    rows = table("k, v", (1, None), (2, 3), (3, 1))
    assert [r["k"] for r in sort_rows(rows, ["v"])] == [1, 3, 2]  # ASC NULLS FIRST
    assert [r["k"] for r in sort_rows(rows, [("v", "desc")])] == [2, 3, 1]  # DESC NULLS LAST
    assert [r["k"] for r in sort_rows(rows, [("v", "asc", "nulls_last")])] == [3, 2, 1]


# -- WITHIN ----------------------------------------------------------------------------------------


def test_within_rows_and_interval_make_the_search_backtrack():
    rows = table("id, t, amt", (1, 0, 1), (2, 10, 1), (3, 20, 9), (4, 30, 9))
    define = {"E": lambda c: gt(c.col("amt"), 5)}
    # S M* E without a window: S=1, M=2,3, E=4 (greedy)
    (m,) = find_matches(rows, "S M* E", define)
    assert m.labels == ["S", "M", "M", "E"]
    # 3 rows at most: M=2,3 leaves no E in the window, so M=2, E=3; row 4 starts nothing
    (m,) = find_matches(rows, "S M* E", define, within=WithinRows(3))
    assert m.labels == ["S", "M", "E"]
    # key distance at most 20 (inclusive): the same
    within = WithinInterval(key=lambda r: r["t"], interval=20)
    (m,) = find_matches(rows, "S M* E", define, within=within)
    assert m.labels == ["S", "M", "E"]
    # at most 19: from row 1 only row 2 fits (no E); from row 2: S=2, E=3
    within = WithinInterval(key=lambda r: r["t"], interval=19)
    (m,) = find_matches(rows, "S M* E", define, within=within)
    assert (m.rows, m.labels) == ([1, 2], ["S", "E"])


# ---------------------------------------------------------------------------------------------
# Conformance cases, hand-translated
# ---------------------------------------------------------------------------------------------


def test_conf_stock_v_shape_one_row():
    rows = table(
        "sym, tstamp, price",
        ("ACME", "2026-03-02 09:30:00", 50),
        ("ACME", "2026-03-02 09:31:00", 48),
        ("ACME", "2026-03-02 09:32:00", 45),
        ("ACME", "2026-03-02 09:33:00", 47),
        ("ACME", "2026-03-02 09:34:00", 52),
        ("ACME", "2026-03-02 09:35:00", 51),
        ("ACME", "2026-03-02 09:36:00", 49),
        ("ACME", "2026-03-02 09:37:00", 53),
        ("GLBX", "2026-03-02 09:30:00", 20),
        ("GLBX", "2026-03-02 09:31:00", 21),
        ("GLBX", "2026-03-02 09:32:00", 19),
        ("GLBX", "2026-03-02 09:33:00", 18),
        ("GLBX", "2026-03-02 09:34:00", 22),
        ("GLBX", "2026-03-02 09:35:00", 23),
        ("GLBX", "2026-03-02 09:36:00", 21),
    )
    result = run_partitioned(
        rows,
        ["sym"],
        ["tstamp"],
        "STRT DOWN+ UP+",
        define={
            "DOWN": lambda c: lt(c.var("DOWN", "price"), c.prev("price", var="DOWN")),
            "UP": lambda c: gt(c.var("UP", "price"), c.prev("price", var="UP")),
        },
        measures={
            "start_ts": lambda c: c.var("STRT", "tstamp"),
            "start_price": lambda c: c.var("STRT", "price"),
            "bottom_price": lambda c: c.last("price", var="DOWN"),
            "end_ts": lambda c: c.last("tstamp", var="UP"),
            "end_price": lambda c: c.last("price", var="UP"),
            "n_ticks": lambda c: c.count(),
        },
    )
    check_conformance("std.stock.v_shape_one_row", result)


def test_conf_stock_running_vs_final_all_rows():
    prices = {"AAA": [10, 12, 11, 13, 15, 14], "BBB": [7, 5, 6, 8, 4, 9]}
    rows = [
        {"sym": sym, "tstamp": f"2026-03-02 09:3{i}:00", "price": p}
        for sym, values in prices.items()
        for i, p in enumerate(values)
    ]
    result = run_partitioned(
        rows,
        ["sym"],
        ["tstamp"],
        "LO UP+",
        define={"UP": lambda c: gt(c.var("UP", "price"), c.prev("price", var="UP"))},
        measures={
            "cls": lambda c: c.classifier(),
            "run_cnt": lambda c: c.count(),
            "fin_cnt": lambda c: c.final.count(),
            "run_last": lambda c: c.running.last("price"),
            "fin_last": lambda c: c.final.last("price"),
            "run_max_up": lambda c: c.max("price", "UP"),
            "fin_max_up": lambda c: c.final.max("price", "UP"),
            "fin_first_up": lambda c: c.final.first("price", 0, "UP"),
        },
        rows_per_match="all_show",
    )
    check_conformance("std.stock.running_vs_final_all_rows", result)


def test_conf_quantifier_star_reluctant():
    rows = table(
        "id, amt", (1, 3), (2, 4), (3, 12), (4, 5), (5, 6), (6, 7), (7, 15), (8, 2), (9, 1)
    )
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "A*? B",
        define={"A": lambda c: lt(c.var("A", "amt"), 10), "B": lambda c: gt(c.var("B", "amt"), 5)},
        measures={"mno": lambda c: c.match_number(), "cls": lambda c: c.classifier()},
        rows_per_match="all_show",
    )
    check_conformance("std.quantifier.star_reluctant", result)


def test_conf_exclusion_middle_excluded_all_rows():
    rows = table("id, amt", (1, 4), (2, 2), (3, 1), (4, 3), (5, 5), (6, 2), (7, 6), (8, 7))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "S {- DN+ -} UP+",
        define={"DN": falling("DN"), "UP": rising("UP")},
        measures={"cls": lambda c: c.classifier(), "n_dn": lambda c: c.count("DN")},
        rows_per_match="all_show",
    )
    check_conformance("std.exclusion.middle_excluded_all_rows", result)


def test_conf_skip_to_first_subset_all_rows():
    result = run_partitioned(
        SKIP_ROWS,
        [],
        ["id"],
        "S D+ U",
        define=SKIP_DEFINE,
        subsets={"DU": ["D", "U"]},
        skip=("to_first", "DU"),
        measures={"mno": lambda c: c.match_number(), "cls": lambda c: c.classifier()},
        rows_per_match="all_show",
    )
    check_conformance("std.skip.to_first_subset_all_rows", result)


def test_conf_skip_to_last_d():
    result = run_partitioned(
        SKIP_ROWS,
        [],
        ["id"],
        "S D+ U+",
        define=SKIP_DEFINE,
        skip=("to_last", "D"),
        measures={
            "mno": lambda c: c.match_number(),
            "start_id": lambda c: c.first("id"),
            "end_id": lambda c: c.last("id"),
            "last_d": lambda c: c.last("id", var="D"),
        },
    )
    check_conformance("std.skip.to_last_d", result)


def test_conf_skip_error_variable_absent():
    rows = table("id, kind", (1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "b"))
    check_conformance_error(
        "std.skip.error_variable_absent",
        lambda: run_partitioned(
            rows,
            [],
            ["id"],
            "A (B | C)",
            KINDS,
            {"cls": lambda c: c.classifier()},
            skip=("to_last", "B"),
        ),
    )


def test_conf_skip_error_first_row_on_second_match():
    rows = table("id, kind", (1, "a"), (2, "b"), (3, "c"), (4, "b"), (5, "c"))
    check_conformance_error(
        "std.skip.error_first_row_on_second_match",
        lambda: run_partitioned(
            rows,
            [],
            ["id"],
            "A* B C",
            KINDS,
            {"cls": lambda c: c.classifier()},
            rows_per_match="all_show",
            skip=("to_first", "B"),
        ),
    )


def test_conf_navigation_classifier_through_prev_next():
    rows = table("id, kind", (1, "x"), (2, "y"), (3, "y"), (4, "x"), (5, "y"), (6, "x"))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "X Y+",
        define={"X": kind_is("x"), "Y": kind_is("y")},
        measures={
            "cls": lambda c: c.classifier(),
            "prev_cls": lambda c: c.prev(CLASSIFIER),
            "next_cls": lambda c: c.next(CLASSIFIER),
            "first_cls_fin": lambda c: c.final.first(CLASSIFIER, 1),
        },
        rows_per_match="all_show",
    )
    check_conformance("std.navigation.classifier_through_prev_next", result)


def test_conf_navigation_nested_prev_first_next_last():
    rows = table("id, amt", *[(i, 10 * i) for i in range(1, 8)])
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "A{3} B",
        define={"A": lambda c: gt(c.col("amt"), 15)},
        measures={
            "before_start": lambda c: c.prev("amt", logical="first"),
            "two_before_b": lambda c: c.prev("amt", 2, var="B"),
            "after_a": lambda c: c.next("amt", 2, var="A", logical="last", logical_offset=1),
            "before_a2": lambda c: c.prev("amt", 1, var="A", logical="first", logical_offset=1),
        },
    )
    check_conformance("std.navigation.nested_prev_first_next_last", result)


def test_conf_navigation_first_last_logical_offsets_running_final():
    rows = table("id, amt", *[(i, 10 * i) for i in range(1, 8)])
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "A+ B",
        define={"A": lambda c: lt(c.col("amt"), 50)},
        measures={
            "f1": lambda c: c.first("amt", 1),
            "l1": lambda c: c.last("amt", 1),
            "f_fin2": lambda c: c.final.first("amt", 2),
            "l_fin1": lambda c: c.final.last("amt", 1),
            "fa": lambda c: c.first("amt", 1, "A"),
            "la_fin": lambda c: c.final.last("amt", 3, "A"),
        },
        rows_per_match="all_show",
    )
    check_conformance("std.navigation.first_last_logical_offsets_running_final", result)


TRADES = table(
    "id, kind, amt, qty",
    (1, "buy", 10, 2),
    (2, "buy", 12, None),
    (3, "sell", 11, 5),
    (4, "buy", 9, 1),
    (5, "sell", 15, 3),
    (6, "sell", None, 4),
    (7, "buy", 14, 6),
    (8, "sell", 13, 2),
)


def test_conf_aggregate_running_and_final_all_rows():
    result = run_partitioned(
        TRADES,
        [],
        ["id"],
        "B+ S+",
        define={"B": kind_is("buy"), "S": kind_is("sell")},
        measures={
            "cls": lambda c: c.classifier(),
            "run_sum": lambda c: c.sum("amt"),
            "fin_sum": lambda c: c.final.sum("amt"),
            "run_avg_s": lambda c: c.avg("amt", "S"),
            "fin_cnt_b": lambda c: c.final.count("B"),
            "run_min": lambda c: c.running.min("amt"),
        },
        rows_per_match="all_show",
    )
    check_conformance("std.aggregate.running_and_final_all_rows", result)


def test_conf_aggregate_all_kinds_one_row():
    result = run_partitioned(
        TRADES,
        [],
        ["id"],
        "(B | S)+",
        define={"B": kind_is("buy"), "S": kind_is("sell")},
        measures={
            "n_all": lambda c: c.count(),
            "n_buy": lambda c: c.count("B"),
            "n_qty": lambda c: c.count_col("qty"),
            "n_sell_amt": lambda c: c.count_col("amt", "S"),
            "sum_amt": lambda c: c.sum("amt"),
            "avg_qty": lambda c: c.avg("qty"),
            "min_s": lambda c: c.min("amt", "S"),
            "max_b": lambda c: c.max("amt", "B"),
            "avg_b_total": lambda c: c.avg(lambda r: sql_arith("*", r["amt"], r["qty"]), "B"),
        },
    )
    check_conformance("std.aggregate.all_kinds_one_row", result)


CYCLE_ROWS = table("id, amt", (1, 2), (2, 9), (3, 8), (4, 1), (5, 9))


@pytest.mark.parametrize(
    "case_id, pattern",
    [
        ("std.empty_cycle.star_of_star", "(H*)*"),
        ("std.empty_cycle.alt_with_empty_branch", "(H* | L)+"),
        ("std.empty_cycle.reluctant_inner", "(H*?)+ L?"),
        ("std.empty_cycle.empty_branch_first", "(() | H)+"),
    ],
)
def test_conf_empty_cycles(case_id, pattern):
    result = run_partitioned(
        CYCLE_ROWS,
        [],
        ["id"],
        pattern,
        define={"H": lambda c: gt(c.col("amt"), 5), "L": lambda c: lt(c.col("amt"), 5)},
        measures={
            "mno": lambda c: c.match_number(),
            "cls": lambda c: c.classifier(),
            "n": lambda c: c.count(),
        },
        rows_per_match="all_show",
    )
    check_conformance(case_id, result)


def test_conf_output_mode_star_all_rows_unmatched():
    result = run_partitioned(
        EMPTY_ROWS, [], ["id"], "BIG*", BIG, EMPTY_MEASURES, rows_per_match="all_unmatched"
    )
    check_conformance("std.output_mode.star_all_rows_unmatched", result)


def test_conf_permute_lexicographic_preference():
    rows = table("id, amt", (1, 5), (2, 6), (3, 7), (4, 8))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "PERMUTE(X, Y)",
        define={"X": lambda c: gt(c.col("amt"), 5), "Y": lambda c: gt(c.col("amt"), 4)},
        measures={"cls": lambda c: c.classifier()},
        rows_per_match="all_show",
    )
    check_conformance("std.permute.lexicographic_preference", result)


def test_conf_anchor_start_inside_alternation():
    rows = table(
        "grp, id, amt",
        ("g1", 1, 5),
        ("g1", 2, 6),
        ("g1", 3, 1),
        ("g1", 4, 7),
        ("g2", 1, 2),
        ("g2", 2, 8),
        ("g2", 3, 9),
    )
    result = run_partitioned(
        rows,
        ["grp"],
        ["id"],
        "(^ H | T) T?",
        define={"H": lambda c: True, "T": lambda c: gt(c.col("amt"), 6)},
        measures={"cls": lambda c: c.classifier(), "mno": lambda c: c.match_number()},
        rows_per_match="all_show",
    )
    check_conformance("std.anchor.start_inside_alternation", result)


def test_conf_subset_two_subsets_one_row():
    rows = table(
        "id, kind, amt",
        (1, "a", 5),
        (2, "b", 7),
        (3, "c", 2),
        (4, "b", 4),
        (5, "a", 9),
        (6, "c", 3),
        (7, "c", 6),
        (8, "a", 1),
    )
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "A (B | C){2,}",
        define=KINDS,
        subsets={"AB": ["A", "B"], "BC": ["B", "C"]},
        measures={
            "first_bc": lambda c: c.first("amt", 0, "BC"),
            "last_ab": lambda c: c.last("amt", 0, "AB"),
            "avg_bc": lambda c: c.avg("amt", "BC"),
            "max_ab": lambda c: c.final.max("amt", "AB"),
            "min_bc": lambda c: c.min("amt", "BC"),
        },
    )
    check_conformance("std.subset.two_subsets_one_row", result)


def test_conf_sensor_out_of_band_subset():
    pressures = [50, 62, 35, 64, 49, 51, 30, 28, 52, 47, 66, 50]
    rows = [
        {"sensor": "boiler", "rts": f"2026-03-06 00:{5 * i:02d}:00", "pressure": p}
        for i, p in enumerate(pressures)
    ]

    def normal(c):
        return sql_and(ge(c.col("pressure"), 40), le(c.col("pressure"), 60))

    result = run_partitioned(
        rows,
        ["sensor"],
        ["rts"],
        "NORM (HI | LO)+ BACK",
        define={
            "NORM": normal,
            "HI": lambda c: gt(c.col("pressure"), 60),
            "LO": lambda c: lt(c.col("pressure"), 40),
            "BACK": normal,
        },
        subsets={"OUTB": ["HI", "LO"]},
        measures={
            "start_ts": lambda c: c.var("NORM", "rts"),
            "n_out": lambda c: c.count("OUTB"),
            "max_out": lambda c: c.max("pressure", "OUTB"),
            "min_out": lambda c: c.min("pressure", "OUTB"),
            "last_kind": lambda c: c.classifier("OUTB"),
            "back_ts": lambda c: c.last("rts", var="BACK"),
        },
    )
    check_conformance("std.sensor.out_of_band_subset", result)


def test_conf_match_number_per_partition_and_in_define():
    rows = table(
        "grp, id, amt",
        ("p", 1, 1),
        ("p", 2, 2),
        ("p", 3, 3),
        ("p", 4, 4),
        ("p", 5, 5),
        ("q", 1, 9),
        ("q", 2, 8),
        ("q", 3, 7),
    )
    result = run_partitioned(
        rows,
        ["grp"],
        ["id"],
        "A B?",
        define={"B": lambda c: lt(c.match_number(), 2)},
        measures={"mno": lambda c: c.match_number(), "n": lambda c: c.count()},
    )
    check_conformance("std.match_number.per_partition_and_in_define", result)


def test_conf_classifier_in_define_previous_label():
    rows = table("id, amt", (1, 1), (2, 2), (3, 3), (4, 2), (5, 1), (6, 5), (7, 6), (8, 1))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "(U | D)+",
        define={
            "U": lambda c: gt(c.col("amt"), coalesce(c.prev("amt"), 0)),
            "D": lambda c: eq(c.prev(CLASSIFIER), "U"),
        },
        measures={"cls": lambda c: c.classifier()},
        rows_per_match="all_show",
    )
    check_conformance("std.classifier.in_define_previous_label", result)


def test_conf_alternation_backtrack_into_second_branch():
    rows = table(
        "id, kind, amt",
        (1, "p", 1),
        (2, "q", 2),
        (3, "p", 3),
        (4, "r", 4),
        (5, "q", 5),
        (6, "p", 6),
    )
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "(X | Y) Z",
        define={
            "X": lambda c: lt(c.col("amt"), 5),
            "Y": lambda c: lt(c.col("amt"), 10),
            "Z": lambda c: gt(c.var("Z", "amt"), coalesce(c.var("Y", "amt"), 100)),
        },
        measures={"cls": lambda c: c.classifier()},
        rows_per_match="all_show",
    )
    check_conformance("std.alternation.backtrack_into_second_branch", result)


def test_conf_define_refers_to_later_variable_is_null():
    rows = table("id, amt", (1, 5), (2, 8), (3, 6), (4, 9), (5, 4), (6, 7), (7, 10), (8, 3))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "A? B",
        define={
            "A": lambda c: lt(c.var("A", "amt"), c.var("B", "amt")),
            "B": lambda c: gt(c.var("B", "amt"), 6),
        },
        measures={"a": lambda c: c.var("A", "amt"), "b": lambda c: c.var("B", "amt")},
    )
    check_conformance("std.define.refers_to_later_variable_is_null", result)


WITHIN_ROWS_DATA = table(
    "dev, ets, amt",
    ("d1", "2026-03-10 14:00:00", 1),
    ("d1", "2026-03-10 14:00:20", 3),
    ("d1", "2026-03-10 14:00:30", 5),
    ("d1", "2026-03-10 14:00:45", 2),
    ("d1", "2026-03-10 14:01:10", 6),
    ("d1", "2026-03-10 14:01:40", 7),
    ("d1", "2026-03-10 14:01:45", 9),
    ("d1", "2026-03-10 14:02:30", 1),
)


def test_conf_within_interval_forces_backtrack():
    result = run_partitioned(
        WITHIN_ROWS_DATA,
        ["dev"],
        ["ets"],
        "S M* E",
        define={"E": lambda c: gt(c.col("amt"), 4)},
        measures={
            "start_amt": lambda c: c.var("S", "amt"),
            "end_amt": lambda c: c.var("E", "amt"),
            "n": lambda c: c.count(),
        },
        within=WithinInterval(key=lambda r: ts(r["ets"]), interval=timedelta(minutes=1)),
    )
    check_conformance("std.within.interval_forces_backtrack", result)


def test_conf_within_rows_all_rows_skip_to_next():
    result = run_partitioned(
        WITHIN_ROWS_DATA,
        ["dev"],
        ["ets"],
        "L H+",
        define={"L": lambda c: lt(c.col("amt"), 4), "H": lambda c: gt(c.col("amt"), 2)},
        measures={"mno": lambda c: c.match_number(), "cls": lambda c: c.classifier()},
        rows_per_match="all_show",
        skip=("to_next_row",),
        within=WithinRows(3),
    )
    check_conformance("std.within.rows_all_rows_skip_to_next", result)


# -- SKIP TILL NEXT MATCH cases --------------------------------------------------------------------

NOISY = table(
    "id, kind, amt",
    *[(i + 1, k, i + 1) for i, k in enumerate(["a", "x", "b", "b", "x", "c", "a", "c", "b", "c"])],
)


def test_conf_stnm_seq_skips_noise():
    result = run_partitioned(
        NOISY,
        [],
        ["id"],
        "A B C",
        KINDS,
        {
            "a_id": lambda c: c.var("A", "id"),
            "b_id": lambda c: c.var("B", "id"),
            "c_id": lambda c: c.var("C", "id"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.seq_skips_noise", result)


def test_conf_stnm_alternation_element():
    result = run_partitioned(
        NOISY,
        [],
        ["id"],
        "A (B | C) A",
        KINDS,
        {
            "a_id": lambda c: c.var("A", "id"),
            "mid_id": lambda c: c.last("id", var="BC"),
            "mid_kind": lambda c: c.last("kind", var="BC"),
        },
        subsets={"BC": ["B", "C"]},
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.alternation_element", result)


def test_conf_stnm_pairwise_condition():
    rows = table("id, amt", (1, 5), (2, 1), (3, 7), (4, 3), (5, 9), (6, 2), (7, 4), (8, 11))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "LO HI",
        define={
            "LO": lambda c: lt(c.col("amt"), 4),
            "HI": lambda c: gt(c.var("HI", "amt"), sql_arith("+", c.var("LO", "amt"), 5)),
        },
        measures={
            "lo_id": lambda c: c.var("LO", "id"),
            "hi_id": lambda c: c.var("HI", "id"),
            "hi_amt": lambda c: c.var("HI", "amt"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.pairwise_condition", result)


def test_conf_stnm_with_within_interval():
    events = [
        ("09:00", "open"),
        ("09:03", "noise"),
        ("09:06", "close"),
        ("09:20", "open"),
        ("09:26", "noise"),
        ("09:31", "close"),
        ("09:33", "open"),
        ("09:38", "close"),
    ]
    rows = [{"dev": "d3", "ets": f"2026-03-12 {t}:00", "kind": k} for t, k in events]
    result = run_partitioned(
        rows,
        ["dev"],
        ["ets"],
        "O K",
        define={"O": kind_is("open"), "K": kind_is("close")},
        measures={"opened": lambda c: c.var("O", "ets"), "closed": lambda c: c.var("K", "ets")},
        within=WithinInterval(key=lambda r: ts(r["ets"]), interval=timedelta(minutes=10)),
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.with_within_interval", result)


def test_conf_stnm_quantified_contiguous_run():
    rows = kinds("a", "x", "b", "b", "b", "x", "c")
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "A B+ C",
        KINDS,
        {
            "a_id": lambda c: c.var("A", "id"),
            "nb": lambda c: c.count("B"),
            "c_id": lambda c: c.var("C", "id"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.quantified_contiguous_run", result)


def test_conf_stnm_alternation_first_fitting_row():
    tickets = {
        "T1": ["opened", "commented", "resolved", "escalated"],
        "T2": ["opened", "escalated", "resolved"],
        "T3": ["opened", "commented", "commented"],
    }
    rows = [
        {"ticket": t, "ets": f"2026-03-13 10:0{i}:00", "event": e}
        for t, events in tickets.items()
        for i, e in enumerate(events)
    ]

    def event_is(value):
        return lambda c: eq(c.col("event"), value)

    result = run_partitioned(
        rows,
        ["ticket"],
        ["ets"],
        "OP (ES | RS)",
        define={"OP": event_is("opened"), "ES": event_is("escalated"), "RS": event_is("resolved")},
        measures={
            "opened_at": lambda c: c.var("OP", "ets"),
            "escalated_at": lambda c: c.var("ES", "ets"),
            "resolved_at": lambda c: c.var("RS", "ets"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.alternation_first_fitting_row", result)


def test_conf_stnm_leave_loop_before_skip():
    pages = ["login", "view", "ad", "view", "checkout", "view", "checkout"]
    rows = table("id, page", *[(i + 1, p) for i, p in enumerate(pages)])

    def page_is(value):
        return lambda c: eq(c.col("page"), value)

    result = run_partitioned(
        rows,
        [],
        ["id"],
        "LI VW+ CO",
        define={"LI": page_is("login"), "VW": page_is("view"), "CO": page_is("checkout")},
        measures={
            "login_id": lambda c: c.var("LI", "id"),
            "views": lambda c: c.count("VW"),
            "last_view": lambda c: c.last("id", var="VW"),
            "checkout_id": lambda c: c.var("CO", "id"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.leave_loop_before_skip", result)


def test_conf_stnm_optional_element_ends_match():
    rows = table("id, kind", (1, "alarm"), (2, "noise"), (3, "ack"), (4, "alarm"), (5, "ack"))
    result = run_partitioned(
        rows,
        [],
        ["id"],
        "AL ACK?",
        define={"AL": kind_is("alarm"), "ACK": kind_is("ack")},
        measures={"alarm_id": lambda c: c.var("AL", "id"), "ack_id": lambda c: c.var("ACK", "id")},
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.optional_element_ends_match", result)


def test_conf_stnm_reluctant_iteration_before_skip():
    result = run_partitioned(
        kinds("a", "b", "x", "b", "c"),
        [],
        ["id"],
        "A B+? C",
        KINDS,
        {
            "a_id": lambda c: c.var("A", "id"),
            "nb": lambda c: c.count("B"),
            "last_b": lambda c: c.last("id", var="B"),
            "c_id": lambda c: c.var("C", "id"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.reluctant_iteration_before_skip", result)


def test_conf_stnm_alternation_inside_loop():
    result = run_partitioned(
        kinds("a", "b", "x", "c", "d", "c", "d"),
        [],
        ["id"],
        "A (B | C)+ D",
        KINDS,
        {
            "a_id": lambda c: c.var("A", "id"),
            "nb": lambda c: c.count("B"),
            "nc": lambda c: c.count("C"),
            "last_c": lambda c: c.last("id", var="C"),
            "d_id": lambda c: c.var("D", "id"),
        },
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.alternation_inside_loop", result)


def test_conf_stnm_permute_order_then_skip():
    rows = table(
        "grp, id, kind",
        ("g1", 1, "e"),
        ("g1", 2, "x"),
        ("g1", 3, "b"),
        ("g1", 4, "a"),
        ("g2", 1, "e"),
        ("g2", 2, "x"),
        ("g2", 3, "a"),
    )
    result = run_partitioned(
        rows,
        ["grp"],
        ["id"],
        "PERMUTE(A, B)",
        define={
            "A": lambda c: sql_or(eq(c.col("kind"), "e"), eq(c.col("kind"), "a")),
            "B": lambda c: sql_or(eq(c.col("kind"), "e"), eq(c.col("kind"), "b")),
        },
        measures={"a_id": lambda c: c.var("A", "id"), "b_id": lambda c: c.var("B", "id")},
        skip_till_next=True,
    )
    check_conformance("std.skip_till_next_match.permute_order_then_skip", result)


# -- generated cases of the conformance suite ------------------------------------------------------


def test_conf_gen_003():
    rows = table(
        "dev, seq, amt, kind",
        (1, 5, 8, "b"),
        (2, 7, 7, "b"),
        (2, 18, 0, "a"),
        (1, 2, 8, "a"),
        (2, 10, 7, "a"),
        (1, 1, 3, "a"),
        (2, 12, 7, "b"),
        (1, 15, 6, "c"),
        (2, 4, 5, "b"),
        (1, 7, 0, "c"),
        (2, 17, 3, "c"),
        (2, 3, 1, "b"),
        (2, 22, 6, "a"),
        (1, 18, 2, "a"),
        (1, 6, 1, "c"),
        (1, 13, 2, "a"),
    )
    result = run_partitioned(
        rows,
        ["dev"],
        ["seq"],
        "B (A A B+?)",
        define={"A": lambda c: le(c.var("A", "amt"), coalesce(c.var("B", "amt"), 4))},
        measures={
            "back1": lambda c: c.last("amt", 1),
            "mno": lambda c: c.match_number(),
            "x_second": lambda c: c.first("amt", 1, "A"),
            "run_n": lambda c: c.count(),
        },
        rows_per_match="all_unmatched",
        skip=("to_next_row",),
        within=WithinRows(5),
    )
    check_conformance("std.gen.003", result)


def test_conf_gen_008():
    rows = table(
        "dev, seq, amt, kind",
        (2, 4, 3, "a"),
        (3, 8, 7, "c"),
        (3, 6, 8, "b"),
        (1, 6, 2, "b"),
        (3, 2, 5, "a"),
        (1, 13, 5, "b"),
        (3, 1, 0, "a"),
        (3, 15, 2, "c"),
        (1, 11, 9, "c"),
        (1, 9, 2, "a"),
        (3, 11, 2, "a"),
        (2, 2, 7, "c"),
        (1, 4, 3, "b"),
        (2, 5, 0, "a"),
    )
    result = run_partitioned(
        rows,
        ["dev"],
        ["seq"],
        "B* ((B*? B{0,3}?) A{0,2})+ A",
        define={
            "B": lambda c: gt(c.var("B", "amt"), c.first("amt")),
            "A": lambda c: ge(c.var("A", "amt"), coalesce(c.prev("amt", var="A"), 0)),
        },
        measures={
            "fin_x_max": lambda c: c.final.max("amt", "A"),
            "x_second": lambda c: c.first("amt", 1, "A"),
            "mno": lambda c: c.match_number(),
        },
        rows_per_match="all_omit",
    )
    check_conformance("std.gen.008", result)


def test_conf_gen_012():
    rows = table(
        "seq, amt", (3, 9), (22, 9), (23, 7), (10, 3), (21, 6), (12, 7), (11, 0), (19, 6), (6, 4)
    )
    result = run_partitioned(
        rows,
        [],
        ["seq"],
        "((B D?) (B* C?)?)+? ((A A+) {- D -})",
        define={
            "B": falling("B"),
            "D": lambda c: sql_and(
                ge(c.var("D", "amt"), coalesce(c.prev("amt", var="D"), 0)),
                gt(c.var("D", "amt"), 2),
            ),
            "C": lambda c: lt(c.sum("amt", "C"), 18),
            "A": falling("A"),
        },
        measures={
            "mno": lambda c: c.match_number(),
            "back1": lambda c: c.last("amt", 1),
            "nxt": lambda c: c.next("amt"),
            "prv": lambda c: c.prev("amt"),
            "x_last": lambda c: c.var("D", "amt"),
        },
        rows_per_match="all_show",
        skip=("to_first", "A"),
    )
    check_conformance("std.gen.012", result)


def test_conf_gen_014():
    rows = table(
        "grp, day, slot, amt",
        ("g2", "2026-05-01", 3, 4),
        ("g1", "2026-05-02", 1, 4),
        ("g2", "2026-05-03", 2, 6),
        ("g2", "2026-05-01", 2, 5),
        ("g1", "2026-05-03", 3, 3),
        ("g1", "2026-05-01", 3, 5),
        ("g1", "2026-05-02", 3, 4),
        ("g2", "2026-05-02", 4, 1),
        ("g1", "2026-05-02", 4, 0),
        ("g1", "2026-05-01", 4, 3),
        ("g1", "2026-05-01", 2, 7),
        ("g2", "2026-05-03", 1, 1),
        ("g2", "2026-05-02", 2, 5),
        ("g1", "2026-05-03", 2, 1),
        ("g2", "2026-05-03", 4, 5),
    )

    def non_decreasing(var):
        return lambda c: ge(c.var(var, "amt"), coalesce(c.prev("amt", var=var), 0))

    result = run_partitioned(
        rows,
        ["grp"],
        ["day", "slot"],
        "D{0,3} PERMUTE(D, B, C) B",
        define={"D": non_decreasing("D"), "B": non_decreasing("B")},
        measures={
            "mno": lambda c: c.match_number(),
            "prv": lambda c: c.prev("amt"),
            "run_sum": lambda c: c.sum("amt"),
            "fin_first_cls": lambda c: c.final.first(CLASSIFIER),
            "nxt": lambda c: c.next("amt"),
        },
        rows_per_match="all_show",
    )
    check_conformance("std.gen.014", result)


def test_conf_gen_021():
    rows = table(
        "dev, ets, amt, kind",
        (1, "2026-04-26 04:30:00", 9, "c"),
        (1, "2026-04-26 04:07:00", 7, "b"),
        (1, "2026-04-26 04:56:00", 8, "b"),
        (1, "2026-04-26 04:38:00", 7, "b"),
        (1, "2026-04-26 04:14:00", 6, "a"),
        (2, "2026-04-26 04:04:00", 1, "b"),
        (2, "2026-04-26 04:11:00", 0, "b"),
        (2, "2026-04-26 04:14:00", 5, "c"),
        (1, "2026-04-26 04:46:00", 9, "c"),
    )
    result = run_partitioned(
        rows,
        ["dev"],
        ["ets"],
        "B {- B | B{0,2} -}",
        define={"B": lambda c: gt(c.var("B", "amt"), 3)},
        measures={
            "mno": lambda c: c.match_number(),
            "run_n": lambda c: c.count(),
            "x_last": lambda c: c.var("B", "amt"),
            "fin_last": lambda c: c.final.last("amt"),
        },
        rows_per_match="all_show",
        within=WithinInterval(key=lambda r: ts(r["ets"]), interval=timedelta(minutes=20)),
    )
    check_conformance("std.gen.021", result)


def test_conf_gen_025():
    rows = table(
        "grp, ets, amt",
        ("g2", "2026-04-20 12:15:00", 7),
        ("g1", "2026-04-20 12:34:00", None),
        ("g2", "2026-04-20 12:46:00", 7),
        ("g1", "2026-04-20 12:10:00", 8),
        ("g2", "2026-04-20 12:09:00", None),
        ("g2", "2026-04-20 12:40:00", 1),
        ("g2", "2026-04-20 12:56:00", 8),
        ("g1", "2026-04-20 12:07:00", None),
    )
    result = run_partitioned(
        rows,
        ["grp"],
        ["ets"],
        "B{1}? PERMUTE(B, A)",
        define={"A": falling("A")},
        measures={
            "cls": lambda c: c.classifier(),
            "fin_last": lambda c: c.final.last("amt"),
            "back1": lambda c: c.last("amt", 1),
        },
        rows_per_match="all_unmatched",
    )
    check_conformance("std.gen.025", result, select=["grp", "cls", "fin_last", "back1", "ets"])


def test_conf_gen_026():
    rows = table(
        "dev, ets, amt",
        (2, "2026-04-19 00:38:00", 9),
        (1, "2026-04-19 00:34:00", 7),
        (2, "2026-04-19 00:50:00", 4),
        (1, "2026-04-19 00:10:00", 2),
        (1, "2026-04-19 00:22:00", 1),
        (2, "2026-04-19 00:29:00", 5),
        (2, "2026-04-19 00:53:00", 7),
        (2, "2026-04-19 00:35:00", 8),
        (1, "2026-04-19 00:26:00", 6),
    )
    result = run_partitioned(
        rows,
        ["dev"],
        ["ets"],
        "A* (A{0,2}? (D | D{1,2})){2,3}?",
        define={"D": rising("D")},
        subsets={"U": ["A", "D"]},
        measures={
            "m_start": lambda c: c.first("ets"),
            "cls": lambda c: c.classifier(),
            "n_rows": lambda c: c.count(),
        },
        skip=("to_next_row",),
    )
    check_conformance("std.gen.026", result, select=["dev", "m_start", "cls", "n_rows"])


# ---------------------------------------------------------------------------------------------
# The random case generator
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", random_cases.LEVELS)
def test_generate_is_deterministic(level):
    for seed in range(5):
        a, b = random_cases.generate(seed, level), random_cases.generate(seed, level)
        assert (a.sql, a.columns, a.rows, a.expect_error) == (
            b.sql,
            b.columns,
            b.rows,
            b.expect_error,
        )
    assert random_cases.generate(1, level).sql != random_cases.generate(2, level).sql


def _balanced(text: str) -> bool:
    depth = 0
    for ch in re.sub(r"'[^']*'", "''", text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("level", random_cases.LEVELS)
def test_generated_sql_looks_right(level):
    for seed in range(40):
        case = random_cases.generate(seed, level)
        sql = case.sql
        assert sql.startswith("SELECT *\nFROM (VALUES\n")
        assert ") AS t(id, part, x, y)\nMATCH_RECOGNIZE (\n" in sql
        assert sql.endswith("\n) AS mr")
        assert _balanced(sql)
        for clause in ["PARTITION BY part", "ORDER BY id", "MEASURES", "PATTERN (", "DEFINE"]:
            assert clause in sql
        # the PATTERN clause parses back to the spec's pattern
        pattern_line = next(line for line in sql.splitlines() if line.startswith("  PATTERN ("))
        parsed = parse_pattern(pattern_line.strip()[len("PATTERN (") : -1])
        assert simplify_pattern(parsed) == simplify_pattern(case.spec.pattern)
        # clause order: ... PATTERN, WITHIN, SUBSET, DEFINE
        positions = [sql.find(k) for k in ["MEASURES", "PATTERN (", "DEFINE"]]
        assert positions == sorted(positions)
        if level == "basic":
            assert "ONE ROW PER MATCH" in sql and "AFTER MATCH SKIP PAST LAST ROW" in sql
            for word in ["|", "PERMUTE", "{-", "FINAL", "NEXT(", "SUBSET", "WITHIN", "NULL"]:
                assert word not in sql
        if level == "next_match":
            assert "ONE ROW PER MATCH\n  SKIP TILL NEXT MATCH\n  PATTERN (" in sql
            for word in ["AFTER MATCH", "count(*)", "CLASSIFIER", "PREV(", "NEXT(", "{-", "^"]:
                assert word not in sql


@pytest.mark.parametrize("level", random_cases.LEVELS)
def test_generated_expectations_follow_the_layout_and_the_reference(level):
    for seed in range(40):
        case = random_cases.generate(seed, level)
        spec = case.spec
        if case.expect_error:
            assert case.expect_error in random_cases.RUNTIME_ERROR_PHRASES
            assert case.rows == [] and case.columns == []
            continue
        names = [name for name, _ in spec.measures]
        if spec.rows_per_match == "one":
            assert case.columns == ["part", *names]
        else:
            assert case.columns == ["part", "id", *names, "x", "y"]
        assert all(len(row) == len(case.columns) for row in case.rows)
        again = spec.run_reference()
        assert (again.columns, again.rows) == (case.columns, case.rows)
        as_json = case.as_conformance_case()
        assert as_json["expect"]["rows"] == case.rows and as_json["id"] == case.id


def test_generated_full_level_covers_the_features():
    seen = set()
    for seed in range(150):
        seen.update(random_cases.generate(seed, "full").features)
    for feature in [
        "alternation",
        "permute",
        "exclusion",
        "anchor_start",
        "anchor_end",
        "reluctant_quantifier",
        "subset",
        "final",
        "next",
        "prev",
        "aggregate",
        "rows_one",
        "rows_all_show",
        "rows_all_omit",
        "rows_all_unmatched",
        "skip_to_next_row",
        "skip_to_first",
        "skip_to_last",
        "runtime_error",
        "null_values",
    ]:
        assert feature in seen, feature
