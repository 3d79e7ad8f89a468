"""``configure()``: turning a SparkSession builder into one that can run MATCH_RECOGNIZE.

Every keyword option of :func:`configure` is one row of :data:`OPTIONS`, read from the
settings the jar lists (see :mod:`.options`). The keys can also be changed later in a
session with ``SET key = value`` (each is read when a query is planned).
"""

from __future__ import annotations

import difflib
from typing import Any, TypeVar

from .jars import (
    JAR_ENV_VAR,
    installed_scala_version,
    installed_spark_line,
    jar_info,
    jar_path,
    spark_line,
)
from .options import JOIN_ORDERS, OPTIONS, Option

__all__ = [
    "EXTENSIONS_CLASS",
    "JOIN_ORDERS",
    "OPTIONS",
    "Option",
    "SparkVersionMismatchError",
    "check_spark_version",
    "configure",
]

#: The class to name in ``spark.sql.extensions``.
EXTENSIONS_CLASS = "org.apache.spark.sql.matchrecognize.MatchRecognizeExtensions"

B = TypeVar("B")


class SparkVersionMismatchError(RuntimeError):
    """The installed pyspark is of another Spark line than the jar was compiled for.

    Catalyst's internal APIs, which the extension uses, change between Spark lines, so a
    mismatch would fail later with obscure JVM linkage errors instead. Within a line, any
    patch release is accepted. Only a jar named by ``SPARK_MATCH_RECOGNIZE_JAR`` can
    mismatch: otherwise the jar of the installed pyspark's line is taken.
    """

    def __init__(self, pyspark_version: str, jar_spark_version: str, jar: str) -> None:
        self.pyspark_version = pyspark_version
        self.jar_spark_version = jar_spark_version
        self.jar = jar
        line = spark_line(jar_spark_version)
        super().__init__(
            f"pyspark {pyspark_version} is installed, but the spark-match-recognize jar "
            f"({jar}) was built for the Spark {line} line ({jar_spark_version}). Use the jar "
            f"for Spark {spark_line(pyspark_version)} (unset {JAR_ENV_VAR} to take the one "
            f"bundled with the package), or install a pyspark of that line "
            f"(pip install 'pyspark=={line}.*')."
        )


def check_spark_version(jar: str | None = None) -> str:
    """Refuse a pyspark of another Spark line than the jar was built for.

    Args:
        jar: the jar to check against; by default :func:`~spark_match_recognize.jar_path`.

    Returns:
        The installed pyspark's version.

    Raises:
        UnsupportedSparkVersionError: if the installed pyspark's line has no jar.
        SparkVersionMismatchError: if the jar is of another line than pyspark.
    """
    import pyspark

    installed_spark_line()
    path = jar if jar is not None else jar_path()
    built_for = jar_info(path)["spark.version"]
    installed = pyspark.__version__
    if spark_line(installed) != spark_line(built_for):
        raise SparkVersionMismatchError(installed, built_for, path)
    return installed


def _append(existing: Any, item: str) -> str:
    """``existing`` (a comma-separated list, maybe empty) with ``item`` added once."""
    parts = [p.strip() for p in str(existing or "").split(",") if p.strip()]
    if item not in parts:
        parts.append(item)
    return ",".join(parts)


