package org.apache.spark.sql.matchrecognize.analysis

import org.apache.spark.sql.catalyst.expressions.{Expression, RuntimeReplaceable}
import org.apache.spark.sql.matchrecognize.shims.LineFeatures

/**
 * Expands the expressions Spark only rewrites in its optimizer: `RuntimeReplaceable` ones
 * (BETWEEN, NULLIF, NVL, try_* functions, count_if, ...) become their replacement, and
 * `With` (the shared operand of BETWEEN, NULLIF, ...) is inlined.
 *
 * Spark rewrites `With` by computing the shared operand in a projection below the operator
 * that holds it. For a pattern expression that is wrong: the operand may read other rows of
 * the match (`B.price BETWEEN ...`), which only the matcher can supply. Inlining evaluates
 * the operand at each use instead, which is equivalent for the deterministic expressions
 * DEFINE and MEASURES allow; equal pattern reads share one slot, so the copy costs little.
 */
object ReplaceableExpressions {

  def expand(e: Expression): Expression = e match {
    case r: RuntimeReplaceable => expand(r.replacement)
    case other => LineFeatures.inlineWith(other, expand).getOrElse(other.mapChildren(expand))
  }
}
