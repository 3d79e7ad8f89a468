package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, Literal}
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * The per-task part of [[SequenceJoinExec]]: what a task needs to join its two inputs (no
 * reference to the plan node), and the iterator of the joined partial matches.
 */
class SequenceJoinEvaluatorFactory(
    leftSchema: Seq[Attribute],
    rightSchema: Seq[Attribute],
    lLo: Int,
    lHi: Int,
    rLo: Int,
    rHi: Int,
    projectionExprs: Seq[Expression],
    w: Long,
    m: Map[String, SQLMetric],
    spec: SweepSpec,
    cond: Expression,
    after: Array[Int],
    before: Array[Int],
    sortInputs: (Iterator[InternalRow], Iterator[InternalRow]) => (Iterator[InternalRow], Iterator[InternalRow]))
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new SequenceJoinEvaluator

  private class SequenceJoinEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val (lIter, rIter) = sortInputs(l, r)
      // Often the band bounds are the whole condition (order only, no DEFINE between them).
      val predicate =
        if (cond == Literal.TrueLiteral) null else PairPredicate.create(cond, leftSchema, rightSchema)
      if (predicate != null) predicate.initialize(TaskContext.getPartitionId())
      val project = PairProjection.create(projectionExprs, leftSchema, rightSchema)
      project.initialize(TaskContext.getPartitionId())
      val sweep = spec.open(lIter, rIter)
      // Metrics are looked up once: a map lookup per row costs more than the join itself.
      val leftRows = m("numLeftRows")
      val outRows = m("numOutputRows")
      val peak = m("peakBufferedRows")
      val testedMetric = m("numCandidatesTested")
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
            } else {
              finished = true
              peak.set(sweep.peakBuffered.toDouble)
            }
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
