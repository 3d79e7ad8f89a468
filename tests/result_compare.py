"""Comparing Spark results with expected rows, by the rules of tests/conformance/README.md.

Rows are a multiset unless the case says its order matters; numbers compare with a relative
tolerance and integers equal doubles of the same value; timestamps and dates are rendered as
the strings the expectations use.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections import Counter
from typing import Any


def normalize(value: Any) -> Any:
    """Turns a value collected from Spark into the form expectations are written in."""
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, datetime.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    return value


def _key(row: tuple) -> tuple:
    # Rounded so that values within the tolerance usually land on the same key; the exact
    # check below decides.
    return tuple(round(v, 6) if isinstance(v, float) and math.isfinite(v) else v for v in row)


def values_equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=False))
    return a == b


def rows_equal(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=False))


def compare_rows(actual: list[tuple], expected: list[tuple], ordered: bool) -> str | None:
    """None when equal, else a readable description of the difference."""
    actual = [tuple(normalize(v) for v in r) for r in actual]
    expected = [tuple(normalize(v) for v in r) for r in expected]
    if ordered:
        if len(actual) == len(expected) and all(map(rows_equal, actual, expected)):
            return None
        return f"ordered rows differ:\n  actual:   {actual}\n  expected: {expected}"
    remaining = list(actual)
    missing = []
    for e in expected:
        for i, a in enumerate(remaining):
            if rows_equal(a, e):
                del remaining[i]
                break
        else:
            missing.append(e)
    if not missing and not remaining:
        return None
    counts = Counter(_key(r) for r in actual)
    return (
        f"{len(actual)} rows, {len(expected)} expected\n"
        f"  missing:    {missing}\n  unexpected: {remaining}\n"
        f"  (actual multiset: {dict(counts)})"
    )
