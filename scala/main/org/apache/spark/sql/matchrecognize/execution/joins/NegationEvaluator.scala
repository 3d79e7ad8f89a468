package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.anymatch.NegationBand

/**
 * What a task of [[NegationExec]] needs to filter its partial matches by the negated rows
 * (no reference to the plan node).
 *
 * @param lower the ORDER BY position (over the left rows) after which a right row forbids
 * @param upper the position before which it forbids, absent for a trailing negation
 * @param rightOrder the ordinal of the right rows' ORDER BY position
 * @param rightHi the ordinal of the right rows' window end
 * @param condition what a forbidding right row must satisfy, over the left then the right row
 */
final case class NegationTask(
    inputs: SweepSpec,
    lower: Expression,
    upper: Option[Expression],
    rightOrder: Int,
    rightHi: Int,
    condition: Option[Expression],
    window: Long)

/**
 * The per-task part of [[NegationExec]]: the iterator of the kept partial matches, those no
 * right row of their band forbids ([[NegationBand]]) while passing the condition.
 */
class NegationEvaluatorFactory(task: NegationTask, metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new NegationEvaluator

  private class NegationEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val spec = task.inputs
      val sweep = spec.open(l, r, metrics)
      val predicate = task.condition.map(PairPredicate.create(_, spec.leftSchema, spec.rightSchema))
      val forbidden = new NegationBand(task.lower, task.upper, spec.leftSchema, task.window)
      val (lLo, rOrder, rHi) = (spec.leftLo, task.rightOrder, task.rightHi)
      val (leftRows, outRows) = (metrics("numLeftRows"), metrics("numOutputRows"))
      sweep.leftRows.filter { l =>
        leftRows += 1
        !forbidden.open(l, l.getLong(lLo)) || !sweep.band(l, forbidden.probeFrom, forbidden.probeTo).iterator.exists {
          d => forbidden.forbids(d.getLong(rOrder), d.getLong(rHi)) && predicate.forall(_.eval(l, d))
        }
      }.map { row => outRows += 1; row }
    }
  }
}
