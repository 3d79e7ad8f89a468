package org.apache.spark.sql.matchrecognize.execution.cep

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.JoinPlanReport

/** Fails the query when one partition key produces more than `maxMatches` matches in a task. */
case class MatchGuardExec(keys: Seq[Attribute], maxMatches: Long, report: JoinPlanReport,
    child: SparkPlan) extends UnaryExecNode {

  // EXPLAIN shows how the join trees below were chosen.
  override def simpleString(maxFields: Int): String =
    s"MatchGuard [max $maxMatches matches per key] ${report.summary}"

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning = child.outputPartitioning
  override def outputOrdering = child.outputOrdering

  override protected def doExecute(): RDD[InternalRow] = {
    val schema = child.output
    val ks = keys
    val limit = maxMatches
    child.execute().mapPartitionsInternal { rows =>
      val keyOf = UnsafeProjection.create(ks, schema)
      val counts = new java.util.HashMap[UnsafeRow, Array[Long]]()
      // Matches arrive grouped by partition key and slice: most rows have the previous
      // row's key, so that counter is tried before the map.
      var lastKey: UnsafeRow = null
      var lastCount: Array[Long] = null
      if (ks.isEmpty) { // one stream: one counter
        var n = 0L
        rows.map { row =>
          n += 1
          if (n > limit) throw MatchGuardExec.tooMany(limit)
          row
        }
      } else rows.map { row =>
        val key = keyOf(row)
        var c = if (lastKey != null && lastKey == key) lastCount else counts.get(key)
        if (c == null) { c = Array(0L); lastKey = key.copy(); counts.put(lastKey, c) }
        else if (c ne lastCount) lastKey = key.copy()
        lastCount = c
        c(0) += 1
        if (c(0) > limit) throw MatchGuardExec.tooMany(limit)
        row
      }
    }
  }

  override protected def withNewChildInternal(c: SparkPlan): MatchGuardExec = copy(child = c)
}

object MatchGuardExec {
  private def tooMany(limit: Long) = new MatchRecognizeLimitException(
    s"SKIP TILL ANY MATCH produced more than $limit matches for one partition key in one " +
      "task; raise spark.sql.matchRecognize.maxMatchesPerPartition or narrow the pattern " +
      "(WITHIN, DEFINE conditions).")
}
