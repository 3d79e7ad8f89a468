"""Runs SQL statements in a local Spark session WITHOUT the extension and writes what each
one gives (its columns and rows, or its error condition and message) as JSON.

    python tests/plain_spark_runner.py statements.json outcomes.json

Used by test_spark_sql_untouched.py to compare plain Spark with Spark plus the extension;
:func:`outcome` is the one both sides use to describe a statement's result.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

_EXPRESSION_ID = re.compile(r"#\d+")


def outcome(spark, sql: str) -> dict:
    """What ``spark.sql(sql)`` gives: rows (as text, sorted) or the error it raises."""
    try:
        df = spark.sql(sql)
        rows = sorted(_EXPRESSION_ID.sub("#", repr(tuple(r))) for r in df.collect())
        return {"columns": df.columns, "rows": rows}
    except Exception as e:  # noqa: BLE001 - every error is part of the outcome
        condition = e.getCondition() if hasattr(e, "getCondition") else None
        message = _EXPRESSION_ID.sub("#", str(e))
        return {"error": type(e).__name__, "condition": condition, "message": message}


def plain_session():
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("plain-spark")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.adaptive.enabled", "true")
        .getOrCreate()
    )


def main(source: str, target: str) -> None:
    os.environ["TZ"] = "UTC"
    time.tzset()
    statements = json.loads(open(source, encoding="utf-8").read())
    spark = plain_session()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        assert "spark.sql.extensions" not in dict(spark.sparkContext.getConf().getAll())
        results = [outcome(spark, sql) for sql in statements]
    finally:
        spark.stop()
    with open(target, "w", encoding="utf-8") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
