"""The late rows a streaming MATCH_RECOGNIZE kept, read back from its checkpoint.

With ``spark.sql.matchRecognize.streaming.lateRowsKept`` set (``transformWithState`` only),
each key keeps its most recent late rows in its state. :func:`late_rows` reads them with
Spark's state data source, as of the last committed micro-batch (or ``batch_id``): one row
per late row, with the input columns the query reads.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["late_rows"]

_STATE_VARIABLE = "late_rows"


def late_rows(
    spark: Any,
    checkpoint_location: str | os.PathLike[str],
    operator_id: int = 0,
    batch_id: int | None = None,
) -> Any:
    """A DataFrame of the late rows kept in the checkpoint at ``checkpoint_location``.

    ``operator_id`` picks the stateful operator when a query has several (its clauses that
    are not planned together, in plan order); ``batch_id`` reads the state as of that
    committed micro-batch instead of the last. Raises ``ValueError`` when the query kept
    no late rows (it ran without ``lateRowsKept``, or in ``flatMapGroupsWithState``).
    """
    from pyspark.errors import AnalysisException, PySparkException

    if isinstance(operator_id, bool) or not isinstance(operator_id, int) or operator_id < 0:
        raise ValueError(f"operator_id must be a non-negative int, not {operator_id!r}")
    if batch_id is not None and (
        isinstance(batch_id, bool) or not isinstance(batch_id, int) or batch_id < 0
    ):
        raise ValueError(f"batch_id must be a non-negative int or None, not {batch_id!r}")
    reader = (
        spark.read.format("statestore")
        .option("stateVarName", _STATE_VARIABLE)
        .option("operatorId", operator_id)
    )
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    try:
        kept = reader.load(os.fspath(checkpoint_location))
        return kept.select("list_element.*")
    except (AnalysisException, PySparkException) as error:
        if _STATE_VARIABLE not in str(error) and "stateVarName" not in str(error):
            raise
        raise ValueError(
            f"the streaming query at {os.fspath(checkpoint_location)} (operator {operator_id}) "
            "kept no late rows: start it with spark.sql.matchRecognize.streaming.lateRowsKept "
            "above 0 in transformWithState (spark.sql.matchRecognize.streaming.operator="
            "transformWithState)"
        ) from error
