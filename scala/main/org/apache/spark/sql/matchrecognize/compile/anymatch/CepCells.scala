package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Window}

/**
 * The columns each pattern variable's rows carry through a join-tree plan ("cells"): a
 * row-level expression of the input, evaluated on the variable's row or, for PREV/NEXT,
 * on its physical neighbour in the partition (LAG/LEAD over the unfiltered input, in the
 * total order of ORDER BY keys then the remaining columns).
 */
final class CepCells(
    input: Seq[Attribute],
    partitionBy: Seq[Attribute],
    orderBy: Seq[SortOrder]) {

  private val cells = mutable.LinkedHashMap.empty[String, mutable.ArrayBuffer[(Attribute, Expression)]]
  private val byKey = mutable.HashMap.empty[(String, Expression, Int), Attribute]
  private val windowed = mutable.ArrayBuffer.empty[Alias]
  private val windowByKey = mutable.HashMap.empty[(Expression, Int), Attribute]

  /** The total order of rows: ORDER BY keys, then every other orderable column. */
  val physicalOrder: Seq[SortOrder] = {
    val keys = AttributeSet(partitionBy ++ orderBy.flatMap(_.references))
    orderBy ++ input.filter(a => !keys.contains(a) && RowOrdering.isOrderable(a.dataType))
      .map(a => SortOrder(a, Ascending, NullsFirst, Seq.empty))
  }

  /** The attribute of `v`'s cell `rowExpr` at physical offset `offset`. */
  def cell(v: String, rowExpr: Expression, offset: Int): Attribute =
    byKey.getOrElseUpdate((v, rowExpr.canonicalized, offset), {
        val source = if (offset == 0) rowExpr else neighbour(rowExpr, offset)
        val list = cells.getOrElseUpdate(v, mutable.ArrayBuffer.empty)
        val name = s"$v#c${list.size}"
        val attr = AttributeReference(name, rowExpr.dataType, nullable = true)()
        list += ((attr, source))
        attr
      })

  /** Every cell of `v`: (attribute, expression over the prepared input). */
  def of(v: String): Seq[(Attribute, Expression)] = cells.getOrElse(v, Nil).toIndexedSeq

  /** A column of the prepared input, by an extra window function (ranks, row numbers). */
  def windowColumn(name: String, function: Expression, frame: WindowFrame,
      order: Seq[SortOrder]): Attribute = {
    val spec = WindowSpecDefinition(partitionBy, order, frame)
    val alias = Alias(WindowExpression(function, spec), name)()
    windowed += alias
    alias.toAttribute
  }

  /** Every window column added so far (ranks, row numbers, PREV/NEXT neighbours). */
  def windowColumns: Seq[Alias] = windowed.toIndexedSeq

  private def neighbour(rowExpr: Expression, offset: Int): Attribute =
    windowByKey.getOrElseUpdate((rowExpr.canonicalized, offset), {
        val fn = if (offset < 0) {
          Lag(rowExpr, Literal(-offset), Literal.create(null, rowExpr.dataType), ignoreNulls = false)
        } else {
          Lead(rowExpr, Literal(offset), Literal.create(null, rowExpr.dataType), ignoreNulls = false)
        }
        val spec = WindowSpecDefinition(partitionBy, physicalOrder, fn.frame)
        val alias = Alias(WindowExpression(fn, spec), s"#nav${windowed.size}")()
        windowed += alias
        alias.toAttribute
      })

  /**
   * The input with every window column added, one Window node per distinct ordering
   * (Spark evaluates window expressions of one specification together).
   */
  def prepare(child: LogicalPlan): LogicalPlan =
    windowed.groupBy(a => a.child.asInstanceOf[WindowExpression].windowSpec.orderSpec)
      .foldLeft(child) { case (plan, (order, aliases)) =>
        Window(aliases.toIndexedSeq, partitionBy, order, plan)
      }
}
