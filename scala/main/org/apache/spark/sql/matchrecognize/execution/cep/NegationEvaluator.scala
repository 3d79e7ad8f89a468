package org.apache.spark.sql.matchrecognize.execution.cep

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, UnsafeProjection}
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * The per-task part of [[NegationExec]]: what a task needs to filter its partial matches by
 * the negated rows (no reference to the plan node), and the iterator of the kept ones.
 */
class NegationEvaluatorFactory(
    boundExprs: Seq[Expression],
    hasUpper: Boolean,
    lLo: Int,
    rOrder: Int,
    rHi: Int,
    leftSchema: Seq[Attribute],
    rightSchema: Seq[Attribute],
    cond: Option[Expression],
    w: Long,
    m: Map[String, SQLMetric],
    spec: SweepSpec,
    sortInputs: (Iterator[InternalRow], Iterator[InternalRow]) => (Iterator[InternalRow], Iterator[InternalRow]))
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new NegationEvaluator

  private class NegationEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val (lIter, rIter) = sortInputs(l, r)
      val predicate = cond.map { c =>
        val p = PairPredicate.create(c, leftSchema, rightSchema)
        p.initialize(TaskContext.getPartitionId())
        p
      }
      val bounds = UnsafeProjection.create(boundExprs)
      val sweep = spec.open(lIter, rIter)
      val leftRows = m("numLeftRows")
      val outRows = m("numOutputRows")
      val kept = lIter.filter { l =>
        leftRows += 1
        val lo = l.getLong(lLo)
        val b = bounds(l)
        if (b.isNullAt(0) || (hasUpper && b.isNullAt(1))) true
        else {
          val from = b.getLong(0)
          val until = if (hasUpper) b.getLong(1) else Long.MaxValue
          val band = sweep.band(l, lo, lo + w)
          var negated = false
          val it = band.iterator
          while (!negated && it.hasNext) {
            val d = it.next()
            val o = d.getLong(rOrder)
            negated = o > from && o < until && (hasUpper || d.getLong(rHi) <= lo + w) &&
              predicate.forall(_.eval(l, d))
          }
          !negated
        }
      }
      kept.map { row => outRows += 1; row } ++ {
        m("peakBufferedRows").set(sweep.peakBuffered.toDouble)
        Iterator.empty
      }
    }
  }
}
