"""This extension under a local PySpark session, answering in the Trino driver's shape."""

from __future__ import annotations

import os
import time


class SparkEngine:
    def __init__(self, master: str = "local[2]"):
        os.environ.setdefault("TZ", "UTC")
        time.tzset()
        from pyspark.sql import SparkSession

        from spark_match_recognize import configure

        builder = (
            SparkSession.builder.master(master)
            .appName("spark-match-recognize-trino-oracle")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "2g")
        )
        self.session = configure(builder).getOrCreate()
        self.session.sparkContext.setLogLevel("OFF")

    def run(self, sql: str) -> dict:
        """``{"columns", "rows"}`` or ``{"error"}`` (the exception's message)."""
        try:
            df = self.session.sql(sql)
            rows = [list(r) for r in df.collect()]
            return {"columns": list(df.columns), "rows": rows}
        except Exception as error:  # any failure is an outcome to record, not to raise
            return {"error": f"{type(error).__name__}: {error}"}

    def stop(self) -> None:
        self.session.stop()
