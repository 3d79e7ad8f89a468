"""A query's rows through spark.sql, in an order that does not depend on Spark's."""

from __future__ import annotations

EXECUTION = "spark.sql.matchRecognize.cepExecution"


def sorted_rows(spark, sql: str, execution: str | None = None) -> list[tuple]:
    """The rows of `sql` as tuples, sorted by their text; under SKIP TILL ANY MATCH,
    `execution` sets spark.sql.matchRecognize.cepExecution for the query."""
    if execution is not None:
        spark.conf.set(EXECUTION, execution)
    try:
        return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)
    finally:
        if execution is not None:
            spark.conf.unset(EXECUTION)
