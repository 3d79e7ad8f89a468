"""The SQL metrics of the MATCH_RECOGNIZE operators of a query that has run.

After an action that runs a DataFrame's own plan (``collect()``, ``toPandas()``,
``toLocalIterator()``; not ``count()``, ``show()`` or a write, which plan anew), that
physical plan holds each operator's metrics: rows in and out, partial matches, candidate
pairs a sequence join tested, time spent. :func:`operator_metrics` returns those of this
extension's operators, in plan order (the root first), through adaptive query stages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["OperatorMetrics", "operator_metrics"]

_OUR_PACKAGE = "org.apache.spark.sql.matchrecognize."


@dataclass(frozen=True)
class OperatorMetrics:
    """One operator of the plan: its class (``SequenceJoinExec``), its one-line description
    as EXPLAIN shows it, its metrics by name, and what each metric counts as the Spark UI
    labels it (``created0``: ``partial matches created at A ⋈ B``)."""

    operator: str
    node: str
    metrics: dict[str, int]
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """The operator's name: ``MatchRecognize``, ``SequenceJoin``, ``Negation``, ..."""
        return self.node.split(" ", 1)[0]


def operator_metrics(df: Any) -> list[OperatorMetrics]:
    """The metrics of the MATCH_RECOGNIZE operators that ran ``df``.

    Call it after ``df.collect()`` (or ``toPandas()``): the metrics belong to the plan of
    ``df`` itself, which ``count()``, ``show()`` and writes do not run. Before that, every
    metric is 0. Works on classic sessions, not on Spark
    Connect clients, whose DataFrames do not expose their plans.

    Raises:
        TypeError: for a DataFrame without a JVM plan (Spark Connect).
    """
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        raise TypeError(
            "operator_metrics() needs a DataFrame of a classic session (with a JVM plan); "
            "Spark Connect DataFrames do not expose their physical plans."
        )
    found: list[OperatorMetrics] = []
    _collect(jdf.queryExecution().executedPlan(), found)
    return found


def _collect(node: Any, found: list[OperatorMetrics]) -> None:
    name = node.getClass().getName()
    if name.endswith(".AdaptiveSparkPlanExec"):
        _collect(node.executedPlan(), found)  # the final plan, once the query has run
        return
    if name.endswith("QueryStageExec"):
        _collect(node.plan(), found)
        return
    if name.startswith(_OUR_PACKAGE):
        metrics: dict[str, int] = {}
        labels: dict[str, str] = {}
        entries = node.metrics().iterator()
        while entries.hasNext():
            entry = entries.next()
            key, metric = str(entry._1()), entry._2()
            metrics[key] = int(metric.value())
            labels[key] = str(metric.name().get()) if metric.name().isDefined() else key
        operator = name.rsplit(".", 1)[-1]
        found.append(OperatorMetrics(operator, str(node.simpleString(100)), metrics, labels))
    children = node.children()
    for i in range(children.size()):
        _collect(children.apply(i), found)
