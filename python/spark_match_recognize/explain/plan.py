""":class:`PatternPlan`, what :func:`explain_pattern` returns, and :func:`explain_pattern`
itself, which asks the extension to plan the query's MATCH_RECOGNIZE clauses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .drawing import save_png, svg_picture
from .model import PatternReport
from .text import text_report


class PatternPlan:
    """The reports of every MATCH_RECOGNIZE clause of a query (see :func:`explain_pattern`)."""

    def __init__(self, reports: list[PatternReport]) -> None:
        self.reports = reports

    def __str__(self) -> str:
        return text_report(self.reports)

    def __repr__(self) -> str:
        return str(self)

    def to_svg(self) -> str:
        """The join trees as one SVG picture (one tree per pattern alternative)."""
        return svg_picture(self.reports)

    def _repr_svg_(self) -> str:  # Jupyter
        return self.to_svg()

    def save(self, path: str | Path) -> Path:
        """Writes the picture to ``path``: ``.svg``, or ``.png`` (needs matplotlib)."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix == ".svg":
            p.write_text(self.to_svg(), encoding="utf-8")
        elif suffix == ".png":
            self._save_png(p)
        else:
            raise ValueError(f"save(): write .svg or .png, not {p.suffix or 'no suffix'!r}")
        return p

    def _save_png(self, path: Path) -> None:
        save_png(self.reports, path)


def explain_pattern(spark: Any, sql: str, *, candidates: bool = True) -> PatternPlan:
    """How the MATCH_RECOGNIZE clauses of query ``sql`` will run, and why.

    Plans the query without running it (a SKIP TILL ANY MATCH pattern reads a small sample
    of its input for statistics, which the run then reuses).

    Args:
        spark: a SparkSession configured with :func:`~spark_match_recognize.configure`
            (a classic session: Spark Connect clients use ``EXPLAIN`` instead).
        sql: a query (SELECT) with one or more MATCH_RECOGNIZE clauses.
        candidates: also plan each pattern with every join-order algorithm and list their
            trees and costs.

    Returns:
        A :class:`PatternPlan`; ``print()`` it, show it in a notebook, or ``save()`` it.

    Raises:
        TypeError: for ``sql`` that is no str, or ``spark`` that is no classic SparkSession.
    """
    if not isinstance(sql, str):
        raise TypeError(
            f"explain_pattern() needs the query as SQL text (a str) for sql, got "
            f"{type(sql).__name__} {sql!r}"
        )
    jvm = getattr(spark, "_jvm", None)
    jsession = getattr(spark, "_jsparkSession", None)
    if jvm is None or jsession is None:
        raise TypeError(
            "explain_pattern() needs a classic PySpark SparkSession for spark, got "
            f"{type(spark).__name__}; with Spark Connect run spark.sql('EXPLAIN ' + sql), "
            "whose MatchGuard line shows the chosen join tree and its statistics"
        )
    reports = json.loads(
        jvm.org.apache.spark.sql.matchrecognize.optimizer.PlanReports.json(
            jsession, sql, bool(candidates)
        )
    )
    return PatternPlan([PatternReport.from_json(r) for r in reports])
