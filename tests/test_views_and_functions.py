"""MATCH_RECOGNIZE kept as text by a command and parsed again when read: temporary, global
temporary and persistent views (in the session catalog), ALTER VIEW, CACHE TABLE and SQL
table functions, through spark.sql. The stored text must hold the whole clause, whatever
follows it (an alias or nothing), however the statement is laid out."""

import pytest

ROWS = "VALUES (1, 'a', 5), (2, 'a', 3), (3, 'a', 7), (1, 'b', 1) AS t(ts, p, v)"
# a: 5, 3, 7 is one match of A B+ (3 rows); b has one row, no B.
CLAUSE = """match_recognize (PARTITION BY p ORDER BY ts
  MEASURES A.ts AS a, count(*) AS n
  PATTERN (A B+) DEFINE B AS v <> PREV(v))"""
EXPECTED = [("a", 1, 3)]


@pytest.fixture(scope="module")
def source(spark):
    spark.sql(f"CREATE OR REPLACE TEMP VIEW mr_view_src AS SELECT * FROM {ROWS}")
    spark.sql("DROP TABLE IF EXISTS mr_view_table")
    spark.sql("CREATE TABLE mr_view_table USING parquet AS SELECT * FROM mr_view_src")
    yield
    for view in ("mr_v_persistent", "mr_v_altered", "mr_v_evolving", "mr_v_of_view"):
        spark.sql(f"DROP VIEW IF EXISTS {view}")
    spark.sql("DROP FUNCTION IF EXISTS mr_fn_persistent")
    spark.sql("DROP TABLE IF EXISTS mr_view_table")


def rows(spark, sql):
    return sorted(tuple(r) for r in spark.sql(sql).collect())


# The clause last in the view's query, with no alias after it: the case that lost the text.
QUERIES = {
    "no alias": f"SELECT * FROM {{src}} {CLAUSE}",
    "alias": f"SELECT * FROM {{src}} {CLAUSE} AS mr",
    "lines and tabs": f"SELECT *\n\tFROM {{src}}\n{CLAUSE.replace(' ', chr(9))}",
    "leading comment": f"/* the shape */ SELECT * FROM {{src}} {CLAUSE}",
    "in a CTE": f"WITH m AS (SELECT * FROM {{src}} {CLAUSE}) SELECT * FROM m",
    "parenthesized": f"(SELECT * FROM {{src}} {CLAUSE})",
}


@pytest.mark.parametrize("shape", list(QUERIES))
@pytest.mark.parametrize("kind", ["TEMP VIEW", "GLOBAL TEMP VIEW"])
def test_temporary_views_read_back(spark, source, kind, shape):
    query = QUERIES[shape].format(src="mr_view_src")
    spark.sql(f"CREATE OR REPLACE {kind} mr_v_temp AS {query}")
    name = "global_temp.mr_v_temp" if kind.startswith("GLOBAL") else "mr_v_temp"
    assert rows(spark, f"SELECT * FROM {name}") == EXPECTED


@pytest.mark.parametrize("shape", list(QUERIES))
def test_persistent_view_over_a_table_reads_back(spark, source, shape):
    query = QUERIES[shape].format(src="mr_view_table")
    spark.sql(f"CREATE OR REPLACE VIEW mr_v_persistent COMMENT 'shapes' AS {query}")
    assert rows(spark, "SELECT * FROM mr_v_persistent") == EXPECTED
    text = " ".join(spark.sql("SHOW CREATE TABLE mr_v_persistent").first()[0].split())
    assert "PATTERN (A B+) DEFINE B AS v <> PREV(v))" in text


def test_view_with_column_names_schema_binding_and_a_view_over_it(spark, source):
    query = QUERIES["no alias"].format(src="mr_view_table")
    spark.sql(
        f"CREATE OR REPLACE VIEW mr_v_persistent (key, first_ts, rows_matched) "
        f"WITH SCHEMA BINDING AS {query}"
    )
    spark.sql("CREATE OR REPLACE VIEW mr_v_of_view AS SELECT * FROM mr_v_persistent")
    assert rows(spark, "SELECT * FROM mr_v_of_view") == EXPECTED
    assert spark.table("mr_v_of_view").columns == ["key", "first_ts", "rows_matched"]


def test_alter_view_and_schema_evolution(spark, source):
    spark.sql("CREATE OR REPLACE VIEW mr_v_altered AS SELECT 1 AS x")
    spark.sql(f"ALTER VIEW mr_v_altered AS {QUERIES['no alias'].format(src='mr_view_table')}")
    assert rows(spark, "SELECT * FROM mr_v_altered") == EXPECTED
    spark.sql(
        "CREATE OR REPLACE VIEW mr_v_evolving WITH SCHEMA EVOLUTION AS "
        + QUERIES["no alias"].format(src="mr_view_table")
    )
    assert rows(spark, "SELECT * FROM mr_v_evolving") == EXPECTED


def test_variable_substitution_in_a_view(spark, source):
    spark.sql("SET mr_view_source = mr_view_table")
    spark.sql(
        "CREATE OR REPLACE TEMP VIEW mr_v_sub AS "
        + QUERIES["no alias"].format(src="${mr_view_source}")
    )
    assert rows(spark, "SELECT * FROM mr_v_sub") == EXPECTED


@pytest.mark.parametrize("lazy", ["", "LAZY "])
def test_cache_table_as_select(spark, source, lazy):
    spark.sql(f"CACHE {lazy}TABLE mr_cached AS {QUERIES['no alias'].format(src='mr_view_src')}")
    try:
        assert rows(spark, "SELECT * FROM mr_cached") == EXPECTED
    finally:
        spark.sql("UNCACHE TABLE IF EXISTS mr_cached")
        spark.catalog.dropTempView("mr_cached")


@pytest.mark.parametrize("kind", ["TEMP FUNCTION mr_fn_temp", "FUNCTION mr_fn_persistent"])
def test_sql_table_function_returning_the_clause(spark, source, kind):
    spark.sql(
        f"CREATE OR REPLACE {kind}() RETURNS TABLE (p STRING, a INT, n BIGINT) "
        f"RETURN {QUERIES['no alias'].format(src='mr_view_table')}"
    )
    name = kind.split()[-1]
    assert rows(spark, f"SELECT * FROM {name}()") == EXPECTED
