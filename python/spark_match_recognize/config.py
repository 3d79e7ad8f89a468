"""``configure()``: turning a SparkSession builder into one that can run MATCH_RECOGNIZE.

Every keyword option of :func:`configure` is one row of :data:`OPTIONS`, which maps the
Python name onto its ``spark.sql.matchRecognize.*`` key, says what values it takes and
documents it. Adding an option is adding a row. The keys can also be changed later in a
session with ``SET key = value`` (each is read when a query is planned).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from .jars import JAR_ENV_VAR, installed_spark_line, jar_info, jar_path, spark_line

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

_LONG_MAX = 2**63 - 1

#: The join-order algorithms (spark.sql.matchRecognize.joinOrder), as the Scala conf lists them.
JOIN_ORDERS = (
    "auto",
    "trivial",
    "efreq",
    "greedy",
    "ii_random",
    "ii_greedy",
    "dp_left_deep",
    "dp_bushy",
    "zstream",
    "zstream_ord",
)

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


# --------------------------------------------------------------------------------------
# Value checks. Each takes the Python value and returns the conf string, raising
# TypeError/ValueError (without the option name; Option.to_conf adds it).


def _long(minimum: int = 1) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an int, got {type(value).__name__} {value!r}")
        if not minimum <= value <= _LONG_MAX:
            bound = "positive" if minimum == 1 else f">= {minimum}"
            raise ValueError(f"must be {bound} and at most 2**63-1, got {value}")
        return str(value)

    check.__doc__ = f"an int >= {minimum}"
    return check


def _double(minimum: float = -math.inf, maximum: float = math.inf) -> Callable[[Any], str]:
    """A finite number in [minimum, maximum] (the Scala confs refuse infinity and NaN)."""
    if math.isinf(maximum):
        accepts = "a finite number" if math.isinf(minimum) else f"a finite number >= {minimum}"
    else:
        accepts = f"a number in [{minimum}, {maximum}]"

    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"expected a number, got {type(value).__name__} {value!r}")
        if not (math.isfinite(value) and minimum <= value <= maximum):
            raise ValueError(f"must be {accepts}, got {value}")
        return repr(float(value))

    check.__doc__ = accepts
    return check


def _boolean() -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, bool):
            raise TypeError(f"expected True or False, got {type(value).__name__} {value!r}")
        return "true" if value else "false"

    check.__doc__ = "True or False"
    return check


def _int_between(minimum: int, maximum: int) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an int, got {type(value).__name__} {value!r}")
        if not minimum <= value <= maximum:
            raise ValueError(f"must be between {minimum} and {maximum}, got {value}")
        return str(value)

    check.__doc__ = f"an int in [{minimum}, {maximum}]"
    return check


def _choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise TypeError(f"expected a str, got {type(value).__name__} {value!r}")
        if value.lower() not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}; got {value!r}")
        return value.lower()

    check.__doc__ = "one of " + ", ".join(choices)
    return check


@dataclass(frozen=True)
class Option:
    """One keyword option of :func:`configure`.

    Attributes:
        name: the Python keyword.
        key: the Spark conf key it sets.
        check: converts a Python value into the conf string, or raises TypeError or
            ValueError; its docstring describes the accepted values.
        doc: what the option does.
    """

    name: str
    key: str
    check: Callable[[Any], str]
    doc: str

    @property
    def accepts(self) -> str:
        """A short description of the accepted values."""
        return self.check.__doc__ or ""

    def to_conf(self, value: Any) -> str:
        """The conf value for ``value``; errors name the option and its key."""
        try:
            return self.check(value)
        except (TypeError, ValueError) as e:
            raise type(e)(f"configure(): option {self.name} ({self.key}): {e}") from None


def _table(*options: Option) -> Mapping[str, Option]:
    return MappingProxyType({o.name: o for o in options})


_P = "spark.sql.matchRecognize."

# fmt: off
#: Every option of :func:`configure`, by Python name; one row per conf key.
OPTIONS: Mapping[str, Option] = _table(
    Option("max_live_threads", _P + "maxLiveThreads", _long(1), "The most partial matches the automaton tracks at once in one partition; past it the query fails with an error naming the key (default 100000)."),  # noqa: E501
    Option("max_buffered_rows", _P + "maxBufferedRows", _long(1), "The most rows of one partition kept in memory for matches in progress; past it the query fails with an error naming the key (default 5000000)."),  # noqa: E501
    Option("max_matcher_bytes", _P + "maxMatcherBytes", _long(0), "The most bytes of partial-match state the automaton holds for one partition; past it the query fails with an error naming the key (default 0: one task's share of the executor heap left to user data, at least 32 MB)."),  # noqa: E501
    Option("max_steps_per_row", _P + "maxStepsPerRow", _long(0), "The most matching steps the automaton takes per row of one partition, on average; past it the query fails with an error naming the key (default 20000; 0: no limit)."),  # noqa: E501
    Option("optimizer", _P + "joinOrder", _choice(*JOIN_ORDERS), "The join-order algorithm for SKIP TILL ANY MATCH patterns (docs/optimizer.md); every choice returns the same rows (default auto)."),  # noqa: E501
    Option("cost_model", _P + "costModel", _choice("spark", "paper"), "What the join-order algorithms minimize: 'spark' (default: partial matches, the pairs each join tests, expected Kleene bindings) or 'paper' (the JQPG paper's cost exactly)."),  # noqa: E501
    Option("latency_weight", _P + "latencyWeight", _double(0.0), "Weight of detection latency against throughput in the join-order cost (default 0: throughput only)."),  # noqa: E501
    Option("candidate_weight", _P + "candidateWeight", _double(0.0), "Cost of one candidate pair a sequence join tests, relative to one partial match it produces, in the join-order cost (default 0.1; 0 is the JQPG paper's cost)."),  # noqa: E501
    Option("auto_dp_threshold", _P + "auto.dpThreshold", _int_between(1, 14), "optimizer='auto' plans sequences of up to this many variables by exact dp_bushy, longer ones by greedy then iterative improvement (default 10)."),  # noqa: E501
    Option("auto_time_budget_ms", _P + "auto.timeBudgetMs", _long(0), "Milliseconds iterative improvement may spend per long sequence under optimizer='auto' (default 100)."),  # noqa: E501
    Option("statistics_sample_rows", _P + "statistics.sampleRows", _int_between(10, 10_000_000), "Input rows sampled to estimate arrival rates and selectivities for join ordering (default 20000)."),  # noqa: E501
    Option("statistics_seed", _P + "statistics.seed", _long(-_LONG_MAX), "Seed of the statistics sample, so plans are reproducible."),  # noqa: E501
    Option("explain_candidates", _P + "explainCandidates", _boolean(), "Also plan every pattern with every algorithm and record their trees and costs for explain_pattern (default False)."),  # noqa: E501
    Option("prefilter", _P + "prefilter", _choice("auto", "on", "off"), "The join prefilter for standard-semantics patterns: runs the automaton only on the row ranges around rows of a selective variable every match contains (default auto: when a sample shows it pays)."),  # noqa: E501
    Option("max_kleene_bindings", _P + "maxKleeneBindings", _long(1), "The most bindings a Kleene closure may produce for one pair of neighbouring rows under SKIP TILL ANY MATCH (default 100000)."),  # noqa: E501
    Option("max_matches_per_partition", _P + "maxMatchesPerPartition", _long(1), "The most SKIP TILL ANY MATCH matches one partition key may produce in one task (default 100000000)."),  # noqa: E501
    Option("target_rows_per_task", _P + "targetRowsPerTask", _long(0), "Input rows per task of a SKIP TILL ANY MATCH plan's shuffle: its tasks are the input's estimated rows divided by this, at most spark.sql.shuffle.partitions (default 10000; 0: always spark.sql.shuffle.partitions)."),  # noqa: E501
    Option("cep_execution", _P + "cepExecution", _choice("auto", "tree", "joins"), "How SKIP TILL ANY MATCH plans run: 'tree' (one pass per partition key, every tree node buffering its partial matches), 'joins' (one band-join operator per tree node) or 'auto' (default: tree, which evaluates every pattern the joins do, unless the statistics say it would buffer over half of max_buffered_partial_matches per key)."),  # noqa: E501
    Option("max_buffered_partial_matches", _P + "maxBufferedPartialMatches", _long(1), "The most partial matches the one-pass tree buffers at once for one partition key under SKIP TILL ANY MATCH (default 2000000)."),  # noqa: E501
    Option("count_without_matches", _P + "countWithoutMatches", _boolean(), "Compute count(*), and count, sum, avg, min and max of first-row measures (or of one later single-row variable's), of a SKIP TILL ANY MATCH query from running counts per first row, without building the matches, when the pattern allows it (default True)."),  # noqa: E501
    Option("plan_patterns_together", _P + "planPatternsTogether", _boolean(), "Plan the SKIP TILL ANY MATCH queries of a UNION ALL over one input together: one scan, shuffle and pass, shared variables and sub-patterns evaluated once (default True)."),  # noqa: E501
)
# fmt: on


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
    ...                   max_live_threads=10_000).getOrCreate()  # doctest: +SKIP

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
    builder.config(  # type: ignore[attr-defined]
        "spark.sql.extensions", _append(current.get("spark.sql.extensions"), EXTENSIONS_CLASS)
    )
    for key, value in settings.items():
        builder.config(key, value)  # type: ignore[attr-defined]
    return builder


def _jar_hint() -> str:
    """The jar's path, or a hint at how to get it if it cannot be found."""
    try:
        return jar_path()
    except FileNotFoundError:
        return "$(python -m spark_match_recognize jar)"


def _document_options() -> None:
    lines = [f"``{o.name}`` ({o.accepts}) sets ``{o.key}``. {o.doc}" for o in OPTIONS.values()]
    indent = "\n" + " " * 12
    if configure.__doc__:
        configure.__doc__ = configure.__doc__.replace("<OPTIONS>", indent.join(lines))


_document_options()
