"""The conformance suite (tests/conformance/) run in Trino and in this extension.

Each case is a Spark SQL statement with its expected result (or error). ``trino_sql`` renders
it in Trino's dialect; the rewrites are only where the two dialects spell the same thing
differently:

* a DOUBLE literal ``101.5D`` becomes ``DOUBLE '101.5'`` (a bare ``101.5`` is DECIMAL in
  Trino);
* a back-quoted identifier becomes a double-quoted one;
* ``/`` followed by an integer literal divides by ``DOUBLE 'n'``: Spark's ``/`` always gives a
  DOUBLE, Trino's divides integers as integers.

Not run: ``cep_any_match.json`` (SKIP TILL ANY MATCH) and every case using ``WITHIN`` or
``SKIP TILL NEXT MATCH``, extensions Trino does not have. The outcome of each engine is
compared with the expectation and with the other engine; errors agree when both are the same
run-time failure or both are a rejection (their wording differs between the engines).
"""

from __future__ import annotations

import json
import re

from result_compare import compare_rows

from . import compare
from .cases import ROOT

CONFORMANCE = ROOT / "tests" / "conformance"
FILES = ("standard.json", "errors.json")
SKIPPED_FILES = ("cep_any_match.json",)
EXTENSIONS = re.compile(r"\bWITHIN\b|\bSKIP\s+TILL\b", re.IGNORECASE)


def load() -> tuple[list[dict], list[dict]]:
    """``(run, skipped)``: the cases both engines can run, and the others (extensions)."""
    run, skipped = [], []
    for name in FILES:
        for case in json.loads((CONFORMANCE / name).read_text()):
            (skipped if EXTENSIONS.search(case["sql"]) else run).append(case)
    for name in SKIPPED_FILES:
        skipped.extend(json.loads((CONFORMANCE / name).read_text()))
    return run, skipped


def trino_sql(sql: str) -> str:
    sql = re.sub(r"\b(\d+\.\d+|\d+)D\b", r"DOUBLE '\1'", sql)
    sql = re.sub(r"`([^`]*)`", r'"\1"', sql)
    return re.sub(r"/\s*(\d+)\b(?!\.)", r"/ DOUBLE '\1'", sql)


def expected_outcome(case: dict) -> dict:
    """The expectation in the engines' outcome shape."""
    if "expect_error" in case:
        if case["error_kind"] == "runtime":
            return {"error": case["expect_error"]}
        return {"error": "rejected"}
    return {"columns": case["expect"]["columns"], "rows": case["expect"]["rows"]}


def _ordered(case: dict) -> bool:
    return bool(case.get("expect", {}).get("ordered"))


def agree(a: dict, b: dict, ordered: bool) -> bool:
    """Two outcomes (an engine's, an expectation's) are the same."""
    if "error" in a or "error" in b:
        return (
            "error" in a
            and "error" in b
            and compare.error_kind(a["error"]) == compare.error_kind(b["error"])
        )
    if [c.lower() for c in a["columns"]] != [c.lower() for c in b["columns"]]:
        return False
    rows_a = [tuple(r) for r in a["rows"]]
    rows_b = [tuple(r) for r in b["rows"]]
    return compare_rows(rows_a, rows_b, ordered) is None


def verdict(case: dict, trino: dict, spark: dict) -> str:
    """``agree`` (both engines give the expectation), ``trino_differs`` (only the extension
    gives it), ``spark_differs``, or ``both_differ``."""
    expected = expected_outcome(case)
    ordered = _ordered(case)
    trino_ok = agree(trino, expected, ordered)
    spark_ok = agree(spark, expected, ordered)
    if trino_ok and spark_ok:
        return "agree"
    if spark_ok:
        return "trino_differs"
    if trino_ok:
        return "spark_differs"
    return "both_differ"
