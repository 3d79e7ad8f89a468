package org.apache.spark.sql.matchrecognize.execution.automaton

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.matchrecognize.SparkSessionFixture

/** The automaton operator's metrics come from each task as it completes. */
class MatchRecognizeMetricsSuite extends AnyFunSuite with SparkSessionFixture with AdaptiveSparkPlanHelper {

  test("a task's metrics are recorded also when its consumer stops early") {
    // One partition key, so one task matches every row; LIMIT 1 stops reading after one match.
    val df = sql("""SELECT * FROM (SELECT 1 AS k, id AS t FROM range(1000)) MATCH_RECOGNIZE (
      PARTITION BY k ORDER BY t MEASURES A.t AS at PATTERN (A) DEFINE A AS t % 10 = 0) LIMIT 1""")
    assert(df.collect().length == 1)
    val op = collectFirst(df.queryExecution.executedPlan) { case m: MatchRecognizeExec => m }.get
    assert(op.metrics("numInputRows").value > 0)
    assert(op.metrics("numMatches").value >= 1)
    assert(op.metrics("numOutputRows").value >= 1)
  }
}
