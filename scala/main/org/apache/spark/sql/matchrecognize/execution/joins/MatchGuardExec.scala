package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{ExplainUtils, SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.JoinPlanReport

/**
 * Fails the query when one partition key produces more than `maxMatches` matches in a task,
 * naming the key. It sits on top of a SKIP TILL ANY MATCH plan, so EXPLAIN shows there how
 * the plan was chosen: on the node's line, and in EXPLAIN FORMATTED as a block of its own.
 */
case class MatchGuardExec(keys: Seq[Attribute], maxMatches: Long, reports: Seq[JoinPlanReport],
    child: SparkPlan)
  extends UnaryExecNode {

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of matches"),
    "numKeys" -> SQLMetrics.createMetric(sparkContext, "number of partition keys with matches"))

  override def simpleString(maxFields: Int): String =
    s"MatchGuard [max $maxMatches matches per key] ${JoinPlanReport.summaryOf(reports)}"

  // The report's parts (execution and tree, rows per window, selectivities, sample), one a line.
  override def verboseStringWithOperatorId(): String =
    (Seq(formattedNodeName, ExplainUtils.generateFieldString("Input", child.output),
      s"Limit: $maxMatches matches per partition key in one task", "Plan:") ++
      reports.zipWithIndex.flatMap { case (r, i) =>
        val lines = r.summary.split(" \\| ").map("  " + _).toIndexedSeq
        if (reports.size == 1) lines else s"  pattern ${i + 1}:" +: lines.map("  " + _)
      }).mkString("\n", "\n", "\n")

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] =
    child.execute().mapPartitionsWithEvaluator(
      new MatchGuardEvaluatorFactory(MatchGuardTask(child.output, keys, maxMatches), metrics))

  override protected def withNewChildInternal(c: SparkPlan): MatchGuardExec = copy(child = c)
}
