"""match_recognize() and match_patterns() keep each argument in its place: an argument that
would change the statement they write is refused (on classic sessions and on Spark Connect),
names come out exactly as given; and configure() refuses a process whose JVM cannot load the
extension."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spark_match_recognize import match_patterns, match_recognize, match_recognize_sql
from spark_match_recognize.dataframe import temp_view_names

PYTHON_DIR = Path(__file__).resolve().parent.parent / "python"
SECRET = "api_safety_secret"
TICKS = [
    ("A", datetime.datetime(2024, 3, 1, 9, m), p)
    for m, p in enumerate([10, 8, 6, 9, 12, 11, 7, 13])
]


@pytest.fixture(scope="module")
def ticks(spark):
    spark.createDataFrame([("top-secret",)], "s string").createOrReplaceTempView(SECRET)
    yield spark.createDataFrame(TICKS, "sym string, ts timestamp, price int")
    spark.catalog.dropTempView(SECRET)


UNION = f"UNION ALL SELECT s FROM {SECRET}"

# (arguments besides pattern="A", the argument the message names, a piece of the text)
INJECTIONS = [
    ({"measures": {f"`n`, (SELECT max(s) FROM {SECRET}) AS `leak`": "count(*)"}},
     "a measure name", "SELECT max(s)"),
    ({"define": {"A": f"price > 0 ) {UNION} WHERE (1 = 1"}},
     "the DEFINE condition of 'A'", "closes no bracket"),
    ({"define": {"A": "price > 0, B AS true"}}, "the DEFINE condition of 'A'", "','"),
    ({"define": {"A": f"r'x''\\'' ) {UNION} --'"}},
     "the DEFINE condition of 'A'", "closes no bracket"),
    ({"define": {"A": f"SELECT s FROM {SECRET}"}}, "the DEFINE condition of 'A'", "SELECT"),
    ({"measures": {"n": "count(*) AS leak"}}, "measure 'n'", "AS outside parentheses"),
    ({"measures": {"n": "count(*); DROP VIEW x"}}, "measure 'n'", "';'"),
    ({"measures": {"n": "'unclosed"}}, "measure 'n'", "unterminated string"),
    ({"partition_by": f"sym) {UNION} --"}, "each item of partition_by", "closes no bracket"),
    ({"order_by": f"ts) {UNION} --"}, "each item of order_by", "closes no bracket"),
    ({"order_by": [(f"ts) {UNION} --", "asc")]}, "the expression of an order_by tuple", "ts)"),
    ({"within": f"INTERVAL '1' MINUTE) {UNION} --"}, "within=", "expected INTERVAL"),
    ({"within": "5 ROWS DEFINE A AS true"}, "within=", "expected INTERVAL"),
    ({"after_match_skip": f"TO `A`)/**/{UNION.replace(' ', '/**/')}/**/--`"},
     "the skip variable", "not one back-quoted identifier"),
    ({"subset": {"`U` = (A), `V`": ["A"]}}, "a SUBSET name", "not one back-quoted"),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "argument", "fragment"), INJECTIONS)
def test_an_argument_that_would_change_the_statement_is_refused(
    spark, ticks, kwargs, argument, fragment
):
    views = temp_view_names(spark)
    with pytest.raises(ValueError) as caught:
        match_recognize(ticks, **{"order_by": "ts", "pattern": "A", **kwargs})
    message = str(caught.value)
    assert message.startswith("match_recognize(): ") and argument in message
    assert fragment in message, message
    assert temp_view_names(spark) == views, "refused before anything is registered"


def test_a_pattern_cannot_close_its_parenthesis(ticks):
    with pytest.raises(ValueError, match="pattern: the '\\)' at offset 1 closes no bracket"):
        match_recognize(ticks, order_by="ts", pattern=f"A) DEFINE A AS true) {UNION} (")
    with pytest.raises(ValueError, match="a pattern holds no string"):
        match_recognize(ticks, order_by="ts", pattern="A 'x'")


def test_a_relation_must_be_a_table_name():
    assert match_recognize_sql("`my db`.t", pattern="A").startswith(
        "SELECT * FROM `my db`.t MATCH_RECOGNIZE"
    )
    for relation in (f"t {UNION}", f"(SELECT s FROM {SECRET})", "t; DROP VIEW t"):
        with pytest.raises(ValueError, match="relation"):
            match_recognize_sql(relation, pattern="A")


def test_comments_are_dropped_so_they_swallow_nothing(spark, ticks):
    # A `--` comment left in place would comment out ` AS n,` after it.
    result = match_recognize(
        ticks,
        order_by="ts -- time",
        measures={"n": "count(*) -- how many", "top": "max(price) /* all rows */"},
        pattern="A+ /* all */",
        define={"A": "price > 0 -- every row"},
    )
    assert result.columns == ["n", "top"]
    assert [tuple(r) for r in result.collect()] == [(8, 13)]


def test_names_are_one_identifier(ticks):
    result = match_recognize(
        ticks,
        order_by="ts",
        measures={"`total`": "count(*)", "we`ird": "min(price)", "a b": "max(price)"},
        pattern="A+",
        define={"A": "price > 0"},
    )
    assert result.columns == ["total", "we`ird", "a b"]
    assert [tuple(r) for r in result.collect()] == [(8, 6, 13)]


def test_the_pattern_expressions_of_the_clause_are_accepted(spark, ticks):
    result = match_recognize(
        ticks,
        partition_by=["sym"],
        order_by=["ts ASC NULLS LAST"],
        measures={
            "top": "FINAL max(UP.price)",
            "ups": "count(UP.*)",
            "cls": "CLASSIFIER()",
            "mn": "MATCH_NUMBER()",
            "kind": "CASE WHEN CAST(FIRST(STRT.price) AS string) = '10' THEN 'first' END",
        },
        pattern="STRT DOWN+ UP+",
        define={
            "DOWN": "price < PREV(price)",
            "UP": "price > PREV(price) AND price IS DISTINCT FROM -1",
        },
    )
    ticks.createOrReplaceTempView("api_safety_ticks")
    expected = spark.sql(
        """SELECT * FROM api_safety_ticks MATCH_RECOGNIZE (
             PARTITION BY sym ORDER BY ts ASC NULLS LAST
             MEASURES FINAL max(UP.price) AS top, count(UP.*) AS ups, CLASSIFIER() AS cls,
               MATCH_NUMBER() AS mn,
               CASE WHEN CAST(FIRST(STRT.price) AS string) = '10' THEN 'first' END AS kind
             PATTERN (STRT DOWN+ UP+)
             DEFINE DOWN AS price < PREV(price),
               UP AS price > PREV(price) AND price IS DISTINCT FROM -1)"""
    )
    rows = [tuple(r) for r in result.collect()]
    assert rows == [tuple(r) for r in expected.collect()]
    assert rows == [("A", 12, 2, "UP", 1, "first"), ("A", 13, 1, "UP", 2, None)]


def test_sparks_parser_reads_each_expression_on_a_classic_session(ticks):
    # Two expressions side by side: no bracket, comma or AS gives it away, Spark's parser
    # does (alone it would read `price` as an alias).
    two = {"A": "price > 0 price"}
    assert "A AS price > 0 price" in match_recognize_sql("t", pattern="A", define=two)
    with pytest.raises(ValueError) as caught:
        match_recognize(ticks, order_by="ts", pattern="A", define=two)
    message = str(caught.value)
    assert "the DEFINE condition of 'A': not one Spark SQL expression" in message
    assert "PARSE_SYNTAX_ERROR" in message


def test_match_patterns_checks_every_pattern(ticks):
    with pytest.raises(ValueError, match="^pattern 'bad': the DEFINE condition of 'A'"):
        match_patterns(
            ticks,
            {"ok": {"pattern": "A"}, "bad": {"pattern": "A", "define": {"A": f"1=1) {UNION}"}}},
            order_by="ts",
        )
    with pytest.raises(ValueError, match="name_column"):
        match_patterns(ticks, {"ok": {"pattern": "A"}}, order_by="ts", name_column="`a`b`")
    with pytest.raises(TypeError, match="pattern 'ok': unknown arguments \\['patern'\\]"):
        match_patterns(ticks, {"ok": {"patern": "A", "pattern": "A"}}, order_by="ts")


NAMES = ["it's", "back\\slash", "both\\'", "plain", "`tick`"]


@pytest.mark.parametrize("escaped", ["false", "true"])
def test_pattern_names_come_out_as_given(spark, ticks, escaped):
    key = "spark.sql.parser.escapedStringLiterals"
    spark.conf.set(key, escaped)
    try:
        result = match_patterns(
            ticks,
            {name: {"pattern": "A"} for name in NAMES},
            order_by="ts",
            measures={"n": "count(*)"},
            define={"A": "price > 12"},
        )
        assert sorted(r.pattern for r in result.collect()) == sorted(NAMES)
    finally:
        spark.conf.unset(key)


# ---------------------------------------------------------------------------------------
# In processes of their own: configure() after a first session stopped, Spark Connect


def _run(script: str, **env_vars: str) -> str:
    env = dict(os.environ)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_DIR), env.get("PYTHONPATH")) if p)
    env.update(env_vars)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


STOPPED_FIRST = """
from pyspark.sql import SparkSession
from spark_match_recognize import configure

