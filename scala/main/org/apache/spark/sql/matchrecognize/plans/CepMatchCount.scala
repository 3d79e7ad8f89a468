package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * Counts the matches of a SKIP TILL ANY MATCH sequence over the rows of each group (`keys`:
 * partition key and time slice), delivered in ORDER BY order, without building them (see
 * `MatchCounter`): one row per group with matches, its partition key columns and
 * `matches`. `flags(i)` tells whether a row passes the own conditions of the sequence's
 * variable i, `starts` whether the group may count a match that begins at the row (its time
 * slice owns it); `order`, `lo` and `hi` are its ORDER BY and window positions.
 */
final case class CepMatchCount(
    child: LogicalPlan,
    keys: Seq[Attribute],
    partitionBy: Seq[Attribute],
    flags: Seq[Expression],
    starts: Expression,
    sequence: CountedSequence,
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    matches: Attribute,
    description: String) extends UnaryNode {

  override def output: Seq[Attribute] = partitionBy :+ matches

  override def producedAttributes: AttributeSet = AttributeSet(matches)

  override def simpleString(maxFields: Int): String =
    s"CepMatchCount $description within $window, counted per first row without building the matches"

  override protected def withNewChildInternal(c: LogicalPlan): CepMatchCount = copy(child = c)
}
