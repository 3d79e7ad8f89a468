package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, RowOrdering, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.TaskSort
import org.apache.spark.sql.matchrecognize.plans.PartitionKeys

/**
 * The per-task part of [[MatchRecognizeExec]]: sorts a task's rows when the operator sorts
 * its own input (`sort`), then matches them with a [[PartitionProcessor]], whose metrics
 * are recorded when the task completes (also when its consumer stops early).
 *
 * @param spec the compiled pattern, measures and limits (see [[MatcherSpec]])
 * @param partitionKeys the PARTITION BY columns
 * @param inputSchema the attributes of the input rows
 * @param sort the operator's own sort of a task's rows (none: they come sorted)
 */
class MatchRecognizeEvaluatorFactory(
    spec: MatcherSpec,
    partitionKeys: Seq[Attribute],
    inputSchema: Seq[Attribute],
    sort: Option[TaskSort],
    metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] =
    new PartitionEvaluator[InternalRow, InternalRow] {
      override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
        val rows = inputs.head
        val sorted = sort.map(_.sort(rows, metrics("sortTime"))).getOrElse(rows)
        val processor = new PartitionProcessor(spec, partitionKeys, inputSchema, partitionIndex, metrics)
        TaskContext.get().addTaskCompletionListener[Unit](_ => processor.reportMetrics())
        processor.run(sorted)
      }
    }

  /**
   * Matches one range of a split partition ([[SplitMatching]]): the input partitions
   * `first` until `end` of `ranges`, whose rows are `rows` (unsorted unless `sort` is empty)
   * and whose neighbours' rows `read(j)` returns; `ordering` is the total order the input
   * partitions follow; `entryRows` the first window [[RangeEntry]] reads before the range.
   * `out` hands out what the range's processor writes from its sorted rows: the rows
   * themselves (`_.run(_)`), or packed and followed by its match counts, for output
   * reconciled across ranges ([[SplitReconciliation]]).
   */
  def evalRange[T](
      ordering: Seq[SortOrder],
      entryRows: Int,
      first: Int,
      end: Int,
      ranges: Int,
      rows: Iterator[InternalRow],
      read: Int => Iterator[InternalRow])(
      out: (PartitionProcessor, Iterator[InternalRow]) => Iterator[T]): Iterator[T] = {
    val sorted = sort.map(_.sort(rows, metrics("sortTime"))).getOrElse(rows)
    val keyOf = UnsafeProjection.create(PartitionKeys.comparable(partitionKeys), inputSchema)
    val neighbours = new RangeNeighbours(read, first, end, ranges, RowOrdering.create(ordering, inputSchema),
      (a: UnsafeRow, b: UnsafeRow) => keyOf(a).copy() == keyOf(b))
    val processor =
      new PartitionProcessor(spec, partitionKeys, inputSchema, first, metrics, Some(neighbours), entryRows)
    TaskContext.get().addTaskCompletionListener[Unit](_ => processor.reportMetrics())
    out(processor, sorted)
  }
}
