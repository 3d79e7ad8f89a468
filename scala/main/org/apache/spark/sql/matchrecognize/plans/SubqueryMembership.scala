package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, Predicate}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.util.{ArrayData, TypeUtils}
import org.apache.spark.sql.types.{ArrayType, DataType, StructType}

/**
 * `(values) IN (subquery)` over the subquery's rows computed once: `rows` is an array with
 * one struct per row of the subquery (a scalar subquery collecting them). SQL's three-valued
 * semantics: TRUE when some row equals the values, else NULL when some row could equal them
 * (a NULL on either side), else FALSE; FALSE for no rows at all.
 *
 * DEFINE conditions are evaluated by the matcher row by row, where Spark's own plans for
 * IN (joins) cannot run; an uncorrelated subquery's rows do not depend on the match.
 */
final case class SubqueryMembership(values: Seq[Expression], rows: Expression, text: String)
  extends Expression with Predicate with CodegenFallback {

  override def children: Seq[Expression] = values :+ rows
  override def nullable: Boolean = true
  override def sql: String = text
  override def toString: String = text

  private def fieldTypes: Seq[DataType] = rows.dataType match {
    case ArrayType(s: StructType, _) => s.fields.map(_.dataType).toIndexedSeq
    case other => throw new IllegalStateException(s"subquery rows of type $other")
  }

  @transient private lazy val orderings = fieldTypes.map(TypeUtils.getInterpretedOrdering).toArray
  @transient private lazy val types = fieldTypes.toArray
  @transient private lazy val current = new Array[Any](values.length)

  override def eval(input: InternalRow): Any = {
    val all = rows.eval(input).asInstanceOf[ArrayData]
    if (all == null || all.numElements() == 0) return false
    var i = 0
    while (i < current.length) {
      current(i) = values(i).eval(input)
      i += 1
    }
    var unknown = false
    var r = 0
    while (r < all.numElements()) {
      val row = all.getStruct(r, types.length)
      var differs = false
      var nulls = false
      var c = 0
      while (c < types.length && !differs) {
        if (current(c) == null || row.isNullAt(c)) nulls = true
        else if (!orderings(c).equiv(current(c), row.get(c, types(c)))) differs = true
        c += 1
      }
      if (!differs) {
        if (!nulls) return true
        unknown = true
      }
      r += 1
    }
    if (unknown) null else false
  }

  override protected def withNewChildrenInternal(
      newChildren: IndexedSeq[Expression]): SubqueryMembership =
    copy(values = newChildren.init, rows = newChildren.last)
}
