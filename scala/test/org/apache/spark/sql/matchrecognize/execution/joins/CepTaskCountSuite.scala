package org.apache.spark.sql.matchrecognize.execution.joins

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanHelper, ShuffleQueryStageExec}
import org.apache.spark.sql.execution.exchange.{ReusedExchangeExec, ShuffleExchangeExec}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.SparkSessionFixture
import org.apache.spark.sql.matchrecognize.execution.tree.TreeMatchExec
import org.apache.spark.sql.matchrecognize.compile.anymatch.CepTaskChooser

/**
 * The one shuffle of a SKIP TILL ANY MATCH plan's input: its tasks follow the input's size
 * (never more than spark.sql.shuffle.partitions), it is executed once also when the input
 * is cached, a keyless pattern's time slices fill every task, and the rows are those of
 * the former fixed choice (spark.sql.shuffle.partitions tasks, slices of 16 windows).
 */
class CepTaskCountSuite extends AnyFunSuite with SparkSessionFixture with AdaptiveSparkPlanHelper {

  private val target = "spark.sql.matchRecognize.targetRowsPerTask"
  private val share = "spark.sql.matchRecognize.internal.shareCachedInput"
  private val partitions = "spark.sql.shuffle.partitions"
  private val adaptive = "spark.sql.adaptive.enabled"

  override def beforeAll(): Unit = {
    super.beforeAll()
    // Minute ticks of six symbols: 1,652 rows (the size of a small stock sample).
    sql("""CREATE OR REPLACE TEMPORARY VIEW task_ticks AS
      SELECT element_at(array('AAPL', 'AMZN', 'AVID', 'GOOG', 'MSFT', 'ORCL'),
               CAST(id % 6 AS INT) + 1) AS sym,
             TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, 0, (id DIV 6) * 60) AS ts,
             CAST(100 + pmod(hash(id, 1), 2000) / 100.0 AS DOUBLE) AS peak
      FROM range(1652)""")
    // 40,000 rows, one per second over about 11 hours.
    sql("""CREATE OR REPLACE TEMPORARY VIEW task_seconds AS
      SELECT TIMESTAMP '2026-01-01 00:00:00' + make_dt_interval(0, 0, 0, id) AS ts,
             pmod(hash(id, 7), 50) AS v
      FROM range(40000)""")
  }

  private def partitioned(view: String): String =
    s"""SELECT * FROM $view MATCH_RECOGNIZE (
       |  PARTITION BY sym ORDER BY ts
       |  MEASURES A.ts AS a_ts, D.ts AS d_ts, D.peak - A.peak AS gain
       |  ONE ROW PER MATCH SKIP TILL ANY MATCH
       |  PATTERN (A B C D) WITHIN INTERVAL '10' MINUTE
       |  DEFINE B AS B.peak > A.peak, C AS C.peak > B.peak, D AS D.peak > C.peak + 1)""".stripMargin

  private def keyless(view: String): String =
    s"""SELECT * FROM $view MATCH_RECOGNIZE (
       |  ORDER BY ts
       |  MEASURES A.ts AS a_ts, D.ts AS d_ts
       |  ONE ROW PER MATCH SKIP TILL ANY MATCH
       |  PATTERN (A B C D) WITHIN INTERVAL '5' MINUTE
       |  DEFINE A AS sym = 'AAPL', B AS sym = 'AMZN' AND B.peak > A.peak,
       |         C AS sym = 'AVID', D AS sym = 'GOOG' AND D.peak > C.peak)""".stripMargin

  /** The rows of `query`, and its executed plan (the final one under adaptive execution). */
  private def run(query: String): (Seq[Row], SparkPlan) = {
    val df: DataFrame = spark.sql(query)
    val rows = df.collect().toSeq
    (rows, df.queryExecution.executedPlan)
  }

  private def shuffles(plan: SparkPlan): Seq[ShuffleExchangeExec] =
    collect(plan) { case s: ShuffleExchangeExec => s }

  private def reused(plan: SparkPlan): Int = collect(plan) { case r: ReusedExchangeExec => r }.size

  /** The former choice: spark.sql.shuffle.partitions tasks, a cached input read per leaf. */
  private def formerRows(query: String): Seq[Row] =
    withConf(target -> "0", share -> "false") { run(query)._1 }

  test("the tasks follow the input's rows, at most spark.sql.shuffle.partitions") {
    def tasks(rows: Long, target: Long, maxTasks: Int): Int = {
      val conf = new SQLConf
      conf.setConfString(this.target, target.toString)
      conf.setConfString(partitions, maxTasks.toString)
      val input = spark.range(rows).queryExecution.optimizedPlan
      new CepTaskChooser(conf, None).choose(input, None, 10, keyless = false).tasks
    }
    assert(tasks(1652, 10000, 200) == 1)
    assert(tasks(100000, 10000, 200) == 10)
    assert(tasks(100001, 10000, 200) == 11)
    assert(tasks(10000000, 10000, 200) == 200)
    assert(tasks(1652, 0, 200) == 200)
  }

