"""Tags for the disagreements already explained in docs/trino-oracle.md (*Open differences*),
so that a run's summary separates them from new ones."""

from __future__ import annotations

from .cases import OracleCase, rpr
from .compare import ERROR_MISMATCH, MISMATCH, SPARK_ERROR, agrees_with
from .trino_loop_rule import trino_loop_rule

EMPTY_ITERATION = "empty_iteration"
CLASSIFIER_IN_DEFINE = "classifier_in_define_error"
PREV_CLASSIFIER_PATH = "prev_classifier_path"


def can_match_empty(node) -> bool:
    """Whether a pattern (rpr AST) can match without consuming a row."""
    if isinstance(node, (rpr.Empty, rpr.Start, rpr.End)):
        return True
    if isinstance(node, rpr.Var):
        return False
    if isinstance(node, rpr.Quant):
        return node.min == 0 or can_match_empty(node.item)
    if isinstance(node, rpr.Exclude):
        return can_match_empty(node.item)
    if isinstance(node, rpr.Alt):
        return any(can_match_empty(i) for i in node.items)
    if isinstance(node, (rpr.Concat, rpr.Permute)):
        return all(can_match_empty(i) for i in node.items)
    raise TypeError(f"not a pattern node: {node!r}")


def has_loop_over_empty(node) -> bool:
    """Whether some unbounded quantifier's body can match no row."""
    if isinstance(node, rpr.Quant):
        if node.max is None and can_match_empty(node.item):
            return True
        return has_loop_over_empty(node.item)
    if isinstance(node, rpr.Exclude):
        return has_loop_over_empty(node.item)
    if isinstance(node, (rpr.Concat, rpr.Alt, rpr.Permute)):
        return any(has_loop_over_empty(i) for i in node.items)
    return False


def known_class(case: OracleCase, status: str, trino: dict, spark: dict) -> str | None:
    """The class of a disagreement: the extension's known error; Trino's empty-iteration
    rule (Trino agrees with the reference run under that rule, the extension with the
    standard reference); or, a weaker tag, a DEFINE using PREV(CLASSIFIER()) where the
    extension agrees with the reference and Trino does not. None: a new one."""
    if (
        status in (SPARK_ERROR, ERROR_MISMATCH)
        and "classifier_in_define" in case.variant
        and "Literal must have a corresponding value" in spark.get("error", "")
    ):
        return CLASSIFIER_IN_DEFINE
    if status != MISMATCH:
        return None
    standard = case.reference(budget=None)
    if not agrees_with(standard, spark):
        return None
    if has_loop_over_empty(case.spec.pattern):
        with trino_loop_rule():
            if agrees_with(case.reference(budget=None), trino):
                return EMPTY_ITERATION
    if any("PREV(CLASSIFIER())" in expr.sql() for _, expr in case.spec.define):
        return PREV_CLASSIFIER_PATH
    return None