def _unknown_option(name: str) -> TypeError:
    valid = ", ".join(sorted(OPTIONS))
    close = difflib.get_close_matches(name, list(OPTIONS), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return TypeError(f"configure() got an unknown option {name!r}.{hint} Valid options: {valid}.")


def _check_running_context() -> None:
    """Fail early if a JVM without the extension is already running in this process.

    ``spark.jars`` and ``spark.sql.extensions`` take effect only when the SparkContext
    starts; ``getOrCreate()`` would otherwise hand back the running session, on which
    MATCH_RECOGNIZE is a syntax error.
    """
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None or sc._jsc is None:
        _check_stopped_jvm()
        return
    extensions = sc.getConf().get("spark.sql.extensions", "") or ""
    if EXTENSIONS_CLASS not in [e.strip() for e in extensions.split(",")]:
        raise RuntimeError(
            "A SparkContext without the spark-match-recognize extension is already running "
            "in this process, and getOrCreate() would return it unchanged (spark.jars and "
            "spark.sql.extensions only take effect when Spark starts). Call spark.stop() "
            "first, or call configure() on the builder that creates the first session."
        )


def _check_stopped_jvm() -> None:
    """Fail early if the JVM of a stopped session runs without the jar on its classpath.

    PySpark keeps its JVM when a session stops, and the next SparkContext starts in it:
    ``spark.jars`` then only ships the jar to executors, the driver cannot load the
    extension class, and Spark skips it with a warning, leaving a session on which
    MATCH_RECOGNIZE is a syntax error.
    """
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    if jvm is None:
        return
    from py4j.protocol import Py4JJavaError

    try:
        jvm.org.apache.spark.util.Utils.classForName(EXTENSIONS_CLASS, False, False)
    except Py4JJavaError:  # ClassNotFoundException
        raise RuntimeError(
            "This process's JVM was started by an earlier SparkSession (now stopped) "
            "without the spark-match-recognize jar, and PySpark starts every later session "
            "in that JVM, where the extension cannot be loaded. Start a new Python process "
            "and call configure() on the builder of its first session (or start that first "
            f"session with the jar in spark.jars: {_jar_hint()})."
        ) from None


def _check_builder(builder: object) -> None:
    if not callable(getattr(builder, "config", None)) or not callable(
        getattr(builder, "getOrCreate", None)
    ):
        raise TypeError(
            "configure() needs a SparkSession builder (SparkSession.builder, e.g. "
            "configure(SparkSession.builder.master('local[2]'))), got "
            f"{type(builder).__name__} {builder!r}"
        )


def configure(builder: B, **options: Any) -> B:
    """Make a ``SparkSession.builder`` load spark-match-recognize.

    Adds the jar (see :func:`~spark_match_recognize.jar_path`) to ``spark.jars``, adds the
    extension class to ``spark.sql.extensions`` (both appended to values already set on the
    builder), and sets one ``spark.sql.matchRecognize.*`` key per keyword option.

    >>> from pyspark.sql import SparkSession
    >>> spark = configure(SparkSession.builder.master("local[2]"),
    ...                   max_live_partial_matches=10_000).getOrCreate()  # doctest: +SKIP

    Args:
        builder: a ``SparkSession.Builder``: classic, or Spark Connect in local mode
            (``.remote("local[2]")`` or ``spark.api.mode=connect`` with a local master),
            where the Connect server starts in this process with the jar and the extension.
        **options: any of :data:`OPTIONS` (the list below is generated from it):
            <OPTIONS>

    Returns:
        The same builder, for chaining.

    Raises:
        TypeError: for a ``builder`` that is no SparkSession builder, an unknown option (the
            message lists the valid ones) or a value of the wrong type.
        ValueError: for a value out of range, or a builder for a remote Spark Connect
            server (``sc://...``), whose jars and extensions are set where it is started.
        UnsupportedSparkVersionError: if the installed pyspark is of a Spark line this
            release has no jar for (the message lists the supported lines).
        SparkVersionMismatchError: if ``SPARK_MATCH_RECOGNIZE_JAR`` names a jar of another
            Spark line than pyspark's.
        FileNotFoundError: if the jar cannot be found.
        RuntimeError: if a SparkContext without the extension already runs in this process,
            or an earlier, stopped session started this process's JVM without the jar.
    """
    _check_builder(builder)
    settings = {}
    for name, value in options.items():
        option = OPTIONS.get(name)
        if option is None:
            raise _unknown_option(name)
        settings[option.key] = option.to_conf(value)

    current: dict[str, Any] = dict(getattr(builder, "_options", {}) or {})
    remote = current.get("spark.remote")
    if remote is not None and not str(remote).startswith("local"):
        raise ValueError(
            f"configure() cannot set up the Spark Connect server at {remote}: the jar and "
            "spark.sql.extensions take effect only when a server starts. Start that server "
            f"with --jars {_jar_hint()} and "
            f"--conf spark.sql.extensions={EXTENSIONS_CLASS} (and any "
            "spark.sql.matchRecognize.* settings), or use Spark Connect's local mode, "
            'SparkSession.builder.remote("local[2]"), which configure() supports.'
        )

    jar = jar_path()
    check_spark_version(jar)
    _check_running_context()

    builder.config("spark.jars", _append(current.get("spark.jars"), jar))  # type: ignore[attr-defined]
    packages = _connect_server_package(remote, current.get("spark.jars.packages"))
    if packages:
        builder.config("spark.jars.packages", packages)  # type: ignore[attr-defined]
    builder.config(  # type: ignore[attr-defined]
        "spark.sql.extensions", _append(current.get("spark.sql.extensions"), EXTENSIONS_CLASS)
    )
    for key, value in settings.items():
        builder.config(key, value)  # type: ignore[attr-defined]
    return builder


def _connect_server_package(remote: Any, packages: Any) -> str | None:
    """``spark.jars.packages`` with Spark Connect's server added, for a local Connect
    session on pyspark 3.5 (whose release leaves that package to the user; pyspark 4 ships
    the server), or ``None`` when nothing is to change."""
    import pyspark

    if remote is None or not pyspark.__version__.startswith("3."):
        return None
    if "spark-connect_" in str(packages or ""):
        return None
    scala = installed_scala_version() or "2.12"
    return _append(packages, f"org.apache.spark:spark-connect_{scala}:{pyspark.__version__}")


def _jar_hint() -> str:
    """The jar's path, or a hint at how to get it if it cannot be found."""
    try:
        return jar_path()
    except FileNotFoundError:
        return "$(python -m spark_match_recognize jar)"


def _document_options() -> None:
    lines = [
        f"``{o.name}`` ({o.accepts}; default {o.default}) sets ``{o.key}``. {o.doc}"
        for o in OPTIONS.values()
    ]
    indent = "\n" + " " * 12
    if configure.__doc__:
        configure.__doc__ = configure.__doc__.replace("<OPTIONS>", indent.join(lines))


_document_options()
