"""Tags for the disagreements already explained in docs/trino-oracle.md (*Open differences*),
so that a run's summary separates them from new ones."""

from __future__ import annotations

from .cases import OracleCase
from .compare import MISMATCH, agrees_with

PREV_CLASSIFIER_PATH = "prev_classifier_path"


def known_class(case: OracleCase, status: str, trino: dict, spark: dict) -> str | None:
    """The class of a disagreement: a DEFINE using PREV(CLASSIFIER()) where the extension
    agrees with the reference (the standard's preference order) and Trino does not. None:
    a new one."""
    if status != MISMATCH:
        return None
    if not agrees_with(case.reference(budget=None), spark):
        return None
    if any("PREV(CLASSIFIER())" in expr.sql() for _, expr in case.spec.define):
        return PREV_CLASSIFIER_PATH
    return None
