"""MATCH_RECOGNIZE inside a correlated subquery (scalar, EXISTS, LATERAL) reading a column
of the outer query in DEFINE or MEASURES, under both semantics: refused at analysis with a
named error, never an internal error from the optimizer."""

import pytest
from pyspark.errors import AnalysisException


@pytest.fixture(scope="module")
def tables(spark):
    spark.sql(
        "CREATE OR REPLACE TEMP VIEW mr_outer AS SELECT * FROM VALUES (1, 5), (2, 0) AS o(k, lim)"
    )
    spark.sql("""CREATE OR REPLACE TEMP VIEW mr_inner AS SELECT k, ts,
                 TIMESTAMP'2024-01-01' + make_interval(0,0,0,0,0,0,ts) AS t, v
                 FROM VALUES (1, 1, 3), (1, 2, 6), (2, 1, 1) AS t(k, ts, v)""")


STANDARD = "ORDER BY ts MEASURES {measure} AS m ONE ROW PER MATCH PATTERN (A) DEFINE A AS {define}"
ANY_MATCH = (
    "ORDER BY t MEASURES {measure} AS m ONE ROW PER MATCH SKIP TILL ANY MATCH "
    "PATTERN (A B) WITHIN 5 ROWS DEFINE A AS {define}"
)

CASES = {
    "scalar subquery, DEFINE": (
        "SELECT k, (SELECT count(*) FROM mr_inner MATCH_RECOGNIZE ({clause})) FROM mr_outer",
        "A.ts",
        "A.v > mr_outer.lim",
        "DEFINE",
    ),
    "EXISTS, MEASURES": (
        "SELECT k FROM mr_outer WHERE EXISTS (SELECT * FROM mr_inner MATCH_RECOGNIZE ({clause}))",
        "A.v + mr_outer.lim",
        "true",
        "MEASURES",
    ),
    "LATERAL, DEFINE": (
        "SELECT * FROM mr_outer, LATERAL (SELECT * FROM mr_inner MATCH_RECOGNIZE ({clause}))",
        "A.ts",
        "A.v > mr_outer.lim",
        "DEFINE",
    ),
}


@pytest.mark.parametrize("semantics", [STANDARD, ANY_MATCH], ids=["standard", "any match"])
@pytest.mark.parametrize("case", list(CASES))
def test_outer_reference_is_refused_by_name(spark, tables, case, semantics):
    template, measure, define, clause_name = CASES[case]
    sql = template.format(clause=semantics.format(measure=measure, define=define))
    with pytest.raises(AnalysisException) as error:
        spark.sql(sql).collect()
    message = str(error.value)
    assert "MATCH_RECOGNIZE.OUTER_REFERENCE" in message
    assert f"{clause_name} reads" in message and "lim" in message
    assert "INTERNAL_ERROR" not in message


def test_an_uncorrelated_clause_inside_a_subquery_still_runs(spark, tables):
    got = spark.sql(f"""
        SELECT k, (SELECT count(*) FROM mr_inner MATCH_RECOGNIZE (
                     {STANDARD.format(measure="A.ts", define="A.v > 2")})) AS n
        FROM mr_outer ORDER BY k""").collect()
    assert [tuple(r) for r in got] == [(1, 2), (2, 2)]
