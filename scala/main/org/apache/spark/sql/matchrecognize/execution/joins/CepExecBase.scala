package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, SortOrder}
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

  /** What a task needs to walk the two inputs (no reference to this plan node). */
  protected def sweepSpec: SweepSpec = {
    val Seq(leftSort, rightSort) = ownSorts
    SweepSpec(leftSpan.keys, left.output, rightSpan.keys, right.output,
      left.output.indexWhere(_.exprId == leftSpan.lo.exprId),
      right.output.indexWhere(_.exprId == rightSpan.lo.exprId), leftSort, rightSort)
  }
}

/**
 * How a task walks its two inputs: each sorted by (keys, lo), by the task itself where the
 * operator sorts it, then swept slice by slice ([[SliceSweep]]).
 *
 * @param leftKeys the partition key and slice columns of the left input, likewise `rightKeys`
 * @param leftLo the ordinal of the left rows' window start, likewise `rightLo`
 * @param leftSort the sort of the left input when the operator sorts it, likewise `rightSort`
 */
final case class SweepSpec(
    leftKeys: Seq[Attribute],
    leftSchema: Seq[Attribute],
    rightKeys: Seq[Attribute],
    rightSchema: Seq[Attribute],
    leftLo: Int,
    rightLo: Int,
    leftSort: Option[TaskSort],
    rightSort: Option[TaskSort]) {

  /**
   * The task's sweep over its inputs, which counts the right rows it reads, the time its
   * sorts take and, when the task ends, its peak buffer (the operator's shared metrics).
   */
  def open(left: Iterator[InternalRow], right: Iterator[InternalRow], metrics: Map[String, SQLMetric]): SliceSweep = {
    val (sortTime, rightRows, peak) = (metrics("sortTime"), metrics("numRightRows"), metrics("peakBufferedRows"))
    val sortedLeft = leftSort.fold(left)(_.sort(left, sortTime))
    val sortedRight = rightSort.fold(right)(_.sort(right, sortTime))
    val sweep = new SliceSweep(sortedLeft, sortedRight.map { row => rightRows += 1; row }, leftKeys, leftSchema,
      rightKeys, rightSchema, rightLo)
    // Also when the consumer stops early (a parent join may stop reading before the last row).
    TaskContext.get().addTaskCompletionListener[Unit](_ => peak.set(sweep.peakBuffered.toDouble))
    sweep
  }
}
