"""Shared fixtures: one local Spark session with the extension for the whole test run."""

import os
import sys
import time

import pytest

# Timestamps in the expectations are UTC wall-clock values; PySpark converts timestamps to
# naive datetimes in the Python process's time zone, so pin both sides to UTC.
os.environ["TZ"] = "UTC"
time.tzset()
# Python UDFs run in worker processes: the interpreter running the tests, with its packages.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def _builder():
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[2]")
        .appName("spark-match-recognize-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.adaptive.enabled", "true")
    )


@pytest.fixture(scope="session")
def spark():
    from spark_match_recognize import configure

    session = configure(_builder()).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
