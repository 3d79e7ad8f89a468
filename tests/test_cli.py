"""The command line (python -m spark_match_recognize), the example scripts, statement
splitting, and the examples run by the real spark-sql command line.

Over 400 lines: one command line; the subcommands' tests share the subprocess helpers.
"""

from __future__ import annotations

import datetime
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

import spark_match_recognize
from project_settings import scala_versions
from spark_match_recognize import EXTENSIONS_CLASS, jar_info, jar_path
from spark_match_recognize.cli import main
from spark_match_recognize.demo import (
    describe,
    example_files,
    examples_dir,
    run_script,
)
from spark_match_recognize.sql_files import Statement, leading_comment, split_statements

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "sql-examples"
V_SHAPE_FILE = EXAMPLES / "v_shape.sql"
PACKAGE_PARENT = Path(spark_match_recognize.__file__).resolve().parent.parent
VERSION = spark_match_recognize.__version__

V_SHAPE_QUERY = """SELECT * FROM VALUES
    ('A', 1, 10), ('A', 2, 9), ('A', 3, 8), ('A', 4, 9), ('A', 5, 10), ('A', 6, 11),
    ('A', 7, 10), ('A', 8, 9), ('A', 9, 12), ('B', 1, 5), ('B', 2, 6), ('B', 3, 7),
    ('B', 4, 6), ('B', 5, 5), ('B', 6, 6)
  AS ticker(symbol, tstamp, price)
MATCH_RECOGNIZE (
  PARTITION BY symbol ORDER BY tstamp
  MEASURES STRT.tstamp AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp,
           LAST(UP.tstamp) AS end_tstamp
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (STRT DOWN+ UP+)
  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
) AS mr ORDER BY symbol, start_tstamp"""
V_SHAPE_TABLE = [
    ["symbol", "start_tstamp", "bottom_tstamp", "end_tstamp"],
    ["A", "1", "3", "6"],
    ["A", "7", "8", "9"],
    ["B", "3", "5", "6"],
]


# ---------------------------------------------------------------------------------------
# Helpers


