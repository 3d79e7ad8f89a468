package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, GenericInternalRow, JoinedRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.anymatch.{ClosureBindings, ClosureOutputs, SliceKeyText}
import org.apache.spark.sql.matchrecognize.plans.KleeneOutput

/**
 * The per-task part of [[KleeneExec]]: what a task needs to extend its partial matches by
 * the Kleene closure (no reference to the plan node), and the iterator of the extended ones:
 * a left row's bindings are [[ClosureBindings]]'s over the right rows of its band, each
 * written as the left row, the closure's [[ClosureOutputs]], then the new span.
 */
class KleeneEvaluatorFactory(
    closure: String,
    lower: Option[Expression],
    upper: Option[Expression],
    lLo: Int,
    lHi: Int,
    rOrder: Int,
    rLo: Int,
    rHi: Int,
    leftSchema: Seq[Attribute],
    partitionKeys: Seq[Attribute],
    project: Seq[Expression],
    rightSchema: Seq[Attribute],
    outs: Seq[KleeneOutput],
    cond: Option[Expression],
    previous: Seq[(Attribute, Attribute)],
    lo0: Int,
    hi0: Option[Int],
    w: Long,
    limit: Long,
    m: Map[String, SQLMetric],
    spec: SweepSpec,
    sortInputs: (Iterator[InternalRow], Iterator[InternalRow]) => (Iterator[InternalRow], Iterator[InternalRow]))
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new KleeneEvaluator

  private class KleeneEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val (lIter, rIter) = sortInputs(l, r)
      val bindings = new ClosureBindings[UnsafeRow](closure, lo0, hi0, lower, upper, w, limit, cond, leftSchema,
        rightSchema, previous) {
        override protected def orderOf(c: UnsafeRow): Long = c.getLong(rOrder)
        override protected def loOf(c: UnsafeRow): Long = c.getLong(rLo)
        override protected def hiOf(c: UnsafeRow): Long = c.getLong(rHi)
        override protected def rowOf(c: UnsafeRow): InternalRow = c
      }
      val outputs = new ClosureOutputs(outs, rightSchema)
      val finalProjection = UnsafeProjection.create(project)
      val keyOf = UnsafeProjection.create(partitionKeys, leftSchema)
      val extra = new GenericInternalRow(outputs.width + 2) // the closure's fields, then the new span
      val joined = new JoinedRow
      val sweep = spec.open(lIter, rIter)
      val (leftRows, outRows) = (m("numLeftRows"), m("numOutputRows"))
      lIter.flatMap { left =>
        leftRows += 1
        val lo = left.getLong(lLo)
        bindings.open(left, lo, left.getLong(lHi))
        sweep.band(left, lo - w, lo + w).iterator.foreach(bindings.offer)
        val describeKey = () => SliceKeyText.of(partitionKeys, keyOf(left))
        val results = scala.collection.mutable.ArrayBuffer.empty[InternalRow]
        bindings.foreachBinding(describeKey) { (bindingLo, bindingHi) =>
          outputs.write(bindings, extra)
          extra.update(outputs.width, bindingLo)
          extra.update(outputs.width + 1, bindingHi)
          results += finalProjection(joined(left, extra)).copy()
        }
        outRows += results.size
        results.iterator
      } ++ {
        m("peakBufferedRows").set(sweep.peakBuffered.toDouble)
        Iterator.empty
      }
    }
  }
}
