"""Classifying one case's two outcomes.

Rows compare as multisets (the generated queries have no outer ORDER BY), by the rules of
tests/result_compare.py: integers equal doubles of the same value, doubles compare with a
relative tolerance. Column names compare case-insensitively (Trino lower-cases
identifiers). Two errors agree when both are the same run-time failure (AFTER MATCH SKIP to
the first row of the match / to a variable not present in the match) or both are something
else (each engine rejecting the query).
"""

from __future__ import annotations

from result_compare import compare_rows

RUNTIME_ERRORS = {
    "skip_to_first_row": "first row of match",
    "variable_not_present": "not present in match",
}

MATCH = "match"
MISMATCH = "mismatch"
BOTH_ERROR = "both_error"
ERROR_MISMATCH = "error_mismatch"
TRINO_ERROR = "trino_error"
SPARK_ERROR = "spark_error"
STATUSES = (MATCH, MISMATCH, BOTH_ERROR, ERROR_MISMATCH, TRINO_ERROR, SPARK_ERROR)


def error_kind(message: str) -> str:
    lowered = message.lower()
    for kind, phrase in RUNTIME_ERRORS.items():
        if phrase in lowered:
            return kind
    return "rejected"


def rows_difference(a: dict, b: dict) -> str | None:
    """None when two ``{"columns", "rows"}`` outcomes agree, else what differs."""
    columns_a = [c.lower() for c in a["columns"]]
    columns_b = [c.lower() for c in b["columns"]]
    if columns_a != columns_b:
        return f"columns differ: {columns_a} vs {columns_b}"
    return compare_rows([tuple(r) for r in a["rows"]], [tuple(r) for r in b["rows"]], False)


def classify(trino: dict, spark: dict) -> tuple[str, str | None]:
    """``(status, detail)`` for one case."""
    if "error" in trino and "error" in spark:
        kinds = error_kind(trino["error"]), error_kind(spark["error"])
        if kinds[0] == kinds[1]:
            return BOTH_ERROR, kinds[0]
        return ERROR_MISMATCH, f"Trino: {kinds[0]}, Spark: {kinds[1]}"
    if "error" in trino:
        return TRINO_ERROR, error_kind(trino["error"])
    if "error" in spark:
        return SPARK_ERROR, error_kind(spark["error"])
    difference = rows_difference(spark, trino)
    return (MATCH, None) if difference is None else (MISMATCH, difference)


def agrees_with(reference: dict, outcome: dict) -> bool:
    """Whether the Python reference's outcome is the same as an engine's."""
    if "error" in reference or "error" in outcome:
        return (
            "error" in reference
            and "error" in outcome
            and error_kind(reference["error"]) == error_kind(outcome["error"])
        )
    return rows_difference(outcome, reference) is None
