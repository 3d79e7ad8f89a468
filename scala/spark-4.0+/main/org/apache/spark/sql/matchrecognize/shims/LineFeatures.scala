package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.analysis.SQLFunctionExpression
import org.apache.spark.sql.catalyst.expressions.{CollationKey, CommonExpressionRef, Expression, With}
import org.apache.spark.sql.catalyst.trees.TreePattern.COMMON_EXPR_REF
import org.apache.spark.sql.types.{DataType, StringType, VariantType}

/** Types and expressions Spark has from 4.0 on: VARIANT, collations, `With`, SQL UDFs. */
object LineFeatures {

  def isVariant(t: DataType): Boolean = t.isInstanceOf[VariantType]

  /** Whether two strings of the type are equal exactly when their bytes are. */
  def binaryEquality(s: StringType): Boolean = s.supportsBinaryEquality

  /** An expression whose bytes are equal exactly when the collated strings of `e` are. */
  def collationKey(e: Expression): Expression = CollationKey(e)

  /**
   * `w` with its shared operands inlined at each use, each expanded by `expand` first;
   * None when `w` is not a `With`.
   */
  def inlineWith(w: Expression, expand: Expression => Expression): Option[Expression] = w match {
    case w: With =>
      val shared = w.defs.map(d => d.id -> expand(d.child)).toMap
      Some(expand(w.child).transformUpWithPruning(_.containsPattern(COMMON_EXPR_REF)) {
        case ref: CommonExpressionRef if shared.contains(ref.id) => shared(ref.id)
      })
    case _ => None
  }

  /** The name of the SQL UDF (`CREATE FUNCTION ... RETURN`) `e` calls, if it calls one. */
  def sqlUdfName(e: Expression): Option[String] = e match {
    case f: SQLFunctionExpression => Some(f.name)
    case _ => None
  }
}
