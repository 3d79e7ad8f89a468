"""SQL:2016 MATCH_RECOGNIZE for Apache Spark SQL.

>>> from pyspark.sql import SparkSession
>>> from spark_match_recognize import configure
>>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
>>> spark.sql("SELECT * FROM ticker MATCH_RECOGNIZE (...)")  # doctest: +SKIP

:func:`configure` puts the extension's jar on Spark's classpath, registers the SQL
extension and maps keyword options onto ``spark.sql.matchRecognize.*`` keys.
:func:`jar_path` finds the jar (for ``spark-sql --jars``, ``spark-submit`` ...), and
:func:`jar_info` reads the versions it was built with.

Without a JVM: :func:`check` finds the mistakes in MATCH_RECOGNIZE clauses (with Spark's
error conditions and messages), and :func:`transpile` rewrites MATCH_RECOGNIZE queries
written for Trino, Snowflake, Oracle, Databricks or Athena as Spark SQL.
:func:`match_recognize` is MATCH_RECOGNIZE for DataFrames, and :func:`match_patterns`
runs several named patterns over one DataFrame as one query. :func:`explain_pattern` shows
how the optimizer plans a query's patterns (statistics, join tree, cost), as text or a
picture, and :func:`operator_metrics` what its operators did once it ran.

``python -m spark_match_recognize`` is a small command line (``demo``, ``sql``, ``jar``,
``check``, ``transpile``, ``docs``).
"""

from __future__ import annotations

from typing import Any

#: The version of spark-match-recognize (equal to [project] version in pyproject.toml,
#: which setup.py checks when it builds a wheel).
__version__ = "0.1.0"

from .check import Problem, check  # noqa: E402
from .config import (  # noqa: E402  (the submodules read __version__)
    EXTENSIONS_CLASS,
    JOIN_ORDERS,
    OPTIONS,
    Option,
    SparkVersionMismatchError,
    check_spark_version,
    configure,
)
from .dataframe import match_recognize, match_recognize_sql  # noqa: E402
from .explain import PatternPlan, explain_pattern  # noqa: E402
from .jars import (  # noqa: E402
    JAR_ENV_VAR,
    SPARK_LINES,
    UnsupportedSparkVersionError,
    jar_info,
    jar_path,
)
from .late_rows import late_rows  # noqa: E402
from .metrics import OperatorMetrics, operator_metrics  # noqa: E402
from .pattern_sets import (  # noqa: E402
    match_pattern_table,
    match_pattern_table_sql,
    match_patterns,
    match_patterns_sql,
    pattern_table_status,
)
from .transpile import DIALECTS, TranspileError, transpile  # noqa: E402

__all__ = [
    "DIALECTS",
    "EXTENSIONS_CLASS",
    "JAR_ENV_VAR",
    "JOIN_ORDERS",
    "OPTIONS",
    "OperatorMetrics",
    "Option",
    "PatternPlan",
    "Problem",
    "SPARK_LINES",
    "SPARK_VERSION",
    "SparkVersionMismatchError",
    "TranspileError",
    "UnsupportedSparkVersionError",
    "__version__",
    "check",
    "check_spark_version",
    "configure",
    "explain_pattern",
    "jar_info",
    "jar_path",
    "late_rows",
    "match_pattern_table",
    "match_pattern_table_sql",
    "match_patterns",
    "match_patterns_sql",
    "pattern_table_status",
    "match_recognize",
    "match_recognize_sql",
    "operator_metrics",
    "transpile",
]


def __getattr__(name: str) -> Any:
    # SPARK_VERSION is read from the jar on first use, so that importing the package
    # works even before the jar has been built.
    if name == "SPARK_VERSION":
        return jar_info()["spark.version"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SPARK_VERSION: str
"""The Spark version the installed pyspark's jar was compiled against (read from that jar
when first used; any patch release of its line runs it)."""
