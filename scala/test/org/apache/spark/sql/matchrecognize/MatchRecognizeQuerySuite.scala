package org.apache.spark.sql.matchrecognize

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{AnalysisException, Row}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.matchrecognize.execution.automaton.MatchRecognizeExec
import org.apache.spark.sql.matchrecognize.plans.MatchRecognize

/** MATCH_RECOGNIZE end to end through spark.sql, planning and execution. */
class MatchRecognizeQuerySuite extends AnyFunSuite with SparkSessionFixture
  with AdaptiveSparkPlanHelper {

  private val ticker =
    """VALUES ('ACME', 1, 50), ('ACME', 2, 48), ('ACME', 3, 45), ('ACME', 4, 47),
      |       ('ACME', 5, 52), ('ACME', 6, 51), ('ACME', 7, 49), ('ACME', 8, 53),
      |       ('GLBX', 1, 20), ('GLBX', 2, 21), ('GLBX', 3, 19), ('GLBX', 4, 18),
      |       ('GLBX', 5, 22), ('GLBX', 6, 23), ('GLBX', 7, 21)""".stripMargin

  private def vShape(input: String = s"($ticker) AS t(symbol, tstamp, price)") =
    s"""SELECT * FROM $input MATCH_RECOGNIZE (
       |  PARTITION BY symbol ORDER BY tstamp
       |  MEASURES STRT.tstamp AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp,
       |           LAST(UP.tstamp) AS end_tstamp, MATCH_NUMBER() AS mno
       |  ONE ROW PER MATCH
       |  AFTER MATCH SKIP PAST LAST ROW
       |  PATTERN (STRT DOWN+ UP+)
       |  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
       |) AS mr""".stripMargin

  private val vShapeRows = Seq(Row("ACME", 1, 3, 5, 1L), Row("ACME", 6, 7, 8, 2L),
    Row("GLBX", 2, 4, 6, 1L))

  test("the V shape, with adaptive execution on and off") {
    Seq("true", "false").foreach { aqe =>
      withConf("spark.sql.adaptive.enabled" -> aqe) {
        assertRows(sql(vShape()), vShapeRows)
      }
    }
  }

  test("the result does not depend on how the input is partitioned") {
    spark.sql(s"SELECT * FROM ($ticker) AS t(symbol, tstamp, price)").repartition(7)
      .createOrReplaceTempView("ticker_scattered")
    withConf("spark.sql.shuffle.partitions" -> "1") {
      assertRows(sql(vShape("ticker_scattered")), vShapeRows)
    }
    withConf("spark.sql.shuffle.partitions" -> "13") {
      assertRows(sql(vShape("ticker_scattered")), vShapeRows)
    }
  }

  test("EXPLAIN shows the logical node and the physical operator") {
    val qe = sql(vShape()).queryExecution
    assert(qe.analyzed.collectFirst { case m: MatchRecognize => m }.isDefined)
    // Through adaptive execution's wrapper (AdaptiveSparkPlanHelper), which hides its plan.
    assert(collectFirst(qe.executedPlan) { case m: MatchRecognizeExec => m }.isDefined,
      qe.executedPlan.treeString)
    val text = sql(s"EXPLAIN EXTENDED ${vShape()}").collect().map(_.getString(0)).mkString
    assert(text.contains("MatchRecognize PARTITION BY"))
    assert(text.contains("PATTERN (STRT DOWN+ UP+)"))
  }

  test("the operator reports its metrics") {
    val df = sql(vShape())
    df.collect()
    val op = collectFirst(df.queryExecution.executedPlan) { case m: MatchRecognizeExec => m }.get
    assert(op.metrics("numInputRows").value == 15)
    assert(op.metrics("numMatches").value == 3)
    assert(op.metrics("numOutputRows").value == 3)
  }

  test("several MATCH_RECOGNIZE relations, a view over one, and one over a join") {
    sql(vShape()).createOrReplaceTempView("v_matches")
    assertRows(sql("SELECT count(*) FROM v_matches"), Seq(Row(3L)))
    val two = sql(
      s"""SELECT a.symbol, a.n, b.n FROM
         |  (SELECT * FROM ($ticker) t(symbol, tstamp, price) MATCH_RECOGNIZE (
         |     PARTITION BY symbol ORDER BY tstamp MEASURES count(*) AS n PATTERN (X+) DEFINE X AS price > 40)) a
         |  JOIN
         |  (SELECT * FROM ($ticker) t(symbol, tstamp, price) MATCH_RECOGNIZE (
         |     PARTITION BY symbol ORDER BY tstamp MEASURES count(*) AS n PATTERN (Y+) DEFINE Y AS price < 40)) b
         |  ON a.symbol = b.symbol""".stripMargin)
    assert(two.collect().isEmpty) // ACME is always above 40, GLBX always below
    val overJoin = sql(
      s"""SELECT * FROM (SELECT t.symbol, t.tstamp, t.price, s.sector FROM ($ticker) t(symbol, tstamp, price)
         |  JOIN (VALUES ('ACME', 'tech')) s(symbol, sector) ON t.symbol = s.symbol) j
         |MATCH_RECOGNIZE (PARTITION BY sector ORDER BY tstamp MEASURES count(*) AS n
         |  PATTERN (A+) DEFINE A AS price > 0) m""".stripMargin)
    assertRows(overJoin, Seq(Row("tech", 8L)))
  }

  test("views over MATCH_RECOGNIZE keep the user's text") {
    sql(s"CREATE OR REPLACE TEMPORARY VIEW mr_view AS ${vShape()}")
    assertRows(sql("SELECT * FROM mr_view"), vShapeRows)
    sql(s"CREATE OR REPLACE TEMPORARY VIEW mr_view2 AS SELECT symbol, mno FROM (${vShape()}) WHERE mno = 2")
    assertRows(sql("SELECT * FROM mr_view2"), Seq(Row("ACME", 2L)))
  }

  test("query parameters inside and outside the clause") {
    val df = spark.sql(
      s"""SELECT * FROM ($ticker) AS t(symbol, tstamp, price) MATCH_RECOGNIZE (
         |  PARTITION BY symbol ORDER BY tstamp MEASURES count(*) AS n
         |  PATTERN (A+) DEFINE A AS price > ?) AS mr WHERE n > ?""".stripMargin,
      Array[Any](46, 1))
    // ACME prices above 46 form the runs 50 48 | 47 52 51 49 53; GLBX never exceeds 46.
    assertRows(df, Seq(Row("ACME", 2L), Row("ACME", 5L)))
    val named = spark.sql(
      s"""SELECT * FROM ($ticker) AS t(symbol, tstamp, price) MATCH_RECOGNIZE (
         |  PARTITION BY symbol ORDER BY tstamp MEASURES count(*) AS n
         |  PATTERN (A+) DEFINE A AS price > :limit) AS mr""".stripMargin,
      Map[String, Any]("limit" -> 50))
    assertRows(named, Seq(Row("ACME", 2L), Row("ACME", 1L))) // runs above 50: 52 51 | 53
  }

  test("limits are Spark conf, settable per query with SET") {
    val q = s"""SELECT * FROM (SELECT id, id % 7 AS v FROM range(300)) MATCH_RECOGNIZE (
               |  ORDER BY id MEASURES count(*) AS n PATTERN ((A | B)+ C)
               |  DEFINE C AS C.v = LAST(A.v) + 100) AS mr""".stripMargin
    // The older key is still read, and the error names the current one.
    for (key <- Seq("maxLivePartialMatches", "maxLiveThreads").map("spark.sql.matchRecognize." + _)) {
      sql(s"SET $key = 20")
      try {
        // Spark 4 fails the query with the task's error itself, 3.5 with "Job aborted" around it.
        val e = intercept[Exception](sql(q).collect())
        assert(e.getMessage.contains("[MATCH_RECOGNIZE.LIMIT_EXCEEDED] "))
        assert(e.getMessage.contains("spark.sql.matchRecognize.maxLivePartialMatches"))
      } finally sql(s"RESET $key")
    }
    assert(sql(q).collect().isEmpty)
    val bad = intercept[IllegalArgumentException](sql("SET spark.sql.matchRecognize.maxLivePartialMatches = 0"))
    assert(bad.getMessage.contains("must be positive"))
  }

  test("errors: unknown variable, unknown column, malformed clause, stream without watermark") {
    val unknownVar = intercept[AnalysisException](sql(vShape().replace("LAST(UP.tstamp)", "LAST(UPP.tstamp)")))
    assert(unknownVar.getMessage.contains("pattern variable `UPP`"))
    val unknownCol = intercept[AnalysisException](sql(vShape().replace("DOWN.price <", "DOWN.prize <")))
    assert(unknownCol.getMessage.contains("cannot be resolved") && unknownCol.getMessage.contains("prize"))
    val parse = intercept[ParseException](sql(vShape().replace("PATTERN (STRT DOWN+ UP+)", "PATTERN (STRT DOWN+ UP+")))
    assert(parse.getMessage.contains("Syntax error") && parse.line.isDefined)
    val ordinary = intercept[ParseException](sql("SELECT * FROM t WHERE x >"))
    assert(ordinary.getMessage.contains("PARSE_SYNTAX_ERROR"))
    val stream = spark.readStream.format("rate").load()
    stream.createOrReplaceTempView("rate_stream")
    val streamQuery =
      "SELECT * FROM rate_stream MATCH_RECOGNIZE (ORDER BY timestamp MEASURES count(*) AS n PATTERN (A+ B) " +
        "DEFINE B AS value % 2 = 0)"
    // A stream needs a watermark on its first ORDER BY key; with one, the query is a stream.
    val streaming = intercept[AnalysisException](sql(streamQuery))
    assert(streaming.getMessage.contains("STREAMING_NEEDS_EVENT_TIME") &&
      streaming.getMessage.contains("withWatermark"))
    stream.withWatermark("timestamp", "1 second").createOrReplaceTempView("rate_stream")
    assert(sql(streamQuery).isStreaming)
  }

  test("ties on the ORDER BY key are broken by the remaining columns") {
    // Same key for all rows: the matcher must see them ordered by (x) whatever the shuffle.
    val q = """SELECT * FROM (SELECT 1 AS k, id AS x FROM range(0, 40, 1, 8))
              |MATCH_RECOGNIZE (ORDER BY k MEASURES FIRST(A.x) AS f, LAST(A.x) AS l
              |  PATTERN (A{3}) DEFINE A AS true) AS mr""".stripMargin
    val expected = (0 until 13).map(i => Row(3L * i, 3L * i + 2))
    Seq("1", "5").foreach { n =>
      withConf("spark.sql.shuffle.partitions" -> n) { assertRows(sql(q), expected) }
    }
  }
}
