package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, JoinedRow, MutableProjection, SpecificInternalRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateFunction, DeclarativeAggregate, ImperativeAggregate}

/**
 * Runs one Spark aggregate function over the rows of a match, one row at a time, with
 * Spark's own aggregate machinery: declarative aggregates (sum, avg, min, max, count, ...)
 * through code-generated projections of their update and evaluate expressions, imperative
 * ones (collect_list, percentile, ...) through their update/eval methods.
 *
 * @param function an aggregate whose arguments refer to `rowAttributes`
 */
abstract class AggregateRunner {
  def reset(): Unit
  def update(row: InternalRow): Unit
  def result: Any
}

object AggregateRunner {
  def apply(function: AggregateFunction, rowAttributes: Seq[Attribute]): AggregateRunner =
    function match {
      case d: DeclarativeAggregate => new DeclarativeRunner(d, rowAttributes)
      case i: ImperativeAggregate => new ImperativeRunner(i, rowAttributes)
      case other => throw new IllegalStateException(s"unsupported aggregate function $other")
    }

  private final class DeclarativeRunner(f: DeclarativeAggregate, rowAttributes: Seq[Attribute])
    extends AggregateRunner {
    private val bufferAttributes = f.aggBufferAttributes
    private val buffer = new SpecificInternalRow(bufferAttributes.map(_.dataType))
    private val init = MutableProjection.create(f.initialValues, Nil)
    private val updater = MutableProjection.create(
      f.updateExpressions.map(BindReferences.bindReference(_, bufferAttributes ++ rowAttributes)),
      Nil)
    private val evaluator = MutableProjection.create(
      Seq(BindReferences.bindReference(f.evaluateExpression, bufferAttributes)), Nil)
    private val joined = new JoinedRow
    init.target(buffer)
    updater.target(buffer)

    def reset(): Unit = init(InternalRow.empty)
    def update(row: InternalRow): Unit = updater(joined(buffer, row))
    def result: Any = evaluator(buffer).get(0, f.dataType)
  }

  private final class ImperativeRunner(f0: ImperativeAggregate, rowAttributes: Seq[Attribute])
    extends AggregateRunner {
    private val f = BindReferences.bindReference(
      f0.withNewMutableAggBufferOffset(0).withNewInputAggBufferOffset(0), rowAttributes)
      .asInstanceOf[ImperativeAggregate]
    private val buffer = new SpecificInternalRow(f.aggBufferAttributes.map(_.dataType))

    def reset(): Unit = f.initialize(buffer)
    def update(row: InternalRow): Unit = f.update(buffer, row)
    def result: Any = f.eval(buffer)
  }
}
