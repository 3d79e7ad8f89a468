"""configure(), the option table, jar discovery and the version check.

Over 400 lines: one function's surface (every option family, jar discovery, the version
check), whose tests share the option table and session helpers.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession

import spark_match_recognize as smr
from project_settings import (
    SCALA_212_LINES,
    SPARK_RELEASES,
    pyproject_value,
    scala_versions,
    spark_line,
)
from spark_match_recognize import (
    EXTENSIONS_CLASS,
    OPTIONS,
    SparkVersionMismatchError,
    configure,
    jar_info,
    jar_path,
)
from spark_match_recognize import config as config_module
from spark_match_recognize import jars as jars_module
from spark_match_recognize.options import boolean_check, choice_check, double_check

ROOT = Path(__file__).resolve().parent.parent


INSTALLED_LINE = spark_line(pyspark.__version__)
INSTALLED_SCALA = scala_versions(INSTALLED_LINE)[0]  # the Scala its pyspark ships
OTHER_LINE = next(line for line in SPARK_RELEASES if line != INSTALLED_LINE)

V_SHAPE = """
SELECT * FROM VALUES
    ('A', 1, 10), ('A', 2, 9), ('A', 3, 8), ('A', 4, 9), ('A', 5, 10), ('A', 6, 11),
    ('A', 7, 10), ('A', 8, 9), ('A', 9, 12),
    ('B', 1, 5), ('B', 2, 6), ('B', 3, 7), ('B', 4, 6), ('B', 5, 5), ('B', 6, 6),
    ('C', 1, 1), ('C', 2, 2), ('C', 3, 3)
  AS ticker(symbol, tstamp, price)
MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY tstamp
  MEASURES STRT.tstamp AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp,
           LAST(UP.tstamp) AS end_tstamp
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
) AS mr ORDER BY symbol, start_tstamp
"""
# A falls 10 -> 8 and rises to 11 (t1..t6), then 10 -> 9 -> 12 (t7..t9); B rises to 7,
# falls to 5 and rises to 6 (t3..t6); C only rises.
V_SHAPE_ROWS = [("A", 1, 3, 6), ("A", 7, 8, 9), ("B", 3, 5, 6)]


def fresh_builder() -> SparkSession.Builder:
    """A new builder, whose options no other test sees."""
    return SparkSession.Builder()


def make_jar(path: Path, properties: str | None) -> Path:
    with zipfile.ZipFile(path, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        if properties is not None:
            jar.writestr("spark-match-recognize.properties", properties)
    return path


# ---------------------------------------------------------------------------------------
# Options


def test_unknown_option_names_it_and_lists_the_valid_ones():
    with pytest.raises(TypeError) as caught:
        configure(fresh_builder(), max_live_thread=10)
    message = str(caught.value)
    assert "'max_live_thread'" in message
    assert "Did you mean 'max_live_threads'?" in message
    for name in OPTIONS:
        assert name in message


def test_unknown_option_without_a_close_match_has_no_suggestion():
    with pytest.raises(TypeError, match="unknown option 'colour'") as caught:
        configure(fresh_builder(), colour="blue")
    assert "Did you mean" not in str(caught.value)
    assert "max_buffered_rows" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "error", "fragment"),
    [
        ("1000", TypeError, "expected an int, got str '1000'"),
        (10.0, TypeError, "expected an int, got float"),
        (True, TypeError, "expected an int, got bool"),
        (None, TypeError, "expected an int, got NoneType"),
        (0, ValueError, "must be positive"),
        (-5, ValueError, "must be positive"),
        (2**63, ValueError, "at most 2**63-1"),
    ],
)
@pytest.mark.parametrize(
    "name", ["max_live_partial_matches", "max_live_threads", "max_buffered_rows"]
)
def test_bad_option_values_are_rejected(name, value, error, fragment):
    builder = fresh_builder()
    with pytest.raises(error) as caught:
        configure(builder, **{name: value})
    message = str(caught.value)
    assert fragment in message
    assert name in message and OPTIONS[name].key in message
    assert builder._options == {}, "nothing may be set when an option is rejected"


def test_options_map_onto_their_conf_keys():
    builder = configure(fresh_builder(), max_live_partial_matches=1000, max_buffered_rows=2**63 - 1)
    assert builder._options["spark.sql.matchRecognize.maxLivePartialMatches"] == "1000"
    assert builder._options["spark.sql.matchRecognize.maxBufferedRows"] == str(2**63 - 1)
    assert builder._options["spark.jars"] == jar_path()
    assert builder._options["spark.sql.extensions"] == EXTENSIONS_CLASS


def test_an_older_option_name_sets_the_current_key():
    """max_live_threads is the older name of max_live_partial_matches (Spark still reads the
    older key too)."""
    builder = configure(fresh_builder(), max_live_threads=1000)
    assert builder._options["spark.sql.matchRecognize.maxLivePartialMatches"] == "1000"
    assert "spark.sql.matchRecognize.maxLiveThreads" not in builder._options
    assert OPTIONS["max_live_threads"].doc == "The older name of max_live_partial_matches."


def test_optimizer_options_map_onto_their_conf_keys():
    builder = configure(
        fresh_builder(),
        optimizer="DP_Bushy",
        latency_weight=0.5,
        auto_dp_threshold=12,
        statistics_sample_rows=5000,
        explain_candidates=True,
    )
    o = builder._options
    assert o["spark.sql.matchRecognize.joinOrder"] == "dp_bushy"
    assert o["spark.sql.matchRecognize.latencyWeight"] == "0.5"
    assert o["spark.sql.matchRecognize.auto.dpThreshold"] == "12"
    assert o["spark.sql.matchRecognize.statistics.sampleRows"] == "5000"
    assert o["spark.sql.matchRecognize.explainCandidates"] == "true"
    with pytest.raises(ValueError, match="optimizer .*must be one of auto, trivial"):
        configure(fresh_builder(), optimizer="fastest")
    with pytest.raises(ValueError, match="latency_weight .*got -1"):
        configure(fresh_builder(), latency_weight=-1)
    with pytest.raises(ValueError, match="auto_dp_threshold .*between 1 and 14"):
        configure(fresh_builder(), auto_dp_threshold=15)


def test_option_table_rows_are_documented_and_unique():
    # One option per key, besides the older names a key keeps (which say so).
    current = [o.key for o in OPTIONS.values() if not o.doc.startswith("The older name of ")]
    assert len(set(current)) == len(current) == len({o.key for o in OPTIONS.values()})
    for name, option in OPTIONS.items():
        assert option.name == name
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", name)
        assert option.key.startswith("spark.sql.matchRecognize.")
        assert option.doc and option.accepts


def test_value_checks_for_other_kinds_of_keys():
    """The checks that upcoming keys (choices, weights, switches) will use."""
    choice = config_module.Option("mode", "k", choice_check("auto", "on", "off"), "d")
    assert choice.to_conf("ON") == "on"
    with pytest.raises(ValueError, match="option mode \\(k\\): must be one of auto, on, off"):
        choice.to_conf("maybe")
    weight = config_module.Option("weight", "k", double_check(0.0, 1.0), "d")
    assert weight.to_conf(1) == "1.0" and weight.to_conf(0.25) == "0.25"
    for bad, error in ((1.5, ValueError), (float("nan"), ValueError), ("0.5", TypeError)):
        with pytest.raises(error):
            weight.to_conf(bad)
    switch = config_module.Option("switch", "k", boolean_check(), "d")
    assert (switch.to_conf(True), switch.to_conf(False)) == ("true", "false")
    with pytest.raises(TypeError):
        switch.to_conf("true")
    assert "one of auto, on, off" in choice.accepts and "True or False" in switch.accepts


def test_weights_are_finite_as_the_scala_confs_require():
    """latencyWeight and candidateWeight refuse infinity (MatchRecognizeConf's checkValue)."""
    for name in ("latency_weight", "candidate_weight"):
        key = OPTIONS[name].key
        assert OPTIONS[name].accepts == "a finite number >= 0.0"
        assert configure(fresh_builder(), **{name: 2.5})._options[key] == "2.5"
        for bad in (math.inf, math.nan, -0.5):
            with pytest.raises(ValueError, match=f"{name} .*must be a finite number >= 0.0"):
                configure(fresh_builder(), **{name: bad})


def test_the_builder_must_be_a_session_builder():
    for builder in (None, "local[2]", SparkSession):
        with pytest.raises(TypeError, match=r"configure\(\) needs a SparkSession builder"):
            configure(builder)


def test_no_options_sets_only_the_jar_and_the_extension():
    builder = configure(fresh_builder())
    assert set(builder._options) == {"spark.jars", "spark.sql.extensions"}


def test_existing_jars_and_extensions_are_appended_to_once():
    builder = (
        fresh_builder()
        .config("spark.jars", "/opt/libs/other.jar")
        .config("spark.sql.extensions", "com.example.OtherExtensions")
    )
    configure(builder)
    configure(builder)  # a second call must not add the same entries again
    assert builder._options["spark.jars"] == f"/opt/libs/other.jar,{jar_path()}"
    assert builder._options["spark.sql.extensions"] == (
        f"com.example.OtherExtensions,{EXTENSIONS_CLASS}"
    )


def test_spark_connect_builder_is_refused():
    builder = fresh_builder().remote("sc://localhost:15002")
    with pytest.raises(ValueError, match="Spark Connect"):
        configure(builder)


# ---------------------------------------------------------------------------------------
# Versions


@pytest.mark.smoke
def test_the_supported_lines_are_pyprojects():
    assert smr.SPARK_LINES == tuple(SPARK_RELEASES)
    # and so are the lines with a Scala 2.12 jar beside the 2.13 one
    assert {line for line in smr.SPARK_LINES if "2.12" in jars_module.scala_versions(line)} == (
        SCALA_212_LINES
    )
    assert INSTALLED_LINE in SPARK_RELEASES


def test_a_local_connect_session_on_pyspark_3_gets_the_connect_server_package(monkeypatch):
    """pyspark 3.5's release leaves Spark Connect's server to spark.jars.packages (pyspark 4
    ships it): configure() adds the package of the installed pyspark, once."""
    from spark_match_recognize.config import _connect_server_package

    monkeypatch.setattr(pyspark, "__version__", "3.5.9")
    monkeypatch.setattr(config_module, "installed_scala_version", lambda: "2.12")
    server = "org.apache.spark:spark-connect_2.12:3.5.9"
    assert _connect_server_package("local[2]", None) == server
    assert _connect_server_package("local[2]", "a:b:1") == f"a:b:1,{server}"
    assert _connect_server_package("local[2]", "org.apache.spark:spark-connect_2.12:3.5.1") is None
    assert _connect_server_package(None, None) is None  # a classic session
    monkeypatch.setattr(pyspark, "__version__", "4.1.3")
    assert _connect_server_package("local[2]", None) is None


@pytest.mark.smoke
def test_pyspark_of_an_unsupported_line_is_refused_with_the_supported_lines(monkeypatch):
    monkeypatch.delenv("SPARK_MATCH_RECOGNIZE_JAR", raising=False)
    monkeypatch.setattr(pyspark, "__version__", "3.4.1")
    builder = fresh_builder()
    with pytest.raises(smr.UnsupportedSparkVersionError) as caught:
        configure(builder, max_live_threads=5)
    message = str(caught.value)
    assert message.startswith("pyspark 3.4.1 is installed, but spark-match-recognize")
    assert f"supports the Spark lines {', '.join(SPARK_RELEASES)}" in message
    assert caught.value.spark_version == "3.4.1"
    assert builder._options == {}
    # jar_path() and the command line say the same, without a stack trace.
    with pytest.raises(smr.UnsupportedSparkVersionError):
        jar_path()
    with pytest.raises(smr.UnsupportedSparkVersionError, match="supports the Spark lines"):
        jar_path("3.4")


def test_any_patch_release_of_the_line_passes(monkeypatch):
    patch = f"{INSTALLED_LINE}.99"
    monkeypatch.setattr(pyspark, "__version__", patch)
    assert smr.check_spark_version() == patch


@pytest.mark.smoke
def test_matching_pyspark_version_passes():
    assert smr.check_spark_version() == pyspark.__version__
    assert jar_info()["spark.line"] == INSTALLED_LINE


@pytest.mark.smoke
def test_jar_info_reads_the_versions_recorded_in_the_jar():
    info = jar_info()
    assert info["version"] == smr.__version__ == pyproject_value("version")
    assert info["spark.version"] == SPARK_RELEASES[INSTALLED_LINE]
    assert info["spark.line"] == INSTALLED_LINE
    scala = "scala212-version" if INSTALLED_SCALA == "2.12" else "scala-version"
    assert info["scala.version"] == pyproject_value(scala)
    assert smr.SPARK_VERSION == SPARK_RELEASES[INSTALLED_LINE]
    assert jar_info(jar_path()) == info


def test_jar_info_reads_any_jar_and_rejects_foreign_ones(tmp_path):
    jar = make_jar(
        tmp_path / "custom.jar",
        "# comment\nversion=9.9.9\nspark.version=4.9.0\nscala.version=2.13.99\n",
    )
    assert jar_info(jar) == {
        "version": "9.9.9",
        "spark.version": "4.9.0",
        "spark.line": "4.9",
        "scala.version": "2.13.99",
    }
    with pytest.raises(ValueError, match="not a spark-match-recognize jar"):
        jar_info(make_jar(tmp_path / "foreign.jar", None))
    (tmp_path / "text.jar").write_text("not a zip")
    with pytest.raises(ValueError, match="not a jar"):
        jar_info(tmp_path / "text.jar")


@pytest.mark.smoke
def test_version_check_uses_the_jar_that_configure_adds(tmp_path, monkeypatch):
    release = f"{OTHER_LINE}.0"
    jar = make_jar(
        tmp_path / "other.jar", f"version=0.0.1\nspark.version={release}\nscala.version=2.13.16\n"
    )
    monkeypatch.setenv("SPARK_MATCH_RECOGNIZE_JAR", str(jar))
    with pytest.raises(SparkVersionMismatchError) as caught:
        configure(fresh_builder())
    message = str(caught.value)
    assert f"built for the Spark {OTHER_LINE} line ({release})" in message
    assert str(jar) in message and f"pip install 'pyspark=={OTHER_LINE}.*'" in message
    assert (caught.value.pyspark_version, caught.value.jar_spark_version) == (
        pyspark.__version__,
        release,
    )


# ---------------------------------------------------------------------------------------
# Finding the jar


def test_env_var_overrides_the_jar(tmp_path, monkeypatch):
    jar = make_jar(tmp_path / "mine.jar", "version=1\nspark.version=1\nscala.version=1\n")
    monkeypatch.setenv("SPARK_MATCH_RECOGNIZE_JAR", str(jar))
    assert jar_path() == str(jar.resolve())


def test_env_var_naming_a_missing_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_MATCH_RECOGNIZE_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(FileNotFoundError, match="SPARK_MATCH_RECOGNIZE_JAR is set to"):
        jar_path()


def test_default_jar_is_bundled_or_built_in_the_checkout(monkeypatch):
    monkeypatch.delenv("SPARK_MATCH_RECOGNIZE_JAR", raising=False)
    path = Path(jar_path())
    assert path.is_file()
    name = f"spark-match-recognize-spark{INSTALLED_LINE}_{INSTALLED_SCALA}-{smr.__version__}.jar"
    assert path.name == name
    bundled = Path(jars_module.__file__).parent / "jars"
    checkout = jars_module.source_checkout()
    assert path.parent == bundled or (checkout and path == checkout / "target" / path.name)


def test_every_lines_jar_is_found_by_its_line(monkeypatch):
    monkeypatch.delenv("SPARK_MATCH_RECOGNIZE_JAR", raising=False)
    for line, release in SPARK_RELEASES.items():
        path = jar_path(line)
        scala = scala_versions(line)[0]
        assert Path(path).name == f"spark-match-recognize-spark{line}_{scala}-{smr.__version__}.jar"
        assert jar_info(path)["spark.version"] == release
        for scala in scala_versions(line):
            path = jar_path(line, scala)
            assert jar_info(path)["scala.version"].startswith(scala + ".")
            assert jar_info(path)["spark.version"] == release
    with pytest.raises(ValueError, match="Spark 4.3 has a spark-match-recognize jar for Scala 2.1"):
        jar_path("4.3", "2.12")


def test_missing_jar_explains_how_to_get_one(tmp_path, monkeypatch):
    monkeypatch.delenv("SPARK_MATCH_RECOGNIZE_JAR", raising=False)
    monkeypatch.setattr(jars_module, "_PACKAGE_DIR", tmp_path / "package")
    monkeypatch.setattr(jars_module, "source_checkout", lambda: tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        jar_path()
    message = str(caught.value)
    assert f"jar for Spark {INSTALLED_LINE} was not found" in message
    assert "./dev/sbt package" in message
    assert str(tmp_path / "target") in message
    assert "SPARK_MATCH_RECOGNIZE_JAR" in message

    monkeypatch.setattr(jars_module, "source_checkout", lambda: None)
    with pytest.raises(FileNotFoundError, match="pip install spark-match-recognize"):
        jar_path()


def test_source_checkout_is_this_repository_when_run_from_it():
    checkout = jars_module.source_checkout()
    package = Path(jars_module.__file__).resolve().parent
    if package == ROOT / "python" / "spark_match_recognize":
        assert checkout == ROOT
    else:  # an installed (non-editable) copy is never mistaken for a checkout
        assert checkout is None


# ---------------------------------------------------------------------------------------
# A running JVM without the extension


class _FakeConf:
    def __init__(self, extensions: str) -> None:
        self.extensions = extensions

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.extensions if key == "spark.sql.extensions" else default


class _FakeContext:
    _jsc = object()

    def __init__(self, extensions: str) -> None:
        self.conf = _FakeConf(extensions)

    def getConf(self) -> _FakeConf:  # noqa: N802 (SparkContext's name)
        return self.conf


def test_running_context_without_the_extension_is_reported(monkeypatch):
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_active_spark_context", _FakeContext("com.example.X"))
    with pytest.raises(RuntimeError, match="already running"):
        configure(fresh_builder())
    monkeypatch.setattr(
        SparkContext, "_active_spark_context", _FakeContext(f"com.example.X,{EXTENSIONS_CLASS}")
    )
    configure(fresh_builder())


# ---------------------------------------------------------------------------------------
# End to end, on the shared session


def _sections(plan: str) -> dict[str, str]:
    parts = re.split(r"^== (.+) ==$", plan, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.smoke
def test_configured_session_runs_match_recognize(spark):
    key = "spark.sql.matchRecognize.maxLivePartialMatches"
    try:
        session = configure(SparkSession.builder.master("local[2]"), max_live_partial_matches=1000)
        session = session.getOrCreate()
        assert session.conf.get(key) == "1000"

        df = session.sql(V_SHAPE)
        # The plan before execution: afterwards adaptive execution shows it twice.
        plan = _sections(df._jdf.queryExecution().toString())
        assert df.columns == ["symbol", "start_tstamp", "bottom_tstamp", "end_tstamp"]
        assert [tuple(row) for row in df.collect()] == V_SHAPE_ROWS

        assert re.search(
            r"^\s*(\+- )?MatchRecognize PARTITION BY symbol#\d+, ORDER BY .*"
            r"PATTERN \(STRT DOWN\+ UP\+\)",
            plan["Analyzed Logical Plan"],
            re.MULTILINE,
        ), plan["Analyzed Logical Plan"]
        assert "MatchRecognize PARTITION BY" in plan["Optimized Logical Plan"]
        physical = [
            line
            for line in plan["Physical Plan"].splitlines()
            if re.search(r"\bMatchRecognize PARTITION BY", line)
        ]
        assert len(physical) == 1, plan["Physical Plan"]
        assert "measures=[start_tstamp, bottom_tstamp, end_tstamp]" in physical[0]
        assert "ONE ROW PER MATCH" in physical[0]
    finally:
        spark.conf.unset(key)


def test_limit_set_by_configure_is_enforced(spark):
    """The conf key that an option sets is the one the operator reads."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    key = OPTIONS["max_live_partial_matches"].key
    try:
        configure(SparkSession.builder, max_live_partial_matches=1).getOrCreate()
        query = """SELECT * FROM VALUES (1, 1), (1, 2), (1, 3) AS t(k, v) MATCH_RECOGNIZE (
            PARTITION BY k ORDER BY v MEASURES count(*) AS n ONE ROW PER MATCH
            PATTERN (A+ B) DEFINE A AS v > 0)"""
        with pytest.raises((Py4JJavaError, PySparkException)) as caught:
            spark.sql(query).collect()
        assert key in str(caught.value)
    finally:
        spark.conf.unset(key)
    assert spark.sql(query).count() == 1
