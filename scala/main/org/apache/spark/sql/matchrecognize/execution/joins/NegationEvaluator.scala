package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.anymatch.NegationBand

/**
 * The per-task part of [[NegationExec]]: what a task needs to filter its partial matches by
 * the negated rows (no reference to the plan node), and the iterator of the kept ones: those
 * no right row of their band forbids ([[NegationBand]]) while passing the condition.
 */
class NegationEvaluatorFactory(
    lower: Expression,
    upper: Option[Expression],
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
      val forbidden = new NegationBand(lower, upper, leftSchema, w)
      val sweep = spec.open(lIter, rIter)
      val (leftRows, outRows) = (m("numLeftRows"), m("numOutputRows"))
      val kept = lIter.filter { l =>
        leftRows += 1
        !forbidden.open(l, l.getLong(lLo)) || !sweep.band(l, forbidden.probeFrom, forbidden.probeTo).iterator.exists {
          d => forbidden.forbids(d.getLong(rOrder), d.getLong(rHi)) && predicate.forall(_.eval(l, d))
        }
      }
      kept.map { row => outRows += 1; row } ++ {
        m("peakBufferedRows").set(sweep.peakBuffered.toDouble)
        Iterator.empty
      }
    }
  }
}
