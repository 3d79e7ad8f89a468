"""Spark's own SQL is left alone: ordinary statements give the same rows, and the same
errors, with the extension as without it, also where `match_recognize` is an ordinary
identifier (a function, a CTE, a table, view or subquery alias with a column list, a SET
value).

Plain Spark runs in a separate process (tests/plain_spark_runner.py) without the
extension; the extension's side runs in a new session of the test session, so both start
from the same empty state and run the statements in the same order.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from plain_spark_runner import outcome
from spark_match_recognize import EXTENSIONS_CLASS, check, jar_path

HERE = Path(__file__).parent

STATEMENTS = [
    # Set-up
    "CREATE OR REPLACE TEMPORARY VIEW diff_t AS SELECT * FROM VALUES "
    "(1, 'a', 10), (2, 'b', 20), (3, 'a', 30), (4, 'c', 40) AS t(id, k, v)",
    "CREATE OR REPLACE TEMPORARY VIEW match_recognize AS "
    "SELECT * FROM VALUES (1, 2), (3, 4) AS t(x, y)",
    # `match_recognize` as a function
    "SELECT match_recognize(41)",
    "SELECT id FROM diff_t WHERE match_recognize(id) > 0",
    "SELECT match_recognize (id, k) FROM diff_t",
    "SELECT match_recognize(*) FROM diff_t",
    "SELECT match_recognize(DISTINCT id) FROM diff_t",
    "SELECT match_recognize(ALL rows) FROM (SELECT 1 AS rows)",
    "SELECT match_recognize(measures) FROM (SELECT 1 AS measures)",
    "SELECT match_recognize(partition) FROM (SELECT 1 AS partition)",
    "SELECT match_recognize(pattern(1))",
    "SELECT match_recognize(x => 1)",
    "SELECT `match_recognize`(1)",
    "SELECT match_recognize -- a comment\n(1)",
    "SELECT * FROM match_recognize(1)",
    "SELECT * FROM match_recognize(pattern(1))",
    "SELECT transform(array(1, 2), match_recognize -> match_recognize + 1) AS a",
    # CTEs named match_recognize
    "WITH match_recognize (x, y) AS (SELECT 1, 2) SELECT * FROM match_recognize",
    "WITH match_recognize (a) AS (SELECT id FROM diff_t) SELECT a FROM match_recognize WHERE a > 2",
    "WITH match_recognize(pattern, measures) AS (SELECT 1, 2) SELECT pattern + measures "
    "FROM match_recognize",
    "WITH c (n) AS (SELECT 1), match_recognize (m) AS (SELECT n + 1 FROM c) "
    "SELECT * FROM match_recognize",
    # table, subquery, VALUES and table function aliases with column lists
    "SELECT * FROM diff_t AS match_recognize (i, kk, vv)",
    "SELECT * FROM diff_t match_recognize (i, kk, vv) WHERE i > 1",
    "SELECT i FROM (SELECT id FROM diff_t) AS match_recognize (i)",
    "SELECT * FROM VALUES (1, 2) AS match_recognize (a, b)",
    "SELECT * FROM range(3) AS match_recognize (i)",
    "SELECT * FROM range(3) match_recognize(i)",
    "SELECT * FROM diff_t AS match_recognize (measures, pattern, define)",
    "SELECT * FROM diff_t AS match_recognize (i, k)",
    "SELECT * FROM diff_t t1 JOIN diff_t match_recognize ON t1.id = match_recognize.id",
    "SELECT * FROM diff_t MATCH_RECOGNIZE WHERE id > 2",
    "SELECT /*+ BROADCAST(match_recognize) */ * FROM diff_t AS match_recognize (a, b, c)",
    "SELECT id, x FROM diff_t LATERAL VIEW explode(array(1, 2)) match_recognize AS x",
    # views
    "CREATE OR REPLACE TEMPORARY VIEW diff_v AS "
    "SELECT i FROM range(5) AS match_recognize (i) WHERE i % 2 = 0",
    "SELECT * FROM diff_v",
    "CREATE OR REPLACE TEMPORARY VIEW diff_v2 (a, b) AS SELECT * FROM match_recognize",
    "SELECT * FROM diff_v2",
    "SELECT * FROM match_recognize",
    "SELECT match_recognize.x FROM match_recognize",
    "SELECT 1 AS match_recognize",
    "SELECT match_recognize FROM (SELECT 1 AS match_recognize)",
    # SET
    "SET diff.k = MATCH_RECOGNIZE",
    "SET diff.k",
    "SET diff.k2 = match_recognize (x)",
    "SET diff.k2",
    "SET diff.k3 = MATCH_RECOGNIZE (PARTITION BY x",
    # text that only mentions the keyword
    "SELECT 'MATCH_RECOGNIZE (PARTITION BY x' AS s",
    "SELECT /* match_recognize ( partition by */ 1 AS one",
    "SELECT `MATCH_RECOGNIZE (` FROM (SELECT 1 AS `MATCH_RECOGNIZE (`)",
    "SELECT match_recognize('unclosed",
    "SELECT 1 AS x -- MATCH_RECOGNIZE (",
    # DDL
    "EXPLAIN CREATE TABLE match_recognize (measures INT, pattern STRING) USING parquet",
    "EXPLAIN CREATE TABLE match_recognize (measures BIGINT GENERATED ALWAYS AS IDENTITY) "
    "USING parquet",
    "EXPLAIN SELECT * FROM range(2) AS match_recognize (i)",
    # SQL functions and variables named match_recognize
    "CREATE TEMPORARY FUNCTION match_recognize(x INT) RETURNS INT RETURN x + 1",
    "SELECT match_recognize(41) AS r",
    "SELECT id FROM diff_t WHERE match_recognize(id) > 3",
    "DECLARE VARIABLE match_recognize INT DEFAULT 5",
    "SELECT match_recognize",
    # Ordinary SQL
    "SELECT id, row_number() OVER (PARTITION BY k ORDER BY id) AS rn FROM diff_t",
    "SELECT id, sum(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s "
    "FROM diff_t",
    "SELECT id, rank() OVER w AS r FROM diff_t WINDOW w AS (PARTITION BY k ORDER BY v DESC)",
    "SELECT * FROM (SELECT k, v FROM diff_t) PIVOT (sum(v) FOR k IN ('a', 'b', 'c'))",
    "SELECT * FROM (SELECT 1 AS id, 2 AS a, 3 AS b) UNPIVOT (val FOR col IN (a, b))",
    "SELECT id, x FROM diff_t LATERAL VIEW explode(array(1, 2)) e AS x",
    "SELECT * FROM diff_t, LATERAL (SELECT id * 2 AS d)",
    "SELECT k, sum(v) FROM diff_t GROUP BY ROLLUP (k)",
    "SELECT k, id % 2 AS p, count(*) FROM diff_t GROUP BY CUBE (k, id % 2)",
    "SELECT k, count(*) AS n FROM diff_t GROUP BY k HAVING count(*) > 1",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
    "SELECT id FROM diff_t UNION SELECT id + 10 FROM diff_t",
    "SELECT id FROM diff_t INTERSECT SELECT 2",
    "SELECT id FROM diff_t EXCEPT SELECT 2",
    "SELECT CASE WHEN v > 15 THEN 'big' ELSE 'small' END AS size, CAST(v AS STRING) FROM diff_t",
    "SELECT named_struct('a', 1, 'b', array(1, 2)) AS s, map('k', 1) AS m",
    "SELECT aggregate(array(1, 2, 3), 0, (acc, x) -> acc + x) AS total",
    "SELECT * FROM diff_t ORDER BY v DESC LIMIT 2 OFFSET 1",
    "SELECT * FROM diff_t TABLESAMPLE (100 PERCENT)",
    "VALUES (1, 'x'), (2, 'y')",
    "DESCRIBE diff_t",
    "SELECT id FROM diff_t WHERE id IN (SELECT match_recognize FROM (SELECT 2 AS match_recognize))",
    "SELECT first(v) IGNORE NULLS OVER (ORDER BY id) AS f FROM diff_t",
    "SET spark.sql.ansi.enabled = false",
    "SELECT 1 / 0 AS q",
    "SET spark.sql.ansi.enabled = true",
    "SELECT 1 / 0 AS q",
    "EXECUTE IMMEDIATE 'SELECT match_recognize(1) AS e'",
    # Errors that are Spark's
    "SELECT * FROM nonexistent_table",
    "SELECT FROM WHERE",
    "SELECT 'unclosed",
    "SELECT nope FROM diff_t",
    "SELECT * FROM diff_t WHERE",
]


@pytest.fixture(scope="module")
def plain_outcomes(tmp_path_factory):
    """The outcome of every statement in plain Spark, in a process of its own."""
    folder = tmp_path_factory.mktemp("plain")
    source, target = folder / "statements.json", folder / "outcomes.json"
    source.write_text(json.dumps(STATEMENTS), encoding="utf-8")
    env = dict(os.environ)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    result = subprocess.run(
        [sys.executable, str(HERE / "plain_spark_runner.py"), str(source), str(target)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(target.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def extension_outcomes(spark):
    session = spark.newSession()
    # The new session has the extension: a clause runs in it.
    probe = session.sql(
        "SELECT * FROM VALUES (1), (2) AS t(x) MATCH_RECOGNIZE (ORDER BY x MEASURES "
        "count(*) AS n PATTERN (A+) DEFINE A AS x > 0)"
    ).collect()
    assert [r.n for r in probe] == [2]
    return [outcome(session, sql) for sql in STATEMENTS]


def test_the_corpus_covers_the_shapes():
    assert len(STATEMENTS) >= 80
    assert sum("match_recognize" in s.lower() for s in STATEMENTS) >= 40


@pytest.mark.parametrize("index", range(len(STATEMENTS)), ids=[s[:60] for s in STATEMENTS])
def test_same_outcome_as_plain_spark(plain_outcomes, extension_outcomes, index):
    assert extension_outcomes[index] == plain_outcomes[index], STATEMENTS[index]


def test_both_sides_have_rows_and_errors(plain_outcomes):
    errors = [o for o in plain_outcomes if "error" in o]
    assert 10 <= len(errors) <= len(plain_outcomes) - 40, errors


@pytest.mark.parametrize("sql", [s for s in STATEMENTS if "match_recognize" in s.lower()])
def test_check_sees_no_clause(sql):
    assert check(sql) == []


def test_check_reads_set_values_as_text():
    assert check("SET k = MATCH_RECOGNIZE (PARTITION BY x") == []
    problems = check("SET VAR v = (SELECT 1 FROM t MATCH_RECOGNIZE (PARTITION BY x))")
    assert [p.message for p in problems] == [
        "Syntax error at or near ')': MATCH_RECOGNIZE requires a PATTERN clause."
    ]


# ---------------------------------------------------------------------------------------
# The real spark-sql command line, with and without the extension


GUARD = (
    "SELECT 'mr-guard', n FROM VALUES (1), (2) AS t(x) MATCH_RECOGNIZE (ORDER BY x "
    "MEASURES count(*) AS n PATTERN (A+) DEFINE A AS x > 0)"
)


def _start_spark_sql_cli(script: Path, cwd: Path, extension: bool) -> subprocess.Popen:
    spark_home = Path(pyspark.__file__).resolve().parent
    env = dict(os.environ, SPARK_HOME=str(spark_home))
    command = [
        str(spark_home / "bin" / "spark-sql"),
        "--master", "local[2]",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=4",
        "--conf", "spark.sql.catalogImplementation=in-memory",
        "--conf", "spark.sql.session.timeZone=UTC",
        "--hiveconf", "hive.cli.errors.ignore=true",
    ]  # fmt: skip
    if extension:
        command += ["--jars", jar_path(), "--conf", f"spark.sql.extensions={EXTENSIONS_CLASS}"]
    command += ["-f", str(script)]
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(process: subprocess.Popen) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, _EXPRESSION_ID.sub("#", out), err


_EXPRESSION_ID = re.compile(r"#\d+")
_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_.]+)\]")


def _errors(stderr: str) -> list[str]:
    """The error conditions spark-sql printed, in order."""
    return [m.group(1) for line in stderr.splitlines() for m in _CONDITION.finditer(line)]


@pytest.mark.cli
def test_spark_sql_cli_prints_the_same(tmp_path):
    # spark-sql splits a script at semicolons and strips comments on its own; statements
    # with a comment or a quote that does not close are left to the spark.sql tests.
    statements = [s for s in STATEMENTS if "--" not in s and "unclosed" not in s]
    script = tmp_path / "corpus.sql"
    script.write_text("".join(f"{s};\n" for s in statements), encoding="utf-8")
    # The extension's run ends with a clause, to show that the extension is on.
    guarded = tmp_path / "guarded.sql"
    guarded.write_text(script.read_text(encoding="utf-8") + GUARD + ";\n", encoding="utf-8")
    (tmp_path / "plain").mkdir()
    (tmp_path / "extended").mkdir()
    # Both at once: most of each run is the start-up.
    plain_run = _start_spark_sql_cli(script, tmp_path / "plain", extension=False)
    extended_run = _start_spark_sql_cli(guarded, tmp_path / "extended", extension=True)
    plain_code, plain_out, plain_err = _finish(plain_run)
    extended_code, extended_out, extended_err = _finish(extended_run)
    assert plain_code == extended_code
    assert extended_out.endswith("mr-guard\t2\n"), extended_out[-3000:]
    assert extended_out[: -len("mr-guard\t2\n")] == plain_out
    assert len(plain_out.splitlines()) >= 40, plain_out
    assert _errors(extended_err) == _errors(plain_err)
    assert len(_errors(plain_err)) >= 10, plain_err[-3000:]