first = {first}.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
first.stop()
try:
    spark = configure(SparkSession.builder.master("local[1]")).getOrCreate()
except RuntimeError as e:
    print("REFUSED:", e)
else:
    rows = spark.sql(
        "SELECT * FROM VALUES (1), (2) AS t(x) MATCH_RECOGNIZE (ORDER BY x "
        "MEASURES count(*) AS n PATTERN (A+) DEFINE A AS x > 0)").collect()
    print("RAN:", [r.n for r in rows])
    spark.stop()
"""


def test_configure_after_a_plain_session_stopped_is_refused():
    out = _run(STOPPED_FIRST.format(first="SparkSession.builder"))
    assert out.startswith("REFUSED:"), out
    assert "without the spark-match-recognize jar" in out and "new Python process" in out


def test_configure_after_a_configured_session_stopped_works():
    out = _run(STOPPED_FIRST.format(first="configure(SparkSession.builder)"))
    assert out.strip() == "RAN: [2]", out


CONNECT_CLIENT = """
import json, warnings
from pyspark.sql import SparkSession
from spark_match_recognize import configure, match_recognize

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # spark.jars cannot change once the server runs
    spark = configure(SparkSession.builder.remote("local[1]")).getOrCreate()
df = spark.createDataFrame([(1, 5), (2, 7)], "ts int, price int")
calls = {calls}
out = {{"session": type(spark).__module__}}
for name, define in calls.items():
    try:
        rows = match_recognize(df, order_by="ts", measures={{"n": "count(*)"}},
                               pattern="A+", define=define).collect()
        out[name] = [r.n for r in rows]
    except Exception as e:
        out[name] = [type(e).__name__, str(e).strip().split("\\n")[0]]
spark.stop()
print("RESULT " + json.dumps(out))
"""


def test_spark_connect_refuses_the_same_arguments():
    calls = {
        "fine": {"A": "price > 0"},
        "union": {"A": f"price > 0 ) {UNION} WHERE (1 = 1"},
        "raw": {"A": f"r'x''\\'' ) {UNION} --'"},
    }
    out = _run(CONNECT_CLIENT.format(calls=repr(calls)), SPARK_TESTING="1", TZ="UTC")
    result = json.loads(next(x for x in out.splitlines() if x.startswith("RESULT "))[7:])
    assert result["session"] == "pyspark.sql.connect.session"
    assert result["fine"] == [2]
    assert result["union"][0] == "ValueError" and "closes no bracket" in result["union"][1]
    assert result["raw"][0] == "ValueError" and "closes no bracket" in result["raw"][1]
