"""Tags for the disagreements already explained in docs/trino-oracle.md (*Documented
differences*), so that a run's summary separates them from new ones: random cases by what the
case contains, conformance cases by id."""

from __future__ import annotations

from reference import rpr

from .cases import OracleCase
from .compare import MISMATCH, agrees_with

PREV_CLASSIFIER_PATH = "prev_classifier_path"
LATER_EMPTY_ITERATION = "later_empty_iteration"


def known_class(case: OracleCase, status: str, trino: dict, spark: dict) -> str | None:
    """The class of a disagreement where the extension agrees with the reference and Trino
    does not: ``prev_classifier_path`` for a DEFINE using PREV(CLASSIFIER()) (Trino merges
    paths that the condition tells apart); ``later_empty_iteration`` when Trino's outcome is
    the reference's with every empty loop iteration ending the loop. None: a new one."""
    if status != MISMATCH:
        return None
    if not agrees_with(case.reference(budget=None), spark):
        return None
    if any("PREV(CLASSIFIER())" in expr.sql() for _, expr in case.spec.define):
        return PREV_CLASSIFIER_PATH
    rpr.LATER_EMPTY_ITERATION_ENDS_LOOP = True
    try:
        ending = case.reference(budget=None)
    finally:
        rpr.LATER_EMPTY_ITERATION_ENDS_LOOP = False
    if agrees_with(ending, trino):
        return LATER_EMPTY_ITERATION
    return None


PERMUTE_NOT_RESERVED = "permute_not_reserved"

# Conformance cases (tests/conformance/) on which an engine departs from the expectation for a
# documented reason (docs/trino-oracle.md), by case id: (verdict, class).
CONFORMANCE: dict[str, tuple[str, str]] = {
    # PATTERN (S PERMUTE()): PERMUTE is a reserved word in SQL:2016, so this is an empty
    # PERMUTE, a syntax error; Trino keeps PERMUTE non-reserved and reads a pattern variable
    # named PERMUTE followed by the empty pattern ().
    "err.parse.empty_permute": ("trino_differs", PERMUTE_NOT_RESERVED),
}


def conformance_class(case_id: str, verdict: str) -> str | None:
    """The documented class of a conformance case's difference; None: a new one."""
    known = CONFORMANCE.get(case_id)
    return known[1] if known and known[0] == verdict else None
