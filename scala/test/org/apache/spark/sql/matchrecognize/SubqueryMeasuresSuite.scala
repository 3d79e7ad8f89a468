package org.apache.spark.sql.matchrecognize

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{AnalysisException, Row}

/** Subqueries in MEASURES (scalar, IN, EXISTS; correlated with the match) and in DEFINE. */
class SubqueryMeasuresSuite extends AnyFunSuite with SparkSessionFixture {

  override def beforeAll(): Unit = {
    super.beforeAll()
    sql("""CREATE OR REPLACE TEMPORARY VIEW sq_ticks AS SELECT * FROM VALUES
          |  ('ACME', 1, 50), ('ACME', 2, 48), ('ACME', 3, 45), ('ACME', 4, 47), ('ACME', 5, 52),
          |  ('GLBX', 1, 20), ('GLBX', 2, 19), ('GLBX', 3, 22) AS t(sym, ts, price)""".stripMargin)
    sql("""CREATE OR REPLACE TEMPORARY VIEW sq_names AS SELECT * FROM VALUES
          |  ('ACME', 'Acme Corp'), ('GLBX', 'Globex') AS n(code, name)""".stripMargin)
    sql("CREATE OR REPLACE TEMPORARY VIEW sq_watch AS SELECT * FROM VALUES (45), (19) AS w(price)")
  }

  private def vShape(measures: String, rows: String = "ONE ROW PER MATCH") =
    s"""SELECT * FROM sq_ticks MATCH_RECOGNIZE (
       |  PARTITION BY sym ORDER BY ts
       |  MEASURES $measures
       |  $rows
       |  PATTERN (STRT DOWN+ UP+)
       |  DEFINE DOWN AS price < PREV(price), UP AS price > PREV(price)) AS mr""".stripMargin

  // Aggregated, as Spark 3.5 requires of a correlated scalar subquery.
  test("a scalar subquery correlated with a pattern variable") {
    assertRows(
      sql(vShape(
          "(SELECT max(name) FROM sq_names n WHERE n.code = STRT.sym) AS company, LAST(DOWN.price) AS low")),
      Seq(Row("ACME", "Acme Corp", 45), Row("GLBX", "Globex", 19)))
  }

  test("IN and EXISTS over pattern values, mixed with pattern expressions outside") {
    assertRows(
      sql(vShape(
          """LAST(DOWN.price) IN (SELECT price FROM sq_watch) AS watched,
        |  EXISTS (SELECT 1 FROM sq_watch w WHERE w.price = FIRST(DOWN.price)) AS first_watched,
        |  count(*) + (SELECT count(*) FROM sq_watch) AS n_plus""".stripMargin)),
      Seq(Row("ACME", true, false, 7L), Row("GLBX", true, true, 5L)))
  }

  test("an uncorrelated subquery in DEFINE and in MEASURES") {
    val df = sql(
      """SELECT * FROM sq_ticks MATCH_RECOGNIZE (
        |  PARTITION BY sym ORDER BY ts
        |  MEASURES count(*) AS n, (SELECT max(price) FROM sq_watch) AS cap
        |  PATTERN (A+)
        |  DEFINE A AS price > (SELECT min(price) FROM sq_watch) + 25) AS mr""".stripMargin)
    assertRows(df, Seq(Row("ACME", 5L, 45)))
  }

  test("a correlated subquery with ALL ROWS PER MATCH reads the current row") {
    // `sym` is not a column of sq_names, so it is the outer (current) row's.
    assertRows(sql(vShape("CLASSIFIER() AS cls, (SELECT max(name) FROM sq_names n WHERE n.code = sym) AS company",
          "ALL ROWS PER MATCH")).select("sym", "ts", "cls", "company").where("sym = 'GLBX'"),
      Seq(Row("GLBX", 1, "STRT", "Globex"), Row("GLBX", 2, "DOWN", "Globex"),
        Row("GLBX", 3, "UP", "Globex")))
  }

  test("uncorrelated IN and EXISTS subqueries in DEFINE") {
    assertRows(
      sql(
        """SELECT * FROM sq_ticks MATCH_RECOGNIZE (
        |  PARTITION BY sym ORDER BY ts MEASURES A.ts AS ts, A.price AS p PATTERN (A)
        |  DEFINE A AS A.price IN (SELECT price FROM sq_watch)
        |    AND EXISTS (SELECT 1 FROM sq_watch WHERE price > 40)) AS mr""".stripMargin),
      Seq(Row("ACME", 3, 45), Row("GLBX", 2, 19)))
  }

  test("a subquery in DEFINE that reads a pattern variable is rejected by name") {
    val e = intercept[AnalysisException](sql(
        """SELECT * FROM sq_ticks MATCH_RECOGNIZE (ORDER BY ts MEASURES count(*) AS n PATTERN (A B)
        |  DEFINE B AS EXISTS (SELECT 1 FROM sq_watch w WHERE w.price = A.price)) AS mr""".stripMargin))
    assert(e.getMessage.contains("subquery in DEFINE that refers to the match") &&
      e.getMessage.contains("A.price"))
  }
}
