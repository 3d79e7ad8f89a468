package org.apache.spark.sql.matchrecognize.optimizer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.Row
import org.apache.spark.sql.matchrecognize.SparkSessionFixture
import org.apache.spark.sql.matchrecognize.plans.MatchRecognize

/** Input pruning is part of the optimized logical plan and a fixed point of its rule. */
class PruneMatchRecognizeInputSuite extends AnyFunSuite with SparkSessionFixture {

  private val query =
    """SELECT * FROM VALUES (1, 5, 'x'), (2, 7, 'y'), (3, 6, 'z') AS t(ts, price, note)
      |MATCH_RECOGNIZE (
      |  ORDER BY ts MEASURES FIRST(ts) AS s, LAST(price) AS p
      |  %s
      |  PATTERN (A B) DEFINE B AS price > PREV(price))""".stripMargin

  private def node(rows: String): MatchRecognize =
    sql(query.format(rows)).queryExecution.optimizedPlan.collectFirst { case m: MatchRecognize => m }.get

  test("ONE ROW PER MATCH reads only the columns the clause reads") {
    val m = node("ONE ROW PER MATCH")
    assert(m.child.output.map(_.name) == Seq("ts", "price"))
    assert(PruneMatchRecognizeInput(m) == m, "a second pass changes nothing")
    assertRows(sql(query.format("ONE ROW PER MATCH")), Seq(Row(1, 7)))
  }

  test("ALL ROWS PER MATCH keeps every column") {
    val m = node("ALL ROWS PER MATCH")
    assert(m.child.output.map(_.name) == Seq("ts", "price", "note"))
    assert(PruneMatchRecognizeInput(m) == m)
  }
}
