package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * Counts the matches of a SKIP TILL ANY MATCH sequence over the rows of each group (`keys`:
 * partition key and time slice), delivered in ORDER BY order, without building them (see
 * `MatchCounter`): one row per group with matches, its partition key columns and
 * `matches`; with `startColumns` (columns of a match's first row, computed from that row),
 * one row per first row with matches instead, with those columns between. `flags(i)` tells whether a row passes the own conditions of the sequence's
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
    description: String,
    firstRow: FirstRowColumns = FirstRowColumns(Nil)) extends UnaryNode {

  def startColumns: Seq[NamedExpression] = firstRow.columns

  override def output: Seq[Attribute] = (partitionBy ++ startColumns.map(_.toAttribute)) :+ matches

  override def producedAttributes: AttributeSet = AttributeSet(startColumns.map(_.toAttribute) :+ matches)

  // The first row's columns are read too, out of sight of column pruning (see FirstRowColumns).
  override def references: AttributeSet = child.outputSet

  override def simpleString(maxFields: Int): String =
    s"CepMatchCount $description within $window, counted per first row without building the matches" +
      (if (startColumns.isEmpty) "" else s", by ${startColumns.map(_.name).mkString(", ")} of the first row")

  override protected def withNewChildInternal(c: LogicalPlan): CepMatchCount = copy(child = c)
}

/**
 * The columns [[CepMatchCount]] computes from a match's first row, kept out of reach of the
 * optimizer's expression rules (which would take their aliases apart): they are the
 * node's output columns, named and numbered as the measures they replace.
 */
final case class FirstRowColumns(columns: Seq[NamedExpression])
