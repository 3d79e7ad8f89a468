package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, PartitionKeyText}
import org.apache.spark.sql.matchrecognize.plans.PartitionKeys

/**
 * What a task of [[MatchGuardExec]] needs to count its matches (no reference to the plan
 * node): the matches' schema `input`, the partition key columns and the most matches a key
 * may produce in one task.
 */
final case class MatchGuardTask(input: Seq[Attribute], keys: Seq[Attribute], maxMatches: Long)

/** The per-task part of [[MatchGuardExec]]: its input, counted per partition key. */
class MatchGuardEvaluatorFactory(task: MatchGuardTask, metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new MatchGuardEvaluator

  private class MatchGuardEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val rows = inputs.head
      val limit = task.maxMatches
      val (matches, keyCount) = (metrics("numOutputRows"), metrics("numKeys"))
      val valuesOf = UnsafeProjection.create(task.keys, task.input)
      def tooMany(row: InternalRow) = new MatchRecognizeLimitException(
        s"SKIP TILL ANY MATCH produced more than $limit matches for ${PartitionKeyText.of(task.keys, valuesOf(row))} " +
          "in one task; raise spark.sql.matchRecognize.maxMatchesPerPartition or narrow the pattern (WITHIN, " +
          "DEFINE conditions).")
      if (task.keys.isEmpty) { // one stream: one counter
        var n = 0L
        rows.map { row =>
          n += 1
          matches += 1
          if (n > limit) throw tooMany(row)
          row
        }
      } else {
        // Keys of a case- or accent-insensitive collation are counted by their collation key.
        val keyOf = UnsafeProjection.create(PartitionKeys.comparable(task.keys), task.input)
        val counts = new java.util.HashMap[UnsafeRow, Array[Long]]()
        // Matches arrive grouped by partition key and slice: most rows have the previous
        // row's key, so that counter is tried before the map.
        var lastKey: UnsafeRow = null
        var lastCount: Array[Long] = null
        rows.map { row =>
          val key = keyOf(row)
          var c = if (lastKey != null && lastKey == key) lastCount else counts.get(key)
          if (c == null) {
            c = Array(0L); lastKey = key.copy(); counts.put(lastKey, c); keyCount += 1
          } else if (c ne lastCount) lastKey = key.copy()
          lastCount = c
          c(0) += 1
          matches += 1
          if (c(0) > limit) throw tooMany(row)
          row
        }
      }
    }
  }
}
