package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, SortOrder}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}
import org.apache.spark.sql.matchrecognize.shims.StatefulNodeOfLine
import org.apache.spark.sql.streaming.OutputMode

/**
 * `input MATCH_RECOGNIZE (<before> PATTERNS FROM <table> <after>)` as parsed: one pattern per
 * row of `table`, each with the clauses `before` and `after` (the text of the statement)
 * around its own PATTERN, SUBSET and DEFINE. Resolved by `ResolvePatternTables`.
 */
final case class UnresolvedPatternTable(
    before: String,
    table: Seq[String],
    after: String,
    child: LogicalPlan) extends UnaryNode {

  override def output: Seq[Attribute] = Nil
  override lazy val resolved: Boolean = false

  override def simpleString(maxFields: Int): String =
    s"UnresolvedPatternTable ${table.mkString(".")}"

  override protected def withNewChildInternal(newChild: LogicalPlan): UnresolvedPatternTable =
    copy(child = newChild)
}

/**
 * The patterns of a table over a streaming input: read again when each micro-batch is
 * planned (the optimizer replaces this node by Spark's stateful operator running the
 * patterns of that moment, see `streaming.PlanPatternTableStreams`). `output` is the
 * pattern's name then the columns every pattern's MATCH_RECOGNIZE gives.
 */
final case class PatternTableStream(
    before: String,
    table: Seq[String],
    after: String,
    output: Seq[Attribute],
    /** The shared PARTITION BY and ORDER BY: every pattern's, on columns of `child`. */
    partitionBy: Seq[Attribute],
    orderBy: Seq[SortOrder],
    child: LogicalPlan,
    /**
     * Set when `writeStream.start()` runs the stream in `transformWithState`: the output mode
     * and whether the trigger is Real-Time Mode. Otherwise `flatMapGroupsWithState`.
     */
    transformWithState: Option[(OutputMode, Boolean)] = None) extends UnaryNode with StatefulNodeOfLine {

  /** The event-time column: the first ORDER BY key (checked when the stream is planned). */
  def eventTime: Attribute = orderBy.head.child.asInstanceOf[Attribute]

  override def producedAttributes: AttributeSet = AttributeSet(output)

  // The table's patterns may read any input column, and are only known when a micro-batch
  // is planned: no column of the input may be pruned before.
  override lazy val references: AttributeSet = AttributeSet(child.output)

  override def simpleString(maxFields: Int): String =
    s"PatternTableStream ${table.mkString(".")}"

  override protected def withNewChildInternal(newChild: LogicalPlan): PatternTableStream =
    copy(child = newChild)
}
