"""check(): unit cases, and parity with Spark on tests/bad_queries.json.

Each entry of bad_queries.json is either a bad query with the condition and a fragment of
the message that both check() and Spark must report, or (``"check": "none"``) a query only
Spark can judge (unknown columns, types, ...), for which check() must report nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from spark_match_recognize import Problem, check
from spark_match_recognize.check import format_problems

HERE = Path(__file__).parent
ROOT = HERE.parent
CASES = json.loads((HERE / "bad_queries.json").read_text(encoding="utf-8"))
BAD = [c for c in CASES if c.get("check") != "none"]
JVM_ONLY = [c for c in CASES if c.get("check") == "none"]


def test_the_shared_list_is_big_enough():
    assert len(BAD) >= 30 and len(JVM_ONLY) >= 5
    assert len({c["id"] for c in CASES}) == len(CASES)
    kinds = {c["condition"] for c in BAD}
    assert "PARSE_SYNTAX_ERROR" in kinds and len(kinds) >= 12


def _spark_error(spark, sql: str) -> Exception:
    with pytest.raises(Exception) as caught:
        spark.sql(sql)
    return caught.value


_POS = re.compile(r"\(line (\d+), pos (\d+)\)")
_POSITION = re.compile(r"== SQL \(line (\d+), position (\d+)\) ==")


def _spark_position(message: str) -> tuple[int, int] | None:
    m = _POS.search(message)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = _POSITION.search(message)
    if m:
        return int(m.group(1)), int(m.group(2)) - 1  # 1-based in this form
    return None


@pytest.mark.parametrize("case", BAD, ids=[c["id"] for c in BAD])
def test_check_agrees_with_spark(spark, case):
    problems = check(case["sql"])
    assert problems, "check() found nothing"
    first = problems[0]
    assert first.condition == case["condition"], format_problems(problems)
    assert case["message"] in first.message
    assert first.kind == ("parse" if first.condition == "PARSE_SYNTAX_ERROR" else "analysis")

    error = _spark_error(spark, case["sql"])
    assert error.getCondition() == case["condition"], str(error)
    assert first.message in str(error), (first.message, str(error))
    if first.kind == "parse":
        assert _spark_position(str(error)) == (first.line, first.column), str(error)


@pytest.mark.parametrize("case", JVM_ONLY, ids=[c["id"] for c in JVM_ONLY])
def test_check_leaves_the_rest_to_spark(spark, case):
    assert check(case["sql"]) == []
    error = _spark_error(spark, case["sql"])
    assert error.getCondition() == case["spark_condition"], str(error)


# ---------------------------------------------------------------------------------------
# Without Spark


VALID = [
    # every clause, quoted names, subqueries, lambdas, struct fields through the input alias
    """SELECT * FROM ticks AS t MATCH_RECOGNIZE (
      PARTITION BY sym, date(ts) ORDER BY ts DESC NULLS LAST, id
      MEASURES FINAL LAST(`Up`.price, 1) AS top, RUNNING count(*) AS n, CLASSIFIER(`Up`) AS c,
               MATCH_NUMBER() AS m, PREV(FIRST(D.price), 2) AS p, count(U.*) AS nu,
               (SELECT max(x) FROM other o WHERE o.k = D.price) AS sub, t.info.city AS city,
               transform(array(1, 2), x -> x.a) AS lam
      ALL ROWS PER MATCH WITH UNMATCHED ROWS
      AFTER MATCH SKIP TO FIRST U
      PATTERN (^ D+? (`Up` | D){1,} PERMUTE(D, `Up`) () $)
      SUBSET U = (D, `Up`)
      DEFINE D AS D.price < PREV(D.price), `Up` AS `Up`.price > PREV(`Up`.price)
    ) AS mr""",
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts SKIP TILL NEXT MATCH PATTERN (A B) "
    "WITHIN INTERVAL '10' MINUTE DEFINE B AS B.x > A.x)",
    "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) WITHIN 100 ROWS)",
    "SELECT 'MATCH_RECOGNIZE (' AS text, 1 -- MATCH_RECOGNIZE (\n",
    "SELECT * FROM t",
    "",
]


@pytest.mark.parametrize("sql", VALID)
def test_valid_queries_have_no_problems(sql):
    assert check(sql) == []


def test_positions_count_in_the_whole_script():
    script = (
        "SELECT 1;\n"
        "-- a comment; with a semicolon\n"
        "SELECT * FROM t MATCH_RECOGNIZE (\n"
        "  ORDER BY ts\n"
        "  PATTERN (A B{3,1})\n"
        ");  SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE Z AS x > 0)"
    )
    problems = check(script)
    assert [(p.kind, p.line, p.column) for p in problems] == [
        ("parse", 5, 14),
        ("analysis", 6, 68),
    ]
    first = problems[0]
    assert first.excerpt == "      PATTERN (A B{3,1})\n                  ^"
    assert str(first) == (
        "[PARSE_SYNTAX_ERROR] Syntax error at or near '{3,1}': invalid quantifier: lower "
        "bound 3 is greater than upper bound 1. (line 5, pos 14)"
    )
    text = format_problems(problems, "x.sql")
    assert text.startswith("x.sql:5:14: parse error: [PARSE_SYNTAX_ERROR] Syntax error")
    assert "x.sql:6:68: analysis error: [MATCH_RECOGNIZE.UNKNOWN_PATTERN_VARIABLE]" in text


def test_every_analysis_problem_of_a_clause_is_listed():
    problems = check(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES Y.x AS a, X.x AS A "
        "PATTERN (A B) SUBSET A = (B) DEFINE C AS x > 0)"
    )
    assert [p.condition.split(".")[1] for p in problems] == [
        "UNKNOWN_PATTERN_VARIABLE",
        "INVALID_SUBSET",
        "UNKNOWN_PATTERN_VARIABLE",
        "UNKNOWN_PATTERN_VARIABLE",
        "DUPLICATE_MEASURE",
    ]
    assert isinstance(problems[0], Problem)


def test_case_rules_of_variable_names():
    ok = (
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES a.x AS m PATTERN (A) "
        "DEFINE a AS x > 0)"
    )
    assert check(ok) == []
    quoted = (
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES `a`.x AS m PATTERN (A) "
        "DEFINE `a` AS x > 0)"
    )
    assert [p.message for p in check(quoted)] == [
        "DEFINE names pattern variable `a`, which does not occur in PATTERN.",
        "MEASURES refers to pattern variable `a`, which is neither in PATTERN nor a SUBSET.",
    ]


def test_only_text_is_accepted():
    with pytest.raises(TypeError):
        check(None)  # type: ignore[arg-type]


def test_cli_check(tmp_path):
    good = tmp_path / "good.sql"
    good.write_text("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B+));\n")
    bad = tmp_path / "bad.sql"
    bad.write_text(
        "SELECT 1;\nSELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE B AS x)"
    )
    command = [sys.executable, "-m", "spark_match_recognize", "check"]
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}

    result = subprocess.run([*command, str(good)], capture_output=True, text=True, env=env)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")

    result = subprocess.run([*command, str(bad)], capture_output=True, text=True, env=env)
    assert result.returncode == 1
    assert result.stdout.startswith(
        f"{bad}:2:64: analysis error: [MATCH_RECOGNIZE.UNKNOWN_PATTERN_VARIABLE] DEFINE names"
    )
    assert result.stdout.splitlines()[-1].strip() == "^"
    assert result.stderr == "spark-match-recognize: 1 problem found\n"

    result = subprocess.run(
        [*command, "-"], input=bad.read_text(), capture_output=True, text=True, env=env
    )
    assert result.returncode == 1 and result.stdout.startswith("<stdin>:2:64: ")

    result = subprocess.run(
        [*command, "-e", "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A{2,1}))"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 1 and result.stdout.startswith("1:43: parse error: ")


def test_help_documents_the_commands_without_spark():
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "spark_match_recognize"]
    top = subprocess.run([*command, "--help"], capture_output=True, text=True, env=env)
    assert top.returncode == 0
    for name in ("demo", "sql", "jar", "check", "transpile", "docs"):
        assert f"\n  {name} " in top.stdout, name
    expected = {
        "check": ["FILE", "-e SQL", "standard input"],
        "transpile": ["--read", "athena,databricks,oracle,snowflake,trino", "--one-line"],
        "docs": ["--write", "--check", "--file FILE"],
    }
    for name, fragments in expected.items():
        sub = subprocess.run([*command, name, "--help"], capture_output=True, text=True, env=env)
        assert sub.returncode == 0, sub.stderr
        for fragment in fragments:
            assert fragment in sub.stdout, (name, fragment)
