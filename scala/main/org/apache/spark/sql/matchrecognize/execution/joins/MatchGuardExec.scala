package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{ExplainUtils, SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.{JoinPlanReport, PartitionKeys}

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
        val lines = r.summary.split(" \\| ").map("  " + _).toSeq
        if (reports.size == 1) lines else s"  pattern ${i + 1}:" +: lines.map("  " + _)
      }).mkString("\n", "\n", "\n")

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] = {
    val schema = child.output
    val ks = keys
    val names = keys.map(_.name).toArray
    val types = keys.map(_.dataType).toArray
    val limit = maxMatches
    val matches = longMetric("numOutputRows")
    val keyCount = longMetric("numKeys")
    child.execute().mapPartitionsInternal { rows =>
      // Keys of a case- or accent-insensitive collation are counted by their collation key.
      val keyOf = UnsafeProjection.create(PartitionKeys.comparable(ks), schema)
      val valuesOf = UnsafeProjection.create(ks, schema)
      val counts = new java.util.HashMap[UnsafeRow, Array[Long]]()
      def describe(row: InternalRow): String = {
        val key = valuesOf(row)
        names.indices.map(i => s"${names(i)}=${key.get(i, types(i))}").mkString("partition key (", ", ", ")")
      }
      // Matches arrive grouped by partition key and slice: most rows have the previous
      // row's key, so that counter is tried before the map.
      var lastKey: UnsafeRow = null
      var lastCount: Array[Long] = null
      if (ks.isEmpty) { // one stream: one counter
        var n = 0L
        rows.map { row =>
          n += 1
          matches += 1
          if (n > limit) throw MatchGuardExec.tooMany(limit, "the input (no PARTITION BY)")
          row
        }
      } else rows.map { row =>
        val key = keyOf(row)
        var c = if (lastKey != null && lastKey == key) lastCount else counts.get(key)
        if (c == null) {
          c = Array(0L); lastKey = key.copy(); counts.put(lastKey, c); keyCount += 1
        } else if (c ne lastCount) lastKey = key.copy()
        lastCount = c
        c(0) += 1
        matches += 1
        if (c(0) > limit) throw MatchGuardExec.tooMany(limit, describe(row))
        row
      }
    }
  }

  override protected def withNewChildInternal(c: SparkPlan): MatchGuardExec = copy(child = c)
}

object MatchGuardExec {
  private def tooMany(limit: Long, key: String) = new MatchRecognizeLimitException(
    s"SKIP TILL ANY MATCH produced more than $limit matches for $key in one task; raise " +
      "spark.sql.matchRecognize.maxMatchesPerPartition or narrow the pattern (WITHIN, DEFINE " +
      "conditions).")
}
