package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.matchrecognize.SparkSessionFixture
import org.apache.spark.sql.matchrecognize.plans.MatchRecognize

/** The analysis-time checks of SKIP TILL ANY MATCH, applied to resolved Catalyst plans. */
class CheckAnyMatchPatternsSuite extends AnyFunSuite with SparkSessionFixture {

  private def query(pattern: String, define: String = "B AS B.x > A.x") =
    s"""SELECT * FROM VALUES (1, 5, 'a'), (2, 7, 'b'), (3, 6, 'c') AS t(ts, x, e)
       |MATCH_RECOGNIZE (
       |  ORDER BY ts MEASURES A.ts AS a SKIP TILL ANY MATCH
       |  PATTERN ($pattern) WITHIN 3 ROWS DEFINE $define)""".stripMargin

  private def analyzed(pattern: String) = sql(query(pattern)).queryExecution.analyzed

  private def node(pattern: String): MatchRecognize =
    analyzed(pattern).collectFirst { case m: MatchRecognize => m }.get

  test("a plan the checks accept comes back unchanged") {
    val plan = analyzed("A B C")
    assert(CheckAnyMatchPatterns(plan) eq plan)
  }

  test("patterns with closures and negations next to them pass the checks") {
    CheckAnyMatchPatterns.check(node("A B+ C"))
    CheckAnyMatchPatterns.check(node("A B+ !D"))
  }

  test("a closure's condition reading a later closure fails analysis, naming both") {
    val e = intercept[AnalysisException](
      sql(query("A B+ C D+", "B AS B.x > COALESCE(max(D.x), 0), D AS D.x > A.x")))
    assert(e.getMessage.contains("UNSUPPORTED_FEATURE"), e.getMessage)
    assert(e.getMessage.contains("the DEFINE of the Kleene closure `B` reading the Kleene closure `D`"),
      e.getMessage)
    CheckAnyMatchPatterns(sql(query("A B+ C D+", "D AS D.x > avg(B.x)")).queryExecution.analyzed)
  }

  test("a condition reading another alternative's variable fails analysis") {
    val e = intercept[AnalysisException](sql(query("A (B | C)", "B AS e = 'b', C AS C.x > B.x")))
    assert(e.getMessage.contains("CROSS_ALTERNATIVE_REFERENCE"), e.getMessage)
  }
}
