package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.PatternStatistics

/**
 * AUTO (the default): the exact optimum of DP_BUSHY while the pattern is small enough for
 * its 3^n steps (`dpThreshold` single-row variables), beyond it GREEDY's order improved by
 * iterative improvement for at most `budgetMillis`.
 */
final class AutoOrder(dpThreshold: Int, budgetMillis: Long) extends JoinOrderAlgorithm {
  val name = "auto"

  /** The algorithm `auto` runs for a sequence of `n` single-row variables. */
  def delegate(n: Int): String = if (n <= dpThreshold) DpBushy.name else "greedy+ii"

  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree =
    if (vars.size <= dpThreshold) DpBushy.plan(vars, stats)
    else JoinTree.leftDeep(IterativeImprovement.withinBudget(vars, stats, budgetMillis * 1000000L))
}
