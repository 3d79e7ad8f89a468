"""transpile(): unit cases without Spark, and the corpus (tests/transpile_corpus/*.sql)
transpiled and run on Spark, each compared with the rows the source engine would return.

A corpus file starts with a comment block:

    -- <one-line description>
    -- dialect: trino
    -- columns: ["sym", "start_ts"]        (compared case-insensitively)
    -- row: ["A", "2024-03-01 09:00:00"]   (one line per expected row, JSON)
    -- ordered: true                       (optional: the order of rows matters)

followed by the query, written for that dialect with its data inline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from result_compare import compare_rows
from spark_match_recognize import DIALECTS, TranspileError, check, transpile
from spark_match_recognize.transpile import MAX_NESTING

CORPUS = Path(__file__).parent / "transpile_corpus"
ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path) -> dict:
    header: dict = {"rows": [], "ordered": False}
    body = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not body and line.startswith("-- "):
            key, sep, value = line[3:].partition(": ")
            if sep and key in ("dialect", "columns", "row", "ordered"):
                if key == "row":
                    header["rows"].append(json.loads(value))
                elif key == "dialect":
                    header["dialect"] = value.strip()
                else:
                    header[key] = json.loads(value)
            else:
                header.setdefault("description", line[3:])
            continue
        body.append(line)
    header["sql"] = "\n".join(body).strip()
    return header


CASES = sorted(CORPUS.glob("*.sql"))


def test_corpus_covers_every_dialect_and_clause():
    loaded = [_load(p) for p in CASES]
    assert len(loaded) >= 40
    dialects = {c["dialect"] for c in loaded}
    assert dialects == {"trino", "snowflake", "oracle", "databricks", "athena"}
    text = "\n".join(c["sql"].upper() for c in loaded)
    for construct in (
        "PARTITION BY", "ORDER BY", "MEASURES", "RUNNING", "FINAL", "CLASSIFIER()",
        "MATCH_NUMBER()", "PREV(", "NEXT(", "FIRST(", "LAST(", "ONE ROW PER MATCH",
        "ALL ROWS PER MATCH", "SHOW EMPTY MATCHES", "OMIT EMPTY MATCHES",
        "WITH UNMATCHED ROWS", "AFTER MATCH SKIP PAST LAST ROW", "SKIP TO NEXT ROW",
        "SKIP TO FIRST", "SKIP TO LAST", "PERMUTE(", "{-", "^", "$", "*?", "SUBSET",
        "DEFINE", "WITHIN", "SKIP TILL NEXT MATCH", "(SELECT",
    ):  # fmt: skip
        assert construct in text, construct
    for case in loaded:
        assert case["rows"], case["description"]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_corpus_query_runs_on_spark(spark, path):
    case = _load(path)
    spark_sql = transpile(case["sql"], read=case["dialect"])
    assert check(spark_sql) == [], spark_sql
    df = spark.sql(spark_sql)
    assert [c.lower() for c in df.columns] == [c.lower() for c in case["columns"]], spark_sql
    diff = compare_rows(
        [tuple(r) for r in df.collect()], [tuple(r) for r in case["rows"]], case["ordered"]
    )
    assert diff is None, f"{diff}\n--- transpiled:\n{spark_sql}"


# ---------------------------------------------------------------------------------------
# Unit cases (no Spark)


def _one_line(sql: str, read: str) -> str:
    return transpile(sql, read=read, pretty=False)


def test_pattern_and_quoted_names_are_carried_over():
    out = _one_line(
        'SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES "Up".x AS "Top" '
        'PATTERN (^ "Up"+? {- B{1,3} -} (C | D)* $ PERMUTE(E, F)) SUBSET "U" = ("Up", B) '
        'DEFINE "Up" AS "Up".x > PREV("Up".x)) m',
        "trino",
    )
    assert "PATTERN (^ `Up`+? {- B{1,3} -} (C | D)* $ PERMUTE(E, F))" in out
    assert "SUBSET `U` = (`Up`, B)" in out
    assert "DEFINE `Up` AS `Up`.x > PREV(`Up`.x)" in out
    assert "MEASURES `Up`.x AS `Top`" in out
    assert out.endswith(") AS m")


def test_navigation_and_semantics_survive_sqlglot():
    out = _one_line(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES FINAL LAST(A.x, 2) AS a, "
        "RUNNING FIRST(A.x) AS b, PREV(LAST(A.x), 1) AS c, NEXT(A.x, 2) AS d, "
        "CLASSIFIER(A) AS e, MATCH_NUMBER() AS f, FINAL array_agg(A.x) AS g "
        "ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS RUNNING count(*) < 3)",
        "trino",
    )
    for fragment in (
        "FINAL LAST(A.x, 2) AS a", "RUNNING FIRST(A.x) AS b", "PREV(LAST(A.x), 1) AS c",
        "NEXT(A.x, 2) AS d", "CLASSIFIER(A) AS e", "MATCH_NUMBER() AS f",
        "FINAL COLLECT_LIST(A.x) AS g", "DEFINE A AS RUNNING COUNT(*) < 3",
    ):  # fmt: skip
        assert fragment in out, (fragment, out)


@pytest.mark.parametrize(
    ("read", "expression", "expected"),
    [
        ("trino", "date_add('minute', 5, A.ts)", "A.ts + INTERVAL '5' MINUTE"),
        ("trino", "date_add('day', n, A.d)", "A.d + (n) * INTERVAL '1' DAY"),
        ("snowflake", "DATEADD(hour, 2, A.ts)", "A.ts + INTERVAL '2' HOUR"),
        ("snowflake", "IFF(A.x > 1, 'a', 'b')", "IF(A.x > 1, 'a', 'b')"),
        ("snowflake", "NVL(A.x, 0)", "COALESCE(A.x, 0)"),
        (
            "snowflake",
            "TO_CHAR(A.ts, 'YYYY-MM-DD HH24:MI')",
            "DATE_FORMAT(A.ts, 'yyyy-MM-dd HH:mm')",
        ),
        ("oracle", "NVL(A.x, 0)", "COALESCE(A.x, 0)"),
        ("oracle", "A.s || 'x'", "A.s || 'x'"),
        ("oracle", "TO_CHAR(A.ts, 'HH24:MI')", "DATE_FORMAT(A.ts, 'HH:mm')"),
        ("athena", "regexp_like(A.s, '^a')", "A.s RLIKE '^a'"),
        ("databricks", "try_divide(A.x, 2)", "TRY_DIVIDE(A.x, 2)"),
    ],
)
def test_dialect_functions_inside_the_clause(read, expression, expected):
    sql = f"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES {expression} AS m PATTERN (A))"
    assert f"MEASURES {expected} AS m" in _one_line(sql, read)


def test_null_ordering_is_made_explicit():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY a, b DESC PATTERN (A))"
    assert "ORDER BY a NULLS LAST, b DESC" in _one_line(sql, "trino")
    assert "ORDER BY a NULLS LAST, b DESC NULLS FIRST" in _one_line(sql, "snowflake")
    assert "ORDER BY a, b DESC" in _one_line(sql, "databricks")


def test_snowflake_match_sequence_number():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES MATCH_SEQUENCE_NUMBER() AS n "
    sql += "ALL ROWS PER MATCH PATTERN (A+))"
    assert "MEASURES RUNNING COUNT(*) AS n" in _one_line(sql, "snowflake")


def test_trino_initial_is_dropped():
    sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts INITIAL PATTERN (A B))"
    assert "INITIAL" not in _one_line(sql, "trino")


def test_oracle_dual_disappears():
    out = _one_line(
        "WITH t AS (SELECT 1 AS ts FROM dual) SELECT * FROM t "
        "MATCH_RECOGNIZE (ORDER BY ts PATTERN (A)) mr",
        "oracle",
    )
    assert "dual" not in out.lower() and "AS mr" in out


def test_several_statements_and_clauses():
    sql = (
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A));\n"
        "SELECT * FROM (SELECT * FROM u MATCH_RECOGNIZE (ORDER BY ts PATTERN (B))) "
        "MATCH_RECOGNIZE (ORDER BY ts PATTERN (C))"
    )
    out = transpile(sql, read="databricks", pretty=False)
    first, second = out.split("; ")
    assert "PATTERN (A)" in first
    assert second.index("PATTERN (B)") < second.index("PATTERN (C)")


def test_pretty_output_indents_the_clause():
    out = transpile(
        "SELECT * FROM (SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts "
        "MEASURES A.x AS a, B.x AS b PATTERN (A B) DEFINE A AS x > 0, B AS x < 0))",
        read="databricks",
    )
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "MATCH_RECOGNIZE (" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    assert lines[start + 1] == " " * indent + "  PARTITION BY k"
    assert " " * indent + "    A.x AS a," in lines
    assert check(out) == []


@pytest.mark.parametrize(
    ("read", "sql", "fragments"),
    [
        (
            "trino",
            "SELECT count(*) OVER w FROM t WINDOW w AS (ORDER BY ts ROWS BETWEEN CURRENT ROW "
            "AND UNBOUNDED FOLLOWING PATTERN (A B+) DEFINE B AS B.x > PREV(B.x))",
            ["R020", "line 1, pos"],
        ),
        (
            "trino",
            "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts SEEK PATTERN (A))",
            ["SEEK", "window form"],
        ),
        (
            "trino",
            "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES try(A.x / 0) AS y PATTERN (A))",
            ["MEASURES item", "TRY", "no Spark equivalent"],
        ),
        (
            "trino",
            "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES sum(DISTINCT A.x) AS y "
            "PATTERN (A))",
            ["DISTINCT", "pattern aggregates only in count"],
        ),
        (
            "trino",
            "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES max_by(A.x, A.y) FILTER "
            "(WHERE A.x > 0) AS y PATTERN (A))",
            ["FILTER", "pattern aggregates only on count"],
        ),
        (
            "oracle",
            "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A{3,1}))",
            ["MATCH_RECOGNIZE clause", "lower bound 3 is greater than upper bound 1"],
        ),
        ("trino", "SELECT 'unterminated FROM t", ["string literal", "not terminated"]),
        ("trino", "SELECT * FROM WHERE", ["sqlglot cannot parse"]),
    ],
)
def test_untranslatable_constructs_raise(read, sql, fragments):
    with pytest.raises(TranspileError) as caught:
        transpile(sql, read=read)
    message = str(caught.value)
    assert message.startswith("cannot transpile ")
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert caught.value.dialect == read


def test_count_distinct_and_filtered_aggregates_carry_over():
    out = transpile(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES count(DISTINCT A.x) AS d, "
        "sum(A.x) FILTER (WHERE A.x > 0) AS s PATTERN (A+) DEFINE A AS A.x IS NOT NULL)",
        read="trino",
    )
    assert "COUNT(DISTINCT A.x) AS d" in out and "SUM(A.x) FILTER(WHERE A.x > 0) AS s" in out, out
    assert check(out) == []


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown source dialect 'mysql'"):
        transpile("SELECT 1", read="mysql")
    with pytest.raises(TypeError):
        transpile(b"SELECT 1", read="trino")  # type: ignore[arg-type]
    assert set(DIALECTS) >= {"trino", "snowflake", "oracle", "databricks", "athena"}


def test_nesting_sqlglot_cannot_read_is_a_transpile_error():
    def clause(condition: str) -> str:
        return f"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS {condition})"

    def deep(depth: int) -> str:
        return "(" * depth + "x" + ")" * depth

    with pytest.raises(TranspileError, match=f"parentheses more than {MAX_NESTING} deep"):
        transpile(clause(deep(2000) + " > 0"), read="trino")
    # Nesting without parentheses: sqlglot's own recursion is caught.
    with pytest.raises(TranspileError, match="nested too deeply for sqlglot"):
        transpile(clause("NOT " * 2000 + "x"), read="trino")
    # The deepest nesting the limit lets through translates (the clause is one level).
    assert deep(MAX_NESTING - 1) in transpile(clause(deep(MAX_NESTING - 1) + " > 0"), "trino")
    # A long chain of operators is no nesting.
    chain = " + ".join(["a"] * 2000)
    assert chain in transpile(clause(chain + " > 0"), read="snowflake", pretty=False)


def test_cli_transpile_reads_a_file_and_stdin(tmp_path):
    source = tmp_path / "q.sql"
    source.write_text(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES IFF(A.x > 0, 1, 0) AS p PATTERN (A))"
    )
    env_cmd = [sys.executable, "-m", "spark_match_recognize", "transpile", "--read", "snowflake"]
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    from_file = subprocess.run(
        [*env_cmd, str(source)], capture_output=True, text=True, env=env, timeout=60
    )
    assert from_file.returncode == 0, from_file.stderr
    assert "MEASURES IF(A.x > 0, 1, 0) AS p" in from_file.stdout
    assert from_file.stdout.rstrip().endswith(";")
    from_stdin = subprocess.run(
        [*env_cmd, "--one-line", "-"],
        input=source.read_text(),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout.count("\n") == 1
    bad = subprocess.run(
        [*env_cmd[:-1], "trino", "-"],
        input="SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts SEEK PATTERN (A))",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("spark-match-recognize: cannot transpile SEEK from trino")
