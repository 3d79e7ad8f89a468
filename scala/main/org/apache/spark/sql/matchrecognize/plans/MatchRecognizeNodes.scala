package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeSet, Expression, NamedExpression, SortOrder}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * `input MATCH_RECOGNIZE (...)` as parsed. Its expressions are Spark expressions with
 * parse-level markers ([[VariableScope]], [[NavigationCall]], ...) inside; Spark's analyzer
 * resolves columns, functions and types within them, and `ResolveMatchRecognize` then
 * replaces this node with a resolved [[MatchRecognize]].
 */
final case class UnresolvedMatchRecognize(
    partitionBy: Seq[Expression],
    orderBy: Seq[SortOrder],
    measures: Seq[NamedExpression],
    defines: Seq[Expression],
    options: MatchRecognizeOptions,
    child: LogicalPlan,
    /**
     * Measures with subqueries that depend on the match, computed by a projection above
     * the node (keyed by their position among the measures); the hidden measures they read
     * are named with `HiddenMeasures.Prefix`, except the last `hiddenMeasures` ones, which
     * carry the names of input columns. Not expressions of this node.
     */
    liftedMeasures: Seq[(Int, Alias)] = Nil,
    hiddenMeasures: Int = 0) extends UnaryNode {

  override def output: Seq[Attribute] = Nil
  override lazy val resolved: Boolean = false

  override def simpleString(maxFields: Int): String =
    s"UnresolvedMatchRecognize ${options.pattern.sql}"

  override protected def withNewChildInternal(newChild: LogicalPlan): UnresolvedMatchRecognize =
    copy(child = newChild)
}

/**
 * A resolved MATCH_RECOGNIZE. Partition and order keys are attributes of `child` (the
 * analyzer projects computed keys below this node). `measures` and `defines` hold canonical
 * pattern expressions ([[PatternNavigation]], [[PatternAggregate]], [[MatchNumber]]);
 * `defines` is aligned with `options.definedVariables`.
 *
 * Output layout (SQL:2016): ONE ROW PER MATCH gives the partition columns then the
 * measures; ALL ROWS PER MATCH gives the partition columns, the order columns, the
 * measures, then the remaining input columns in input order.
 */
final case class MatchRecognize(
    partitionBy: Seq[Attribute],
    orderBy: Seq[SortOrder],
    /** Measure expressions (no aliases: Spark's CleanupAliases would strip them). */
    measures: Seq[Expression],
    /** The measure columns, aligned with `measures`; produced by this node. */
    measureOutput: Seq[Attribute],
    defines: Seq[Expression],
    options: MatchRecognizeOptions,
    /** Input columns to leave out of the ALL ROWS output (keys computed by the analyzer). */
    hiddenInput: Seq[Attribute],
    child: LogicalPlan) extends UnaryNode {

  /**
   * The key columns of the ALL ROWS PER MATCH layout: each PARTITION BY key, then each
   * ORDER BY key, as often as the clause names it (`ORDER BY ts, ts` lists `ts` twice, as
   * does a key in both PARTITION BY and ORDER BY, as in Trino).
   */
  def keyColumns: Seq[Attribute] =
    partitionBy ++ orderBy.map(_.child).collect { case a: Attribute => a }

  /**
   * The node's columns: the layout with each column once. A key the clause repeats is
   * repeated by a projection above the node ([[layout]]), so that no plan below it carries
   * one attribute twice.
   */
  override def output: Seq[Attribute] = layout(measureOutput).map(_.toAttribute).distinct

  /** The standard's column layout with the given measure columns, repeated keys included. */
  def layout(measureColumns: Seq[NamedExpression]): Seq[NamedExpression] =
    options.rowsPerMatch match {
      case RowsPerMatch.OneRow => partitionBy ++ measureColumns
      case _ =>
        val keys = keyColumns
        val keySet = AttributeSet(keys ++ hiddenInput)
        keys ++ measureColumns ++ child.output.filterNot(keySet.contains)
    }

  override def producedAttributes: AttributeSet = AttributeSet(measureOutput)

  /**
   * The input columns the matcher needs. Ties on the ORDER BY keys are broken by the other
   * input columns so that results never depend on shuffle order; with ONE ROW PER MATCH only
   * the columns the clause reads can tell tied rows apart in the result (rows equal in all
   * of them give the same matches and measures in either order), so the others need not be
   * read, shuffled or sorted. ALL ROWS PER MATCH outputs every column and keeps them.
   */
  def neededInput: Seq[Attribute] =
    if (options.rowsPerMatch != RowsPerMatch.OneRow) child.output
    else {
      val read = AttributeSet((partitionBy ++ orderBy ++ measures ++ defines).flatMap(_.references))
      val kept = child.output.filter(read.contains)
      if (kept.isEmpty) child.output else kept
    }

  // Ties on the ORDER BY keys are broken by the remaining columns, so every input column
  // takes part in the result even when no measure names it.
  override lazy val references: AttributeSet = AttributeSet(child.output) ++
    AttributeSet((partitionBy ++ orderBy ++ measures ++ defines).flatMap(_.references))

  override def simpleString(maxFields: Int): String = {
    val parts = Seq(
      if (partitionBy.nonEmpty) Some(partitionBy.mkString("PARTITION BY ", ", ", "")) else None,
      Some(orderBy.map(_.sql).mkString("ORDER BY ", ", ", "")),
      Some(options.rowsPerMatch.sql),
      options.afterMatchSkip.map(_.sql),
      options.strategy.map(_.sql),
      Some(s"PATTERN (${options.pattern.sql})"),
      options.within.map(_.sql),
      options.prefilter.map(d => s"prefilter: ${d.note}")).flatten
    s"MatchRecognize ${parts.mkString(", ")}"
  }

  override protected def withNewChildInternal(newChild: LogicalPlan): MatchRecognize =
    copy(child = newChild)
}
