"""Hand-worked checks of the SKIP TILL ANY MATCH reference (cep_reference.py) on the range
of a trailing negation: after the match's last row, up to the end of the window that opens
at the match's FIRST row (inclusive, as the window of the match itself). The answers are
derived in the comments; the end-to-end tests of the same rule are in
test_any_match_trailing_negation.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .cep_reference import WithinInterval, WithinRows, any_match, sql_cmp

BASE = datetime(2026, 1, 1)


def _rows(spec):
    """(id, minute, sym) triples as input rows."""
    return [{"id": i, "ts": BASE + timedelta(minutes=m), "sym": s} for i, m, s in spec]


def _is(var):
    return lambda c: sql_cmp("=", c.var(var, "sym"), var.lower())


DEFINE = {v: _is(v) for v in ("A", "B", "C", "N")}


def _matches(spec, pattern, within, measures):
    result = any_match(_rows(spec), [], ["ts"], pattern, DEFINE, measures, within)
    return sorted(tuple(r) for r in result.rows)


def _ab(spec, within):
    measures = {"a": lambda c: c.last("A", "id"), "b": lambda c: c.last("B", "id")}
    return _matches(spec, "A B !N", within, measures)


FIVE_MINUTES = WithinInterval(timedelta(minutes=5))


def test_an_n_row_past_the_first_rows_window_does_not_negate():
    # A at 0, B at 4: the match's window is [0, 5]. N at 7 lies after B and within B's own
    # five minutes, but past the end of the match's window: the match stands.
    assert _ab([(1, 0, "a"), (2, 4, "b"), (3, 7, "n")], FIVE_MINUTES) == [(1, 2)]
    # N at 6: one minute past the window's end, still a match.
    assert _ab([(1, 0, "a"), (2, 4, "b"), (3, 6, "n")], FIVE_MINUTES) == [(1, 2)]


def test_an_n_row_at_the_end_of_the_window_negates_the_match():
    # The window is inclusive (last - first <= 5 minutes): N at exactly 5 is inside it.
    assert _ab([(1, 0, "a"), (2, 4, "b"), (3, 5, "n")], FIVE_MINUTES) == []


def test_each_match_looks_up_to_the_end_of_its_own_window():
    # A at 0 and at 3, B at 4, N at 7: (A@0, B) has the window [0, 5], N is past it; (A@3,
    # B) has [3, 8], N is inside it.
    spec = [(1, 0, "a"), (2, 3, "a"), (3, 4, "b"), (4, 7, "n")]
    assert _ab(spec, FIVE_MINUTES) == [(1, 3)]


def test_only_rows_after_the_last_row_negate():
    # N before B, or on B's key (not after it), does not negate the match.
    assert _ab([(1, 0, "a"), (2, 2, "n"), (3, 4, "b")], FIVE_MINUTES) == [(1, 3)]
    assert _ab([(1, 0, "a"), (2, 4, "n"), (3, 4, "b")], FIVE_MINUTES) == [(1, 3)]


def test_within_rows_counts_the_window_from_the_first_row():
    three_rows = WithinRows(3)
    # A B X N: the window of three rows from A is A, B, X; N is the fourth: a match.
    assert _ab([(1, 0, "a"), (2, 1, "b"), (3, 2, "x"), (4, 3, "n")], three_rows) == [(1, 2)]
    # A B N: N is the third row of A's window: no match.
    assert _ab([(1, 0, "a"), (2, 1, "b"), (3, 2, "n")], three_rows) == []


def test_within_rows_counts_the_rows_tied_with_the_n_row():
    # A@0 B@1 N@2 X@2: the rows from A's key up to N's key are four (N's tie X included),
    # more than three, just as a match ending at N (or X) would not fit: the match stands.
    spec = [(1, 0, "a"), (2, 1, "b"), (3, 2, "n"), (4, 2, "x")]
    assert _ab(spec, WithinRows(3)) == [(1, 2)]
    # The same rule for a match's own end: A B C with C on that key does not fit three rows.
    abc = {"c": lambda c: c.last("C", "id")}
    with_c = [(1, 0, "a"), (2, 1, "b"), (3, 2, "c"), (4, 2, "x")]
    assert _matches(with_c, "A B C", WithinRows(3), abc) == []
    assert _matches(with_c, "A B C", WithinRows(4), abc) == [(3,)]
    # With four rows allowed, N is inside the window: no match.
    assert _ab(spec, WithinRows(4)) == []


def test_a_kleene_first_element_opens_the_window_at_its_first_row():
    # PATTERN (A+ B !N) WITHIN 5 minutes; A at 0 and 2, B at 4, N at 6. The bindings of A:
    # {A@0} (window [0, 5], N past it: a match), {A@2} ([2, 7], N inside: none), {A@0, A@2}
    # (the first row is A@0: a match).
    measures = {
        "first_a": lambda c: c.first("A", "id"),
        "n_a": lambda c: c.count("A"),
        "b": lambda c: c.last("B", "id"),
    }
    spec = [(1, 0, "a"), (2, 2, "a"), (3, 4, "b"), (4, 6, "n")]
    assert _matches(spec, "A+ B !N", FIVE_MINUTES, measures) == [(1, 1, 3), (1, 2, 3)]
