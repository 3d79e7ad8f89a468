package org.apache.spark.sql.matchrecognize.execution.automaton

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.execution.SortExec
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.matchrecognize.SparkSessionFixture

/**
 * The automaton's own sort (partition key and time in one prefix where it can, else
 * Spark's prefix of the first key) must give exactly the order Spark's sort gives:
 * `PATTERN (A+)` with `A AS true` over ALL ROWS PER MATCH numbers every row of a partition
 * by its place (`RUNNING count(*)`), which must equal ROW_NUMBER() over the same order — with NULL keys and times, ties, extreme keys, times centuries apart
 * (the prefix saturates) and descending order.
 */
class PartitionSortPrefixSuite extends AnyFunSuite with SparkSessionFixture
  with AdaptiveSparkPlanHelper {

  private val ownSort = "spark.sql.matchRecognize.internal.ownSort"
  private val inMemoryBytes = "spark.sql.matchRecognize.internal.sortInMemoryBytes"

  override def beforeAll(): Unit = {
    super.beforeAll()
    // 3,000 rows: keys from a small set with the int extremes and NULL; times mostly within
    // a day with many ties, some NULL, a few in 1800 and 2300; x breaks most ties.
    sql("""CREATE OR REPLACE TEMPORARY VIEW sort_rows AS
      SELECT CASE pmod(hash(id, 1), 7) WHEN 0 THEN NULL WHEN 1 THEN -2147483648
                  WHEN 2 THEN 2147483647 ELSE pmod(hash(id, 2), 5) END AS k,
             CASE pmod(hash(id, 3), 50) WHEN 0 THEN NULL
                  WHEN 1 THEN TIMESTAMP '1800-01-01 00:00:00' + make_dt_interval(0, 0, 0, id)
                  WHEN 2 THEN TIMESTAMP '2300-01-01 00:00:00' - make_dt_interval(0, 0, 0, id)
                  ELSE TIMESTAMP '2026-05-01 00:00:00' +
                       make_dt_interval(0, 0, 0, pmod(hash(id, 4), 2000) / 4.0) END AS ts,
             CAST(pmod(hash(id, 5), 400) AS INT) AS t_int,
             CAST(pmod(hash(id, 6), 100) AS INT) AS x
      FROM range(3000)""")
  }

  private def places(order: String): (String, String) = (
    s"""SELECT k, ts, t_int, x, n FROM sort_rows MATCH_RECOGNIZE (
       |  PARTITION BY k ORDER BY $order
       |  MEASURES RUNNING count(*) AS n
       |  ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true)""".stripMargin,
    // The automaton's total order: ORDER BY, then the other columns ascending, NULLs first.
    s"""SELECT k, ts, t_int, x, row_number() OVER (PARTITION BY k ORDER BY $order, """ +
      (Seq("ts", "t_int", "x").filterNot(c => order.split("[ ,]+").contains(c))
        .map(_ + " ASC NULLS FIRST").mkString(", ")) + ") AS n FROM sort_rows")

  // Each task's few hundred rows are sorted as an array unless the in-memory budget is 0,
  // which sends every row through Spark's sorter with the packed prefix.
  for {
    order <- Seq("ts", "ts DESC NULLS LAST", "ts ASC NULLS LAST, x DESC", "t_int DESC", "t_int, ts")
    (inMemory, how) <- Seq("0" -> "with the packed prefix", "1m" -> "as an array")
  } {
    test(s"the own sort $how gives Spark's order: ORDER BY $order") {
      withConf(inMemoryBytes -> inMemory) { placesMatch(order) }
    }
  }

  private def placesMatch(order: String): Unit = {
    val (query, expected) = places(order)
    val df = sql(query)
    val plan = df.queryExecution.executedPlan
    val exec = collect(plan) { case m: MatchRecognizeExec => m }
    assert(exec.size == 1 && exec.head.simpleString(100).contains("sorts its input"), plan)
    assert(collect(plan) { case s: SortExec => s }.isEmpty, plan)
    assertRows(df, sql(expected).collect().toSeq)
    withConf(ownSort -> "false") {
      val spark = sql(query)
      assert(collect(spark.queryExecution.executedPlan) { case s: SortExec => s }.nonEmpty)
      assertRows(spark, sql(expected).collect().toSeq)
    }
  }

  test("keys the prefix cannot hold are sorted with Spark's first-key prefix, to Spark's order") {
    // A string key, or two keys: not one 32-bit column. RUNNING count(*) numbers the rows of
    // a partition in the order the automaton saw them.
    for {
      keys <- Seq("CAST(k AS STRING)", "k, x")
      inMemory <- Seq("0", "1m")
    } withConf(inMemoryBytes -> inMemory) {
      val query = s"""SELECT k, ts, t_int, x, n FROM sort_rows MATCH_RECOGNIZE (
        |  PARTITION BY $keys ORDER BY ts MEASURES RUNNING count(*) AS n
        |  ALL ROWS PER MATCH PATTERN (A+) DEFINE A AS true)""".stripMargin
      val df = sql(query)
      val plan = df.queryExecution.executedPlan
      val note = collect(plan) { case m: MatchRecognizeExec => m.simpleString(100) }
      assert(note.size == 1 && note.head.contains(", sorts its input") &&
          !note.head.contains("partition and time prefix"), plan)
      assert(collect(plan) { case s: SortExec => s }.isEmpty, plan)
      val expected = withConf(ownSort -> "false") {
        val spark = sql(query)
        assert(collect(spark.queryExecution.executedPlan) { case s: SortExec => s }.nonEmpty)
        spark.collect().toSeq
      }
      assertRows(df, expected)
    }
  }

  test("the own sort is the automaton's partitioning too (rows of a key stay together)") {
    val df = sql("""SELECT k, count(*) AS matches FROM sort_rows MATCH_RECOGNIZE (
      |  PARTITION BY k ORDER BY ts MEASURES count(*) AS n
      |  ONE ROW PER MATCH PATTERN (A+) DEFINE A AS true) GROUP BY k""".stripMargin)
    // One match per key: a key split in two runs would give two.
    assert(df.collect().forall(_.getLong(1) == 1L))
    assert(df.count() == sql("SELECT DISTINCT k FROM sort_rows").count())
  }
}
