package org.apache.spark.sql.matchrecognize.execution.anymatch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, GenericInternalRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.matchrecognize.execution.AggregateRunner
import org.apache.spark.sql.matchrecognize.plans.KleeneOutput

/**
 * What a match learns of a Kleene closure's binding, written the same way by the joins and
 * the one-pass tree: one value per [[KleeneOutput]] (an aggregate over the chosen rows, a
 * cell of the n-th row from the first or the last, or the chosen rows' cells as an array of
 * structs), then the ORDER BY positions of the first and the last chosen row (NULL when it
 * chose none). `rowSchema` is the schema of the closure's rows.
 */
final class ClosureOutputs(outputs: Seq[KleeneOutput], rowSchema: Seq[Attribute]) {

  private def ordinal(cell: Attribute): Int = rowSchema.indexWhere(_.exprId == cell.exprId)
  private val values: Array[ClosureBindings[_] => Any] = outputs.map {
    case KleeneOutput.Aggregate(_, f) =>
      val runner = AggregateRunner(f, rowSchema)
      (b: ClosureBindings[_]) => {
        runner.reset()
        for (k <- 0 until b.chosenCount) runner.update(b.chosenRow(k))
        runner.result
      }
    case KleeneOutput.Value(_, cell, fromFirst, n) =>
      val at = ordinal(cell)
      (b: ClosureBindings[_]) => {
        val k = if (fromFirst) n else b.chosenCount - 1 - n
        if (k < 0 || k >= b.chosenCount) null else b.chosenRow(k).get(at, cell.dataType)
      }
    case KleeneOutput.Rows(_, cells) =>
      val read = cells.map(c => (ordinal(c), c.dataType))
      (b: ClosureBindings[_]) =>
        new GenericArrayData(Array.tabulate[Any](b.chosenCount) { k =>
          val row = b.chosenRow(k)
          new GenericInternalRow(read.map { case (at, t) => row.get(at, t) }.toArray[Any])
        })
  }.toArray

  /** How many fields [[write]] fills: the outputs, then the first and last positions. */
  val width: Int = values.length + 2

  /** Writes the current binding of `b` into fields 0 until [[width]] of `target`. */
  def write(b: ClosureBindings[_], target: InternalRow): Unit = {
    val n = b.chosenCount
    for (i <- values.indices) target.update(i, values(i)(b))
    target.update(values.length, if (n == 0) null else b.chosenOrder(0))
    target.update(values.length + 1, if (n == 0) null else b.chosenOrder(n - 1))
  }
}
