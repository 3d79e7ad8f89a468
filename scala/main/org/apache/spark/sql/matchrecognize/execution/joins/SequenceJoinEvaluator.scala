package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * What a task of [[SequenceJoinExec]] needs to join its two inputs (no reference to the
 * plan node).
 *
 * @param leftHi the ordinal of the left rows' window end, likewise `rightHi`
 * @param condition what a pair must satisfy besides the window and the band bounds
 * @param rightAfter ordinals of the left positions (ORDER BY) the right match must start after
 * @param rightBefore ordinals of the left positions the right match must start before
 * @param projection the output row, over the left then the right row
 */
final case class SequenceJoinTask(
    inputs: SweepSpec,
    leftHi: Int,
    rightHi: Int,
    window: Long,
    condition: Expression,
    rightAfter: Seq[Int],
    rightBefore: Seq[Int],
    projection: Seq[Expression])

/** The per-task part of [[SequenceJoinExec]]: the iterator of the joined partial matches. */
class SequenceJoinEvaluatorFactory(task: SequenceJoinTask, metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new SequenceJoinEvaluator

  private class SequenceJoinEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val spec = task.inputs
      val sweep = spec.open(l, r, metrics)
      val lIter = sweep.leftRows
      // Read per row: locals rather than the task's fields.
      val (lLo, lHi, rLo, rHi, w) = (spec.leftLo, task.leftHi, spec.rightLo, task.rightHi, task.window)
      val after = task.rightAfter.toArray
      val before = task.rightBefore.toArray
      // Often the band bounds are the whole condition (order only, no DEFINE between them).
      val predicate =
        if (task.condition == Literal.TrueLiteral) null
        else PairPredicate.create(task.condition, spec.leftSchema, spec.rightSchema)
      val project = PairProjection.create(task.projection, spec.leftSchema, spec.rightSchema)
      // Metrics are looked up once: a map lookup per row costs more than the join itself.
      val leftRows = metrics("numLeftRows")
      val outRows = metrics("numOutputRows")
      val testedMetric = metrics("numCandidatesTested")
      // Rows come out one at a time from the band of the current left row, without copying:
      // the band only moves when the next left row is taken, after these are consumed.
      new Iterator[InternalRow] {
        private var l: InternalRow = _
        private var lo, hi = 0L
        private var band: BandBuffer = _
        private var i, end = 0 // the rows of `band` still to test for `l`
        private var nextRow: InternalRow = _
        private var finished = false
        // Added to its metric once, when the task ends: a parent join may stop reading this
        // one before its last row.
        private var tested = 0L
        TaskContext.get().addTaskCompletionListener[Unit](_ => testedMetric += tested)

        private def advance(): Unit = {
          while (nextRow == null && !finished) {
            if (i < end) {
              val r = band(i)
              i += 1
              tested += 1
              val span = math.max(hi, r.getLong(rHi)) - math.min(lo, r.getLong(rLo))
              if (span <= w && (predicate == null || predicate.eval(l, r))) nextRow = project(l, r)
            } else if (lIter.hasNext) {
              l = lIter.next()
              leftRows += 1
              lo = l.getLong(lLo)
              hi = l.getLong(lHi)
              band = sweep.band(l, lo - w, lo + w)
              // A right match starts no earlier than the left one's last row minus the
              // window (the buffer keeps lo - w: left rows come in lo order, not hi).
              var from = hi - w
              var to = lo + w
              var k = 0
              while (k < after.length) { from = math.max(from, l.getLong(after(k)) + 1); k += 1 }
              k = 0
              while (k < before.length) { to = math.min(to, l.getLong(before(k)) - 1); k += 1 }
              i = band.firstAtLeast(from)
              end = if (to < from) i else band.endAtMost(to)
            } else finished = true
          }
        }

        override def hasNext: Boolean = { advance(); nextRow != null }

        override def next(): InternalRow = {
          advance()
          if (nextRow == null) throw new NoSuchElementException
          val row = nextRow
          nextRow = null
          outRows += 1
          row
        }
      }
    }
  }
}
