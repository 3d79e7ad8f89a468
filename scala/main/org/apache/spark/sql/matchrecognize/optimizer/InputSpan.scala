package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, Expression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{Max, Min}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan}

/**
 * The first and last window position of an input (one aggregate job, cached per input
 * like the statistics), which the time slices of a keyless pattern are cut by.
 */
object InputSpan {

  def reader(session: SparkSession): (LogicalPlan, Expression) => Option[(Long, Long)] =
    (input, position) =>
      StatisticsCache.getOrCompute[Option[(Long, Long)]](
        ("input span", input.canonicalized, position.canonicalized)) {
        val aggregate = Aggregate(Nil,
          Seq(
            Alias(Min(position).toAggregateExpression(), "first")(),
            Alias(Max(position).toAggregateExpression(), "last")()), input)
        val row = session.sessionState.executePlan(aggregate).executedPlan.executeCollect().head
        if (row.isNullAt(0)) None else Some((row.getLong(0), row.getLong(1)))
      }._1
}
