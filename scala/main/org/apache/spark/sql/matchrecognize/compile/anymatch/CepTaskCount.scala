package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project, RepartitionByExpression, Window}
import org.apache.spark.sql.catalyst.plans.logical.statsEstimation.EstimationUtils
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf

/**
 * How the input of a SKIP TILL ANY MATCH plan is spread over tasks: the number of
 * partitions of its one shuffle, and the length of the time slices (in window units) that
 * the rows of one partition key are cut into. `reason` says why, for EXPLAIN.
 */
final case class CepTaskCount(tasks: Int, sliceLength: Long, reason: String)

/**
 * Chooses the [[CepTaskCount]] of an input from its estimated size. `span`, when given,
 * reads the first and last window position of the input (one aggregate job); it is asked
 * only for a keyless pattern spread over several tasks, whose slices are its only
 * parallelism.
 */
final class CepTaskChooser(conf: SQLConf, span: Option[(LogicalPlan, Expression) => Option[(Long, Long)]]) {

  private val maxTasks = math.max(1, conf.numShufflePartitions)
  private val rowsPerTask = conf.getConf(MatchRecognizeConf.TARGET_ROWS_PER_TASK)

  /**
   * @param input    the pattern's input (its statistics give the rows)
   * @param position a row's first window position over `input`, a time (for the span);
   *                 None when positions are row numbers, which span the input's rows
   * @param window   the window in position units
   * @param keyless  no PARTITION BY
   */
  def choose(input: LogicalPlan, position: Option[Expression], window: Long,
      keyless: Boolean): CepTaskCount = {
    val longest = CepTaskChooser.longestSlice(window)
    if (rowsPerTask <= 0) {
      return CepTaskCount(maxTasks, longest, s"spark.sql.shuffle.partitions ($maxTasks tasks)")
    }
    val rows = CepTaskChooser.estimatedRows(input)
    val byRows = ((rows + rowsPerTask - 1) / rowsPerTask).max(BigInt(1)).min(BigInt(maxTasks)).toInt
    val rowsNote = s"about $rows input rows at $rowsPerTask per task"
    if (!keyless || byRows == 1) return CepTaskCount(byRows, longest, s"$byRows task(s): $rowsNote")
    val spanned = position match {
      case Some(p) => span.flatMap(_(input, p)).map { case (first, last) => last - first }
      case None => Some(rows.min(BigInt(Long.MaxValue)).toLong)
    }
    spanned match {
      case None => CepTaskCount(byRows, longest, s"$byRows task(s): $rowsNote")
      case Some(s) =>
        val (tasks, length) = CepTaskChooser.slicing(s, window, byRows)
        CepTaskCount(tasks, length,
          s"$tasks task(s): $rowsNote, " +
            s"${s / length + 1} time slice(s) of $length")
    }
  }
}

object CepTaskChooser {

  /** Slices this long against the window copy a row into two slices only rarely. */
  def longestSlice(window: Long): Long = math.max(1L, window) * 16

  /** Slices shorter than this copy too many rows into two slices to pay. */
  private def shortestSlice(window: Long): Long = math.max(1L, window) * 4

  /** A keyless pattern wants at least this many slices per task (slices are hashed to tasks). */
  private val SlicesPerTask = 4

  /**
   * For a keyless input spanning `span` positions: the slice length and the number of tasks,
   * so that each task gets a few slices to balance the hashing, no task is left without a
   * slice, and slices stay long against the window.
   */
  def slicing(span: Long, window: Long, tasks: Int): (Int, Long) = {
    val longest = longestSlice(window)
    val wanted = math.max(1L, span / (tasks.toLong * SlicesPerTask))
    val length = math.min(longest, math.max(shortestSlice(window), wanted))
    val slices = span / length + 1
    (math.min(tasks.toLong, slices).toInt.max(1), length)
  }

  /**
   * The input's rows from Spark's statistics: the row count, or its size over a row's.
   * Without cost-based optimization, projections and filters keep only a size; the row
   * count below them bounds their rows and is closer than a size over a guessed row width.
   */
  def estimatedRows(input: LogicalPlan): BigInt = {
    def counted(p: LogicalPlan): Option[BigInt] = p.stats.rowCount.orElse(p match {
      case Project(_, child) => counted(child)
      case Filter(_, child) => counted(child)
      case w: Window => counted(w.child)
      case _ => None
    })
    counted(input).getOrElse {
      input.stats.sizeInBytes / EstimationUtils.getSizePerRow(input.output).max(BigInt(1))
    }
  }

  /** Marks the shuffle of a plan's input, so that a cached input under it is read once. */
  val SharedInputShuffle: TreeNodeTag[Unit] = TreeNodeTag[Unit]("matchRecognize.sharedInputShuffle")

  /**
   * The one shuffle of a plan's input: by `keys` into `count.tasks` partitions. Its number
   * is explicit because adaptive execution coalesces its shuffles by bytes, and the work
   * of the operators above it grows with the partial matches they build, not with the
   * bytes they read; the count is already sized from the input.
   */
  def exchange(keys: Seq[Expression], child: LogicalPlan, count: CepTaskCount): LogicalPlan = {
    val shuffle = RepartitionByExpression(keys, child, Some(count.tasks))
    shuffle.setTagValue(SharedInputShuffle, ())
    shuffle
  }
}
