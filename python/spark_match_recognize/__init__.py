"""SQL:2016 MATCH_RECOGNIZE for Apache Spark SQL.

>>> from pyspark.sql import SparkSession
>>> from spark_match_recognize import configure
>>> spark = configure(SparkSession.builder.master("local[2]")).getOrCreate()  # doctest: +SKIP
>>> spark.sql("SELECT * FROM ticker MATCH_RECOGNIZE (...)")  # doctest: +SKIP

:func:`configure` puts the extension's jar on Spark's classpath, registers the SQL
extension and maps keyword options onto ``spark.sql.matchRecognize.*`` keys.
:func:`jar_path` finds the jar (for ``spark-sql --jars``, ``spark-submit`` ...), and
:func:`jar_info` reads the versions it was built with. ``python -m spark_match_recognize``
is a small command line (``demo``, ``sql``, ``jar``).
"""

from __future__ import annotations

from typing import Any

#: The version of spark-match-recognize (equal to [project] version in pyproject.toml,
#: which setup.py checks when it builds a wheel).
__version__ = "0.1.0"

from .config import (  # noqa: E402  (the submodules read __version__)
    EXTENSIONS_CLASS,
    OPTIONS,
    Option,
    SparkVersionMismatchError,
    check_spark_version,
    configure,
)
from .jars import JAR_ENV_VAR, jar_info, jar_path  # noqa: E402

__all__ = [
    "EXTENSIONS_CLASS",
    "JAR_ENV_VAR",
    "OPTIONS",
    "Option",
    "SPARK_VERSION",
    "SparkVersionMismatchError",
    "__version__",
    "check_spark_version",
    "configure",
    "jar_info",
    "jar_path",
]


def __getattr__(name: str) -> Any:
    # SPARK_VERSION is read from the jar on first use, so that importing the package
    # works even before the jar has been built.
    if name == "SPARK_VERSION":
        return jar_info()["spark.version"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SPARK_VERSION: str
"""The Spark version the jar was compiled against (read from the jar when first used)."""
