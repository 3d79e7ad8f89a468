package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, SelectionStrategy}

/**
 * Raises, while the query is analyzed, every error a SKIP TILL ANY MATCH node would
 * otherwise meet only when planned: the pattern's normal form and the roles of its
 * variables, DEFINE and MEASURES rewritten over the variables' cells, conditions reading
 * another alternative's variables or a later closure. No plan is built. A post-hoc resolution rule (analysis itself never depends on this package),
 * registered before the streaming rule replaces nodes over streams.
 */
object CheckAnyMatchPatterns extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = {
    checkAll(plan)
    plan
  }

  private def checkAll(plan: LogicalPlan): Unit = plan.foreach { node =>
    node match {
      case m: MatchRecognize if m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) =>
        check(m)
      case _ =>
    }
    node.subqueries.foreach(checkAll)
  }

  def check(node: MatchRecognize): Unit = {
    val pattern = new CepVariables(node)
    pattern.alternatives.foreach(pattern.activeConditions)
  }
}
