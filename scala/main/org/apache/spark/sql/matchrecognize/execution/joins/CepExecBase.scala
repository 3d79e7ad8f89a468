package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.BinaryExecNode
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.execution.TaskSort
import org.apache.spark.sql.matchrecognize.plans.MatchSpan

/**
 * What the operators of SKIP TILL ANY MATCH plans share: both inputs clustered by partition
 * key and time slice and sorted by the start of their partial matches within a slice, and
 * the same metrics.
 */
trait CepBinaryExec extends BinaryExecNode {
  def leftSpan: MatchSpan
  def rightSpan: MatchSpan

  override def requiredChildDistribution: Seq[Distribution] =
    Seq(ClusteredDistribution(leftSpan.keys), ClusteredDistribution(rightSpan.keys))

  private def inputOrderings: Seq[Seq[SortOrder]] = Seq(
    (leftSpan.keys :+ leftSpan.lo).map(SortOrder(_, Ascending)),
    (rightSpan.keys :+ rightSpan.lo).map(SortOrder(_, Ascending)))

  // Each input is sorted by the operator itself (most tasks get a few hundred rows, which
  // Spark's Sort would give a whole memory page each), unless its rows already come in
  // order, e.g. from a sequence join below.
  @transient private lazy val ownSorts: Seq[Option[TaskSort]] =
    children.zip(inputOrderings).map { case (child, order) =>
      if (TaskSort.wanted(conf, child, order)) {
        Some(TaskSort(order, child.output, TaskSort.inMemoryBytes(conf)))
      } else None
    }

  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    ownSorts.zip(inputOrderings).map { case (sort, order) => if (sort.isDefined) Nil else order }

  /** A task's two inputs in order: sorted here where the sort is this operator's own. */
  protected def sortInputs
      : (Iterator[InternalRow], Iterator[InternalRow]) => (Iterator[InternalRow], Iterator[InternalRow]) = {
    val Seq(leftSort, rightSort) = ownSorts
    val time = metrics("sortTime")
    (l, r) => (leftSort.fold(l)(_.sort(l, time)), rightSort.fold(r)(_.sort(r, time)))
  }

  /** EXPLAIN's note of the inputs this operator sorts itself. */
  protected def ownSortNote: String = ownSorts.map(_.isDefined) match {
    case Seq(true, true) => ", sorts both inputs"
    case Seq(true, false) => ", sorts its left input"
    case Seq(false, true) => ", sorts its right input"
    case _ => ""
  }

  override def outputPartitioning: Partitioning = left.outputPartitioning

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numLeftRows" -> SQLMetrics.createMetric(sparkContext, "number of partial matches in"),
    "numRightRows" -> SQLMetrics.createMetric(sparkContext, "number of rows joined in"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of partial matches out"),
    "peakBufferedRows" ->
      SQLMetrics.createAverageMetric(sparkContext, "peak buffered rows per task"),
    "sortTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "own sort time")) ++
    operatorMetrics

  /** Metrics of one kind of operator, besides the shared ones. */
  protected def operatorMetrics: Map[String, SQLMetric] = Map.empty

  /** What an executor needs to walk the two inputs (no reference to this plan node). */
  protected def sweepSpec: SweepSpec = SweepSpec(leftSpan.keys, left.output, rightSpan.keys,
    right.output, left.output.indexWhere(_.exprId == leftSpan.lo.exprId),
    right.output.indexWhere(_.exprId == rightSpan.lo.exprId), metrics("numRightRows"))
}

final case class SweepSpec(
    leftKeys: Seq[org.apache.spark.sql.catalyst.expressions.Attribute],
    leftSchema: Seq[org.apache.spark.sql.catalyst.expressions.Attribute],
    rightKeys: Seq[org.apache.spark.sql.catalyst.expressions.Attribute],
    rightSchema: Seq[org.apache.spark.sql.catalyst.expressions.Attribute],
    leftLo: Int,
    rightLo: Int,
    rightRows: SQLMetric) {
  def open(l: Iterator[org.apache.spark.sql.catalyst.InternalRow],
      r: Iterator[org.apache.spark.sql.catalyst.InternalRow]): SliceSweep =
    new SliceSweep(l, r.map { row => rightRows += 1; row }, leftKeys, leftSchema, rightKeys,
      rightSchema, leftLo, rightLo)
}
