"""The documentation does not lie.

* Every ```sql block of docs/*.md that is followed by a Markdown table is run on the
  session and its rows compared, in order, with the table (docs/syntax.md: every block).
* docs/configuration.md holds the conf table the jar generates (ConfDoc) and the table of
  configure() options generated from OPTIONS, and the package's settings.json (which OPTIONS
  is read from) is the JSON the jar generates; regenerate them with
  ``python -m spark_match_recognize docs --write``.
"""

from __future__ import annotations

import datetime
import decimal
import re
from pathlib import Path

import pytest

from spark_match_recognize import OPTIONS, check
from spark_match_recognize.cli import (
    CONF_TABLE_BEGIN,
    OPTIONS_TABLE_BEGIN,
    conf_table,
    documented_table,
    options_table,
    settings_file,
    with_table,
)
from spark_match_recognize.options import SETTINGS_FILE

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGENERATE = "run `python -m spark_match_recognize docs --write` to regenerate it"


def sql_examples(text: str) -> list[tuple[int, str, list[list[str]] | None]]:
    """(line, sql, table rows incl. header, or None) for each ```sql block of ``text``."""
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sql":
            start = i + 1
            j = start
            while lines[j].strip() != "```":
                j += 1
            sql = "\n".join(lines[start:j])
            k = j + 1
            while k < len(lines) and not lines[k].strip():
                k += 1
            table = None
            if k < len(lines) and lines[k].startswith("|"):
                table = []
                while k < len(lines) and lines[k].startswith("|"):
                    table.append(_cells(lines[k]))
                    k += 1
                del table[1]  # the | --- | line
            out.append((start, sql, table))
            i = k
        else:
            i += 1
    return out


def _cells(line: str) -> list[str]:
    parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def render(value: object) -> str:
    """A value the way the docs show it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, datetime.date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(render(v) for v in value) + "]"
    if isinstance(value, decimal.Decimal):
        return str(value)
    return str(value)


def markdown_table(columns: list[str], rows: list[tuple]) -> str:
    """The Markdown table of a result (used to write the docs' tables)."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [line(columns), "| " + " | ".join("---" for _ in columns) + " |"]
    out += [line([render(v) for v in row]) for row in rows]
    return "\n".join(out)


def _is_setup(sql: str, table: list[list[str]] | None) -> bool:
    """A block that makes a view the next examples read, run before them."""
    return table is None and sql.lstrip().upper().startswith("CREATE OR REPLACE TEMPORARY VIEW")


def _setups(name: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return [sql for _, sql, table in sql_examples(text) if _is_setup(sql, table)]


def _examples(name: str, require_tables: bool):
    text = (DOCS / name).read_text(encoding="utf-8")
    found = sql_examples(text)
    if require_tables:
        missing = [
            line for line, sql, table in found if table is None and not _is_setup(sql, table)
        ]
        assert not missing, f"{name}: sql blocks without a result table at lines {missing}"
    return [(f"{name}:{line}", sql, table) for line, sql, table in found if table is not None]


EXAMPLES = (
    _examples("syntax.md", require_tables=True)
    + _examples("getting-started.md", require_tables=False)
    + _examples("migration.md", require_tables=False)
)


def test_syntax_reference_has_an_example_per_clause():
    text = (DOCS / "syntax.md").read_text(encoding="utf-8")
    blocks = "\n".join(sql for _, sql, _ in sql_examples(text)).upper()
    for construct in (
        "PARTITION BY", "ORDER BY", "NULLS LAST", "MEASURES", "RUNNING", "FINAL", "PREV(",
        "NEXT(", "FIRST(", "LAST(", "CLASSIFIER(", "MATCH_NUMBER()", "COUNT(B.*)", "(SELECT",
        "ONE ROW PER MATCH", "ALL ROWS PER MATCH", "SHOW EMPTY MATCHES", "OMIT EMPTY MATCHES",
        "WITH UNMATCHED ROWS", "SKIP PAST LAST ROW", "SKIP TO NEXT ROW", "SKIP TO FIRST",
        "SKIP TO LAST", "PERMUTE(", "{-", "^", "$", "*?", "|", "SUBSET", "DEFINE", "WITHIN",
        "SKIP TILL NEXT MATCH", "PATTERNS FROM",
    ):  # fmt: skip
        assert construct in blocks, construct
    assert len(sql_examples(text)) >= 20


@pytest.mark.parametrize(("where", "sql", "table"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_output_is_the_documented_table(spark, where, sql, table):
    assert check(sql) == [], where
    for setup in _setups(where.split(":")[0]):
        spark.sql(setup)
    df = spark.sql(sql)
    rows = df.collect()
    shown = markdown_table(df.columns, [tuple(r) for r in rows])
    assert table[0] == df.columns, f"{where}: columns differ; the result is\n{shown}"
    actual = [[render(v) for v in row] for row in rows]
    assert actual == table[1:], f"{where}: rows differ; the result is\n{shown}"


def test_configuration_doc_has_the_generated_conf_table(spark):
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    documented = documented_table(text, CONF_TABLE_BEGIN)
    assert documented is not None, (
        f"docs/configuration.md lacks the conf table markers; {REGENERATE}"
    )
    assert documented == conf_table(spark), f"docs/configuration.md is out of date; {REGENERATE}"
    assert "spark.sql.matchRecognize.maxLivePartialMatches" in documented


def test_configuration_doc_lists_every_configure_option():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    documented = documented_table(text, OPTIONS_TABLE_BEGIN)
    assert documented == options_table(), f"docs/configuration.md is out of date; {REGENERATE}"
    for option in OPTIONS.values():
        assert f"`{option.name}`" in documented and f"`{option.key}`" in documented


def test_the_options_are_read_from_the_settings_the_jar_lists(spark):
    committed = SETTINGS_FILE.read_text(encoding="utf-8")
    assert committed == settings_file(spark), f"{SETTINGS_FILE.name} is out of date; {REGENERATE}"


def test_every_public_conf_key_is_a_configure_option(spark):
    keys = set(re.findall(r"^\| `(spark\.sql\.matchRecognize\.[^`]+)`", conf_table(spark), re.M))
    assert len(keys) >= 10
    assert keys == {option.key for option in OPTIONS.values()}


def test_with_table_replaces_only_the_marked_block():
    text = f"intro\n{CONF_TABLE_BEGIN}\nold\n<!-- END GENERATED CONF TABLE -->\noutro\n"
    updated = with_table(text, CONF_TABLE_BEGIN, "| a |\n| --- |")
    assert updated == (
        f"intro\n{CONF_TABLE_BEGIN}\n| a |\n| --- |\n<!-- END GENERATED CONF TABLE -->\noutro\n"
    )
    with pytest.raises(ValueError, match="marker"):
        with_table("no markers", CONF_TABLE_BEGIN, "x")
