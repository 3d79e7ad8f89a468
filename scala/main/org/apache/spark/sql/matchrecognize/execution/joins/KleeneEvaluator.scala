package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, GenericInternalRow, JoinedRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.PartitionKeyText
import org.apache.spark.sql.matchrecognize.execution.anymatch.{ClosureBindings, ClosureOutputs}
import org.apache.spark.sql.matchrecognize.plans.KleeneOutput

/**
 * What a task of [[KleeneExec]] needs to extend its partial matches by the Kleene closure
 * (no reference to the plan node); the closure's part as [[ClosureBindings]] takes it.
 *
 * @param closure the closure as errors name it, e.g. `B+`
 * @param partitionKeys the left rows' partition key columns, which errors name
 * @param leftHi the ordinal of the left rows' window end
 * @param rightOrder the ordinal of the right rows' ORDER BY position, likewise `rightHi` of their window end
 * @param projection the output row, over the left row, the closure's outputs, then the new span
 */
final case class KleeneTask(
    inputs: SweepSpec,
    closure: String,
    min: Int,
    max: Option[Int],
    lower: Option[Expression],
    upper: Option[Expression],
    rowCondition: Option[Expression],
    previous: Seq[(Attribute, Attribute)],
    outputs: Seq[KleeneOutput],
    partitionKeys: Seq[Attribute],
    leftHi: Int,
    rightOrder: Int,
    rightHi: Int,
    projection: Seq[Expression],
    window: Long,
    maxBindings: Long)

/**
 * The per-task part of [[KleeneExec]]: the iterator of the extended partial matches. A left
 * row's bindings are [[ClosureBindings]]'s over the right rows of its band, each written as
 * the left row, the closure's [[ClosureOutputs]], then the new span.
 */
class KleeneEvaluatorFactory(task: KleeneTask, metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new KleeneEvaluator

  private class KleeneEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val Seq(l, r) = inputs
      val spec = task.inputs
      val sweep = spec.open(l, r, metrics)
      val (lLo, lHi, rOrder, rLo, rHi, w) =
        (spec.leftLo, task.leftHi, task.rightOrder, spec.rightLo, task.rightHi, task.window)
      val bindings = new ClosureBindings[UnsafeRow](task.closure, task.min, task.max, task.lower, task.upper, w,
        task.maxBindings, task.rowCondition, spec.leftSchema, spec.rightSchema, task.previous) {
        override protected def orderOf(c: UnsafeRow): Long = c.getLong(rOrder)
        override protected def loOf(c: UnsafeRow): Long = c.getLong(rLo)
        override protected def hiOf(c: UnsafeRow): Long = c.getLong(rHi)
        override protected def rowOf(c: UnsafeRow): InternalRow = c
      }
      val outputs = new ClosureOutputs(task.outputs, spec.rightSchema)
      val finalProjection = UnsafeProjection.create(task.projection)
      val keyOf = UnsafeProjection.create(task.partitionKeys, spec.leftSchema)
      val extra = new GenericInternalRow(outputs.width + 2) // the closure's fields, then the new span
      val joined = new JoinedRow
      val (leftRows, outRows) = (metrics("numLeftRows"), metrics("numOutputRows"))
      sweep.leftRows.flatMap { left =>
        leftRows += 1
        val lo = left.getLong(lLo)
        bindings.open(left, lo, left.getLong(lHi))
        sweep.band(left, lo - w, lo + w).iterator.foreach(bindings.offer)
        val describeKey = () => PartitionKeyText.inOneSlice(task.partitionKeys, keyOf(left))
        val results = scala.collection.mutable.ArrayBuffer.empty[InternalRow]
        bindings.foreachBinding(describeKey) { (bindingLo, bindingHi) =>
          outputs.write(bindings, extra)
          extra.update(outputs.width, bindingLo)
          extra.update(outputs.width + 1, bindingHi)
          results += finalProjection(joined(left, extra)).copy()
        }
        outRows += results.size
        results.iterator
      }
    }
  }
}
