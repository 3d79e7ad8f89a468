package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{EventTimeWatermark, LogicalPlan, Project}
import org.apache.spark.sql.types.MetadataBuilder

/**
 * The input of a `transformWithState` that keeps late rows (see
 * [[MatchRecognizeProcessor]]): Spark drops every row behind the watermark before a stateful
 * operator whose input carries the watermark's mark on a column, so the mark comes off the
 * event-time column (a new column of the same values) and the operator decides lateness
 * itself. The watermark itself still reaches the operator: it is the query's, not a column's.
 */
private[streaming] object LateRowsInput {

  /** Marks the column so that no rule takes the projection for a plain rename and drops it. */
  private val unmarkedKey = "spark.matchRecognize.watermarkUnmarked"

  /** `child` with its watermark-marked columns unmarked, and what each column now is. */
  def unmarked(child: LogicalPlan): (LogicalPlan, Attribute => Attribute) = {
    val replaced: Map[Attribute, NamedExpression] = child.output.collect {
      case a if a.metadata.contains(EventTimeWatermark.delayKey) =>
        val metadata = new MetadataBuilder().withMetadata(a.metadata)
          .remove(EventTimeWatermark.delayKey).putBoolean(unmarkedKey, true).build()
        a -> Alias(a, a.name)(explicitMetadata = Some(metadata))
    }.toMap
    val byId = replaced.map { case (a, e) => a.exprId -> e.toAttribute }
    val projected =
      if (replaced.isEmpty) child else Project(child.output.map(a => replaced.getOrElse(a, a)), child)
    (projected, (a: Attribute) => byId.getOrElse(a.exprId, a))
  }
}
