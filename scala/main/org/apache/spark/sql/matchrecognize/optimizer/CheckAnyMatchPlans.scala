package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.compile.cep.CepPlanBuilder
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, SelectionStrategy}

/**
 * Builds the join-tree plan of every resolved SKIP TILL ANY MATCH node once while the query
 * is analyzed, and throws it away: every construct the plan cannot express is then an
 * analysis error, not a failure when the query runs. A post-hoc resolution rule, so that
 * analysis itself never depends on the planning packages, and registered before the
 * streaming rule replaces nodes over streams.
 */
object CheckAnyMatchPlans extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = {
    plan.foreachWithSubqueries {
      case m: MatchRecognize if m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) =>
        new CepPlanBuilder(m, PlanAnyMatchPatterns.settings(SQLConf.get, None)).build()
      case _ =>
    }
    plan
  }
}