  test("a keyless input's slices: a few per task, none shorter than four windows") {
    // A long span: slices of 16 windows, many per task.
    assert(CepTaskChooser.slicing(1000000000L, 300, 4) == (4, 4800))
    // 16 windows would make 9 slices for 4 tasks: 17 slices of 2,500.
    assert(CepTaskChooser.slicing(40000, 300, 4) == (4, 2500))
    // 16 windows would make 5 slices: cut down to four windows at the least.
    assert(CepTaskChooser.slicing(40000, 600, 4) == (4, 2500))
    assert(CepTaskChooser.slicing(40000, 1000, 4) == (4, 4000))
    // The span is shorter than four windows per task: fewer tasks, never empty ones.
    assert(CepTaskChooser.slicing(40000, 4000, 8) == (3, 16000))
    assert(CepTaskChooser.slicing(0, 4000, 8) == (1, 16000))
  }

  private val execution = "spark.sql.matchRecognize.cepExecution"

  private def treeOperators(plan: SparkPlan): Int = collect(plan) { case t: TreeMatchExec => t }.size

  Seq("partitioned" -> partitioned _, "keyless" -> keyless _).foreach { case (shape, query) =>
    Seq("true", "false").foreach { aqe =>
      test(s"a small input runs in one task with one shuffle ($shape, adaptive $aqe)") {
        withConf(partitions -> "200", adaptive -> aqe) {
          val expected = withConf(execution -> "joins") { formerRows(query("task_ticks")) }
          assert(expected.nonEmpty, "the case must match something")
          // The four leaves of the join operators read one exchange; the one pass reads it once.
          val (rows, plan) = withConf(execution -> "joins") { run(query("task_ticks")) }
          assert(shuffles(plan).map(_.numPartitions) == Seq(1), plan)
          assert(reused(plan) == 3, plan)
          assert(rows.sortBy(_.toString) == expected.sortBy(_.toString))
          val (treeRows, treePlan) = withConf(execution -> "tree") { run(query("task_ticks")) }
          assert(shuffles(treePlan).map(_.numPartitions) == Seq(1), treePlan)
          assert(reused(treePlan) == 0 && treeOperators(treePlan) == 1, treePlan)
          assert(treeRows.sortBy(_.toString) == expected.sortBy(_.toString))
        }
      }
    }

    test(s"a cached input is shuffled once for every leaf ($shape, adaptive)") {
      // A plan of its own: Spark would serve the queries over task_ticks from the cache too.
      val cached = spark.table("task_ticks").where("peak IS NOT NULL").cache()
      try {
        cached.count()
        cached.createOrReplaceTempView("task_ticks_cached")
        withConf(partitions -> "200", adaptive -> "true", execution -> "joins") {
          val expected = formerRows(query("task_ticks"))
          val (rows, plan) = run(query("task_ticks_cached"))
          assert(shuffles(plan).size == 1 && reused(plan) == 3, plan)
          assert(rows.sortBy(_.toString) == expected.sortBy(_.toString))
          // Left to Spark, each leaf's shuffle reads its own stage of the cached input.
          val (former, formerPlan) = withConf(share -> "false") { run(query("task_ticks_cached")) }
          assert(shuffles(formerPlan).size == 4 && reused(formerPlan) == 0, formerPlan)
          assert(former.sortBy(_.toString) == expected.sortBy(_.toString))
          val (treeRows, treePlan) = withConf(execution -> "tree") { run(query("task_ticks_cached")) }
          assert(shuffles(treePlan).size == 1 && treeOperators(treePlan) == 1, treePlan)
          assert(treeRows.sortBy(_.toString) == expected.sortBy(_.toString))
        }
      } finally cached.unpersist()
    }
  }

  test("a keyless pattern's slices fill every task, with the former rows") {
    val query =
      """SELECT * FROM task_seconds MATCH_RECOGNIZE (
        |  ORDER BY ts
        |  MEASURES A.ts AS a_ts, C.ts AS c_ts
        |  ONE ROW PER MATCH SKIP TILL ANY MATCH
        |  PATTERN (A B C) WITHIN INTERVAL '10' MINUTE
        |  DEFINE A AS v = 1, B AS v = 2 AND B.ts > A.ts + INTERVAL '9' MINUTE, C AS v = 3)""".stripMargin
    withConf(partitions -> "200", adaptive -> "true") {
      val expected = formerRows(query)
      assert(expected.nonEmpty, "the case must match something")
      val (rows, plan) = run(query)
      val input = collect(plan) {
        case s: ShuffleQueryStageExec if s.plan.isInstanceOf[ShuffleExchangeExec] => s
      }
      assert(input.size == 1, plan)
      val bytes = input.head.mapStats.get.bytesByPartitionId
      // 40,000 rows at 10,000 per task: 4 tasks, each with some slices, none with most rows.
      assert(bytes.length == 4, bytes.mkString(", "))
      assert(bytes.forall(_ > 0) && bytes.max < bytes.sum * 0.6, bytes.mkString(", "))
      assert(rows.sortBy(_.toString) == expected.sortBy(_.toString))
    }
  }
}