def run_cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m spark_match_recognize`` in a new process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PACKAGE_PARENT), env.get("PYTHONPATH")) if p
    )
    env.pop("SPARK_MATCH_RECOGNIZE_JAR", None)
    return subprocess.run(
        [sys.executable, "-m", "spark_match_recognize", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def tables(text: str) -> list[list[list[str]]]:
    """The tables printed in DataFrame.show format, each as rows of cells (header first).

    A table is a border, the header, a border, the rows and a closing border.
    """
    found: list[list[list[str]]] = []
    borders = 0
    for line in text.splitlines():
        if line.startswith("+-"):
            if borders in (0, 3):
                found.append([])
                borders = 0
            borders += 1
        elif line.startswith("|") and borders in (1, 2):
            found[-1].append([cell.strip() for cell in line.strip().strip("|").split("|")])
        else:
            borders = 0
    return found


def v_shapes(prices: list[tuple]) -> list[tuple]:
    """A reference for PATTERN (STRT DOWN+ UP+) with AFTER MATCH SKIP PAST LAST ROW.

    ``prices`` holds (symbol, tstamp, price); returns (symbol, start, bottom, end) per match.
    DOWN and UP exclude each other, so the greedy match from a start row is the longest
    falling run followed by the longest rising run; if the fall is not followed by a rise,
    no shorter fall helps, and the search moves on by one row.
    """
    matches = []
    by_symbol: dict[str, list[tuple]] = {}
    for symbol, tstamp, price in sorted(prices):
        by_symbol.setdefault(symbol, []).append((tstamp, price))
    for symbol, rows in sorted(by_symbol.items()):
        i = 0
        while i < len(rows):
            j = i + 1
            while j < len(rows) and rows[j][1] < rows[j - 1][1]:
                j += 1
            k = j
            while k < len(rows) and rows[k][1] > rows[k - 1][1]:
                k += 1
            if j > i + 1 and k > j:
                matches.append((symbol, rows[i][0], rows[j - 1][0], rows[k - 1][0]))
                i = k
            else:
                i += 1
    return matches


def run_example(spark, path: Path):
    """Run the statements of an example in the shared session; the last one's DataFrame."""
    statements = split_statements(path.read_text(encoding="utf-8"))
    for statement in statements[:-1]:
        spark.sql(statement.text)
    return spark.sql(statements[-1].text)


# ---------------------------------------------------------------------------------------
# Statement splitting


def test_split_ignores_semicolons_in_literals_identifiers_and_comments():
    script = (
        "-- header; with a semicolon\n"
        "SELECT 'a;b' AS x, \"c;d\" AS `e;f`, 'it\\'s;' AS g; /* one; /* nested; */ still; */\n"
        "SELECT 2 -- trailing; comment\n"
        ";\n"
        "  ;  ; -- only comments here;\n"
        "SELECT 3"
    )
    assert split_statements(script) == [
        Statement("SELECT 'a;b' AS x, \"c;d\" AS `e;f`, 'it\\'s;' AS g", 2),
        Statement("SELECT 2 -- trailing; comment", 3),
        Statement("SELECT 3", 6),
    ]


def test_split_keeps_unterminated_text_for_spark_to_report():
    assert [s.text for s in split_statements("SELECT 'open; SELECT 2")] == [
        "SELECT 'open; SELECT 2"
    ]
    assert split_statements("   \n-- nothing\n/* at all */ ; ") == []


def test_split_reads_raw_strings_as_spark_does():
    """A raw string ends at its first quote: its backslash escapes nothing."""
    assert split_statements("SELECT r'C:\\'; SELECT 2") == [
        Statement("SELECT r'C:\\'", 1),
        Statement("SELECT 2", 1),
    ]


def test_leading_comment_is_the_description():
    assert leading_comment("-- First line.\n--\n-- More.\nSELECT 1;") == "First line.\n\nMore."
    assert leading_comment("/* Block.\n * Second. */ SELECT 1") == "Block.\nSecond."
    assert leading_comment("SELECT 1 -- not leading") == ""


# ---------------------------------------------------------------------------------------
# The example files


def test_examples_are_self_contained_scripts():
    files = example_files(EXAMPLES)
    names = {f.name for f in files}
    assert {"v_shape.sql", "click_funnel.sql", "sensor_excursion.sql", "login_burst.sql"} <= names
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert text.isascii(), path.name
        assert text.startswith("-- "), path.name
        assert describe(path) and len(describe(path)) <= 100, path.name
        statements = split_statements(text)
        assert statements[0].text.startswith("CREATE OR REPLACE TEMPORARY VIEW"), path.name
        assert "MATCH_RECOGNIZE" in statements[-1].text, path.name
        assert text.rstrip().endswith(";"), path.name
        assert not re.search(r"\b(rand|randn|random|uuid|now|current_\w+)\s*\(", text, re.I)


def test_default_examples_are_the_checkouts_or_the_packages():
    found = examples_dir()
    assert found in (EXAMPLES, Path(spark_match_recognize.__file__).resolve().parent / "examples")
    assert [p.name for p in example_files()] == [p.name for p in example_files(EXAMPLES)]


def test_v_shape_example_has_the_required_query():
    query = split_statements(V_SHAPE_FILE.read_text(encoding="utf-8"))[-1].text
    assert " ".join(query.split()) == " ".join(
        """SELECT * FROM ticker MATCH_RECOGNIZE (
          PARTITION BY symbol ORDER BY tstamp
          MEASURES STRT.tstamp AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp,
                   LAST(UP.tstamp) AS end_tstamp
          ONE ROW PER MATCH
          AFTER MATCH SKIP PAST LAST ROW
          PATTERN (STRT DOWN+ UP+)
          DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
        ) AS mr ORDER BY symbol, start_tstamp""".split()
    )


@pytest.mark.smoke
def test_v_shape_example_agrees_with_a_python_reference(spark):
    result = run_example(spark, V_SHAPE_FILE).collect()
    prices = [tuple(r) for r in spark.sql("SELECT symbol, tstamp, price FROM ticker").collect()]
    assert len({p[0] for p in prices}) >= 3 and len(prices) >= 100
    expected = v_shapes(prices)
    assert len(expected) >= 10
    assert [tuple(r) for r in result] == expected


@pytest.mark.smoke
def test_click_funnel_example(spark):
    rows = run_example(spark, EXAMPLES / "click_funnel.sql").collect()
    events = {
        (e.user_id, e.event_time): (e.event_type, e.product)
        for e in spark.sql("SELECT * FROM clicks").collect()
    }
    assert len(rows) >= 3
    for row in rows:
        assert row.first_view < row.added_to_cart < row.purchased
        assert row.events >= 3
        assert events[(row.user_id, row.first_view)][0] == "view"
        assert events[(row.user_id, row.added_to_cart)] == ("cart", row.product)
        assert events[(row.user_id, row.purchased)] == ("purchase", row.product)


@pytest.mark.smoke
def test_sensor_excursion_example(spark):
    rows = run_example(spark, EXAMPLES / "sensor_excursion.sql").collect()
    assert len(rows) >= 4
    assert {row.ended_on for row in rows} == {"HOT", "COOL"}
    for row in rows:
        assert row.first_temp_c > 75 and row.last_temp_c > 75
        assert (row.recovered is not None) == (row.ended_on == "COOL")
    numbers: dict[str, list[int]] = {}
    for row in rows:
        numbers.setdefault(row.sensor_id, []).append(row.excursion)
    assert all(n == list(range(1, len(n) + 1)) for n in numbers.values())


@pytest.mark.smoke
def test_login_burst_example(spark):
    rows = run_example(spark, EXAMPLES / "login_burst.sql").collect()
    assert len(rows) >= 2
    for row in rows:
        assert row.failures >= 3
        assert row.first_failure < row.last_failure < row.success
        assert (row.success - row.first_failure).total_seconds() <= 600


def fraud_chains(payments: list) -> list[tuple]:
    """PATTERN (PROBE !REFUND BIG1 BIG2) under SKIP TILL ANY MATCH, enumerated by hand."""
    window = datetime.timedelta(minutes=45)
    out = []
    by_card: dict[str, list] = {}
    for p in payments:
        by_card.setdefault(p.card, []).append(p)
    for card, rows in by_card.items():
        rows.sort(key=lambda r: r.paid_at)
        for p in rows:
            if not (p.kind == "purchase" and p.amount < 120):
                continue
            for b1 in rows:
                if not (p.paid_at < b1.paid_at <= p.paid_at + window):
                    continue
                if not (b1.kind == "purchase" and b1.country == "abroad" and b1.amount > 500):
                    continue
                if any(r.kind == "refund" and p.paid_at < r.paid_at < b1.paid_at for r in rows):
                    continue
                for b2 in rows:
                    if (
                        b1.paid_at < b2.paid_at <= p.paid_at + window
                        and b2.kind == "purchase"
                        and b2.country == "abroad"
                        and b2.amount > b1.amount
                    ):
                        out.append((card, p.paid_at, b1.paid_at, b2.paid_at))
    return sorted(out)


@pytest.mark.smoke
def test_fraud_chain_example_finds_every_combination(spark):
    rows = run_example(spark, EXAMPLES / "fraud_chain_any_match.sql").collect()
    expected = fraud_chains(spark.table("payments").collect())
    got = [(r.card, r.probe_at, r.first_big_at, r.second_big_at) for r in rows]
    assert got == expected  # the query's ORDER BY gives the same order
    assert len(got) >= 5
    # Several chains share a probe: every combination is reported, not the first only.
    assert len({(g[0], g[1]) for g in got}) < len(got)


@pytest.mark.smoke
def test_explain_shows_the_join_tree_of_an_any_match_pattern(spark):
    statements = split_statements(
        (EXAMPLES / "fraud_chain_any_match.sql").read_text(encoding="utf-8")
    )
    spark.sql(statements[0].text)
    plan = "\n".join(r[0] for r in spark.sql("EXPLAIN " + statements[-1].text).collect())
    # Left-deep in pattern order (joinOrder=trivial), in one pass with its negation.
    assert "CepTreeMatch ((PROBE ⋈ BIG1) ⋈ BIG2) !REFUND" in plan, plan
    # As join operators: the negation attached where both of its neighbours are bound.
    spark.conf.set("spark.sql.matchRecognize.cepExecution", "joins")
    try:
        plan = "\n".join(r[0] for r in spark.sql("EXPLAIN " + statements[-1].text).collect())
    finally:
        spark.conf.unset("spark.sql.matchRecognize.cepExecution")
    assert "SequenceJoin ((PROBE ⋈ BIG1) !REFUND ⋈ BIG2)" in plan, plan
    assert "Negation (PROBE ⋈ BIG1) !REFUND" in plan, plan


# ---------------------------------------------------------------------------------------
# The command line, in this process (on the shared session)


def test_sql_prints_the_rows_of_a_query(spark, capsys):
    assert main(["sql", V_SHAPE_QUERY]) == 0
    out, err = capsys.readouterr()
    assert tables(out) == [V_SHAPE_TABLE]
    assert err == ""


def test_sql_file_with_several_statements(spark, tmp_path, capsys):
    script = tmp_path / "two.sql"
    script.write_text(
        "-- A view; then a query.\n"
        "CREATE OR REPLACE TEMPORARY VIEW cli_prices AS\n"
        "SELECT * FROM VALUES ('X', 1, 3), ('X', 2, 1), ('X', 3, 2), ('X', 4, 5)\n"
        "  AS t(symbol, tstamp, price);  /* a comment; with semicolons; */\n"
        "SELECT 'a;b' AS label, * FROM cli_prices MATCH_RECOGNIZE (\n"
        "  PARTITION BY symbol ORDER BY tstamp\n"
        "  MEASURES FIRST(DOWN.tstamp) AS fall, LAST(UP.tstamp) AS rise, count(*) AS n\n"
        "  ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW\n"
        "  PATTERN (STRT DOWN+ UP+)\n"
        "  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)\n"
        ");\n"
        "SELECT count(*) AS rows_in_view FROM cli_prices -- no semicolon at the end\n"
    )
    assert main(["sql", "-f", str(script)]) == 0
    out, err = capsys.readouterr()
    assert tables(out) == [
        [["label", "symbol", "fall", "rise", "n"], ["a;b", "X", "2", "4", "4"]],
        [["rows_in_view"], ["4"]],
    ]
    assert err == ""


def test_sql_conf_and_option_flags_reach_the_session(spark, capsys):
    key = "spark.sql.matchRecognize.maxBufferedRows"
    try:
        code = main(
            [
                "sql",
                "--conf",
                "spark.smr.test.flag=on",
                "--max-buffered-rows",
                "1234",
                "--rows",
                "5",
                f"SET spark.smr.test.flag; SET {key}",
            ]
        )
        assert code == 0
        out, _ = capsys.readouterr()
        assert tables(out) == [
            [["key", "value"], ["spark.smr.test.flag", "on"]],
            [["key", "value"], [key, "1234"]],
        ]
    finally:
        spark.conf.unset(key)
        spark.conf.unset("spark.smr.test.flag")


def test_sql_error_is_one_readable_paragraph(spark, capsys):
    assert main(["sql", "SELECT 1 AS ok;\nSELECT * FROM no_such_table_anywhere"]) == 1
    out, err = capsys.readouterr()
    assert tables(out) == [[["ok"], ["1"]]]
    assert err.startswith("spark-match-recognize: error in statement 2: ")
    assert "[TABLE_OR_VIEW_NOT_FOUND]" in err and "`no_such_table_anywhere`" in err
    assert "line 2 pos 14" in err  # positions count from the start of the text
    assert err.count("\n") == 1 and "Traceback" not in err and "UnresolvedRelation" not in err


def test_match_recognize_syntax_error_points_into_the_file(spark, tmp_path, capsys):
    script = tmp_path / "broken.sql"
    script.write_text(
        "SELECT 1 AS ok;\n\n"
        "SELECT * FROM VALUES (1, 1) AS t(k, v) MATCH_RECOGNIZE (\n"
        "  ORDER BY v MEASURES count(*) AS n ONE ROW PER MATCH\n"
        "  PATTERN (A+ B DEFINE A AS v > 0);\n"
    )
    assert main(["sql", "-f", str(script)]) == 1
    _, err = capsys.readouterr()
    assert err.startswith(f"spark-match-recognize: error in {script}, statement 2 (line 3): ")
    assert "[PARSE_SYNTAX_ERROR]" in err and "MATCH_RECOGNIZE" in err
    assert "(line 3, pos " in err
    assert err.count("\n") == 1 and "== SQL ==" not in err


def test_failed_job_reports_the_task_error(spark, capsys):
    key = "spark.sql.matchRecognize.maxLivePartialMatches"
    query = (
        "SELECT * FROM VALUES (1, 1), (1, 2), (1, 3) AS t(k, v) MATCH_RECOGNIZE ("
        " PARTITION BY k ORDER BY v MEASURES count(*) AS n ONE ROW PER MATCH"
        " PATTERN (A+ B) DEFINE A AS v > 0)"
    )
    try:
        assert main(["sql", "--max-live-partial-matches", "1", query]) == 1
    finally:
        spark.conf.unset(key)
    _, err = capsys.readouterr()
    assert err.startswith("spark-match-recognize: error: [MATCH_RECOGNIZE.LIMIT_EXCEEDED] ")
    assert key in err and "Job aborted" not in err and "\tat " not in err


def test_bad_arguments_exit_with_status_2(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["sql", "--max-live-threads", "0", "SELECT 1"])
    assert caught.value.code == 2
    assert "must be positive" in capsys.readouterr().err
    with pytest.raises(SystemExit) as caught:
        main(["sql"])
    assert caught.value.code == 2


def test_missing_file_is_reported(tmp_path, capsys):
    assert main(["sql", "-f", str(tmp_path / "nope.sql")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_run_script_reports_which_statement_failed(spark):
    from spark_match_recognize.demo import ScriptError

    with pytest.raises(ScriptError) as caught:
        run_script(spark, "SELECT 1;\n\nSELEC 2", source="x.sql", out=io.StringIO())
    error = caught.value
    assert (error.number, error.total, error.statement.line) == (2, 2, 3)
    assert str(error).startswith("error in x.sql, statement 2 (line 3): [PARSE_SYNTAX_ERROR]")


# ---------------------------------------------------------------------------------------
# The command line, in new processes


def test_help_documents_every_command(tmp_path):
    result = run_cli("--help", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    for command in ("demo", "sql", "jar"):
        assert f"\n  {command} " in result.stdout
    expected = {
        "demo": ["--examples DIR", "--rows N", "--conf KEY=VALUE", "--max-live-threads"],
        "sql": ["-f FILE", "query", "--conf KEY=VALUE", "--max-buffered-rows", "--master"],
        "jar": ["--info"],
    }
    for command, fragments in expected.items():
        sub = run_cli(command, "--help", cwd=tmp_path, timeout=60)
        assert sub.returncode == 0, sub.stderr
        for fragment in fragments:
            assert fragment in sub.stdout, (command, fragment)


def test_jar_command_prints_the_jar(tmp_path):
    result = run_cli("jar", "--info", cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == jar_path() and Path(lines[0]).is_file()
    assert sorted(lines[1:]) == sorted(f"{k}={v}" for k, v in jar_info().items())


@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_demo_in_a_new_process(spark, tmp_path):
    """The real command: every example with its description and rows, the V shapes
    exactly, and a broken script reported in one line while the others still run."""
    expected = [[str(cell) for cell in row] for row in run_example(spark, V_SHAPE_FILE).collect()]
    examples = tmp_path / "examples"
    shutil.copytree(EXAMPLES, examples)
    (examples / "zz_broken.sql").write_text(
        "-- A script with a typo.\nSELECT 'first;' AS s;\n-- then\nSELEC 2;\nSELECT 3;\n"
    )
    result = run_cli("demo", "--examples", str(examples), "--rows", "100", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    for path in example_files(EXAMPLES):
        assert f"=== {path.name} ===\n{describe(path)}\n+-" in out, path.name
    table = tables(out.split("=== v_shape.sql ===", 1)[1])[0]
    assert table[0] == ["symbol", "start_tstamp", "bottom_tstamp", "end_tstamp"]
    assert table[1:] == expected and len(expected) >= 10
    broken = out.split("=== zz_broken.sql ===", 1)[1].split("=== streaming/", 1)[0]
    assert tables(broken) == [[["s"], ["first;"]]]

    errors = [line for line in result.stderr.splitlines() if "spark-match-recognize" in line]
    assert len(errors) == 2, result.stderr
    assert errors[0].startswith(
        "spark-match-recognize: error in zz_broken.sql, statement 2 (line 4): [PARSE_SYNTAX"
    )
    streamed = out.split("=== streaming/v_shape_alerts.sql ===", 1)[1]
    assert "micro-batch 1: " in streamed
    assert re.search(
        r"0 late; (\d+) matches streamed, the same as the batch query's \1\.", streamed
    )
    total = len(example_files(EXAMPLES)) + len(list((EXAMPLES / "streaming").glob("*.sql"))) + 1
    assert errors[1] == f"spark-match-recognize: 1 of {total} examples failed"
    for noise in ("Traceback", "\tat ", "JVM stacktrace", '"logger"', "Setting default log"):
        assert noise not in result.stderr, result.stderr


# ---------------------------------------------------------------------------------------
# The real spark-sql command line


def run_spark_sql_cli(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    """The real bin/spark-sql of the installed pyspark, running a script with the jar."""
    spark_home = Path(pyspark.__file__).resolve().parent
    env = dict(os.environ, SPARK_HOME=str(spark_home))
    command = [
        str(spark_home / "bin" / "spark-sql"),
        "--master", "local[2]",
        "--jars", jar_path(),
        "--conf", f"spark.sql.extensions={EXTENSIONS_CLASS}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=4",
        # No Hive metastore to create: saves about 20 s and changes nothing here.
        "--conf", "spark.sql.catalogImplementation=in-memory",
        "-f", str(path),
    ]  # fmt: skip
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def expected_cli_lines(spark, path: Path) -> list[str]:
    """The example's rows as spark-sql prints them: CAST(... AS STRING) or NULL,
    tab-separated."""
    result = run_example(spark, path)
    as_strings = result.selectExpr(
        *(f"coalesce(CAST(`{c}` AS STRING), 'NULL')" for c in result.columns)
    )
    return sorted("\t".join(row) for row in as_strings.collect())


@pytest.mark.cli
@pytest.mark.smoke
@pytest.mark.shared_smoke
def test_spark_sql_cli_runs_every_example(spark, tmp_path):
    """All examples in one spark-sql run, each announced by a marker row, and each
    printing the rows spark.sql() gives."""
    paths = example_files(EXAMPLES)
    script = tmp_path / "all_examples.sql"
    script.write_text(
        "".join(
            f"SELECT '=== {path.name} ===';\n{path.read_text(encoding='utf-8')}\n" for path in paths
        ),
        encoding="utf-8",
    )
    result = run_spark_sql_cli(script, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    printed: dict[str, list[str]] = {}
    current = None
    for line in result.stdout.splitlines():
        marker = re.fullmatch(r"=== (.+) ===", line)
        if marker:
            current = printed.setdefault(marker.group(1), [])
        elif line.strip():
            assert current is not None, f"a row before the first example: {line!r}"
            current.append(line)
    assert list(printed) == [path.name for path in paths]
    for path in paths:
        expected = expected_cli_lines(spark, path)
        assert sorted(printed[path.name]) == expected, path.name
        assert len(expected) >= 3, path.name


@pytest.mark.cli
def test_spark_sql_cli_chooses_the_join_order_with_set(spark, tmp_path):
    path = EXAMPLES / "fraud_chain_any_match.sql"
    statements = split_statements(path.read_text(encoding="utf-8"))
    query = statements[-1].text
    script = tmp_path / "ordered.sql"
    script.write_text(
        "SET spark.sql.matchRecognize.joinOrder = efreq;\n"
        f"{statements[0].text};\nEXPLAIN {query};\n{query};\n",
        encoding="utf-8",
    )
    result = run_spark_sql_cli(script, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    # efreq puts the rarest variable first: PROBE (small purchases) before BIG1 and BIG2.
    assert "joinOrder=efreq ((PROBE ⋈ BIG1) ⋈ BIG2)" in result.stdout, result.stdout[-3000:]
    expected = run_example(spark, path).count()
    assert f"Fetched {expected} row(s)" in result.stderr


@pytest.mark.smoke
def test_an_unsupported_pyspark_gets_the_supported_lines_not_a_stack_trace(tmp_path):
    """A pyspark of a line without a jar (a stand-in package reporting 3.4.1) is refused by
    every command that needs the jar, with the supported lines and no traceback."""
    fake = tmp_path / "fake" / "pyspark"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('__version__ = "3.4.1"\n')
    env = {k: v for k, v in os.environ.items() if k != "SPARK_MATCH_RECOGNIZE_JAR"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "fake"), str(PACKAGE_PARENT)])
    lines = ", ".join(spark_match_recognize.SPARK_LINES)
    for args in (["jar"], ["sql", "SELECT 1"], ["demo"]):
        result = subprocess.run(
            [sys.executable, "-m", "spark_match_recognize", *args],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert result.stderr.startswith(
            "spark-match-recognize: pyspark 3.4.1 is installed, but spark-match-recognize"
        ), (args, result.stderr)
        assert f"supports the Spark lines {lines}" in result.stderr
        assert "Traceback" not in result.stderr


def test_jar_command_prints_the_jar_of_another_line(tmp_path):
    for line in spark_match_recognize.SPARK_LINES:
        result = run_cli("jar", "--spark", line, "--info", cwd=tmp_path, timeout=60)
        assert result.returncode == 0, result.stderr
        path, *info = result.stdout.splitlines()
        assert path == jar_path(line)
        assert f"spark.line={line}" in info
    bad = run_cli("jar", "--spark", "3.4", cwd=tmp_path, timeout=60)
    assert bad.returncode == 2 and "invalid choice: '3.4'" in bad.stderr
    # Spark 3.5 has a jar per Scala version; pyspark's (2.12) is the default.
    for scala in ("2.12", "2.13"):
        result = run_cli("jar", "--spark", "3.5", "--scala", scala, "--info", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        path, *info = result.stdout.splitlines()
        assert path == jar_path("3.5", scala) and path.endswith(f"_{scala}-{VERSION}.jar")
        assert any(i.startswith(f"scala.version={scala}.") for i in info), info
    assert run_cli("jar", "--spark", "3.5", cwd=tmp_path).stdout.strip() == jar_path("3.5", "2.12")
    wrong = run_cli("jar", "--spark", "4.3", "--scala", "2.12", cwd=tmp_path)
    assert wrong.returncode == 1 and "Spark 4.3 has a spark-match-recognize jar for Scala 2.13" in (
        wrong.stderr
    )


@pytest.mark.cli
@pytest.mark.smoke
def test_spark_sql_cli_loads_the_jar_with_packages(tmp_path):
    """spark-sql --packages with this line's coordinates, resolved from the Maven repository
    that `./dev/sbt publish` writes into target/maven (as from any repository)."""
    repository = ROOT / "target" / "maven"
    line = ".".join(pyspark.__version__.split(".")[:2])
    module = f"spark-match-recognize-spark{line}_{scala_versions(line)[0]}"
    assert (repository / "io" / "github" / "sparkmatchrecognize" / module).is_dir(), (
        "no Maven repository in target/maven: run ./dev/sbt publish"
    )
    script = tmp_path / "query.sql"
    script.write_text(
        "SELECT * FROM VALUES (1, 10), (2, 8), (3, 9), (4, 7), (5, 11) AS t(ts, price)\n"
        "MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(D.ts) AS fell, U.ts AS rose\n"
        "  PATTERN (D+ U) DEFINE D AS price < PREV(price), U AS price > PREV(price));\n"
    )
    spark_home = Path(pyspark.__file__).resolve().parent
    env = {k: v for k, v in os.environ.items() if k != "SPARK_MATCH_RECOGNIZE_JAR"}
    env["SPARK_HOME"] = str(spark_home)
    coordinates = f"io.github.sparkmatchrecognize:{module}:{spark_match_recognize.__version__}"
    command = [
        str(spark_home / "bin" / "spark-sql"),
        "--master", "local[1]",
        "--repositories", repository.as_uri(),
        "--packages", coordinates,
        "--conf", f"spark.jars.ivy={tmp_path / 'ivy'}",
        "--conf", f"spark.sql.extensions={EXTENSIONS_CLASS}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.catalogImplementation=in-memory",
        "-f", str(script),
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    fetched = [p.name for p in (tmp_path / "ivy" / "jars").glob("*.jar")]
    version = spark_match_recognize.__version__
    assert fetched == [f"io.github.sparkmatchrecognize_{module}-{version}.jar"], fetched
    # Spark 3.5's Ivy announces its settings file on standard output (":: loading settings").
    rows = [
        line for line in result.stdout.splitlines() if line.strip() and not line.startswith("::")
    ]
    assert rows == ["2\t3", "4\t5"]


GOLDENS = Path(__file__).resolve().parent / "goldens" / "examples"


def example_table(spark, path: Path) -> list[str]:
    """An example's result as text: the column names, then its rows (each value CAST to
    STRING or NULL, tab-separated) in sorted order."""
    result = run_example(spark, path)
    return ["\t".join(result.columns), *expected_cli_lines(spark, path)]


@pytest.mark.smoke
@pytest.mark.parametrize("name", [p.name for p in example_files(EXAMPLES)])
def test_every_example_returns_its_recorded_rows(spark, name):
    """The rows every Spark line must return for each example, recorded in
    tests/goldens/examples/ (SMR_UPDATE_GOLDENS=1 rewrites them from the default line)."""
    table = example_table(spark, EXAMPLES / name)
    golden = GOLDENS / (Path(name).stem + ".tsv")
    if os.environ.get("SMR_UPDATE_GOLDENS") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text("\n".join(table) + "\n", encoding="utf-8")
    assert golden.is_file(), f"{golden} is missing: run with SMR_UPDATE_GOLDENS=1"
    assert table == golden.read_text(encoding="utf-8").splitlines()
