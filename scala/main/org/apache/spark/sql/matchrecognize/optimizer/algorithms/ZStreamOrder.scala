package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.{JoinLeaf, JoinNode, JoinTree}
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * ZSTREAM: the cheapest tree (Cost_tree) whose leaves, read left to right, keep a given
 * order — the pattern's own for `zstream` — by dynamic programming over intervals of that
 * order (ZStream's plan search): n^3 steps instead of the 3^n of dp_bushy.
 */
object ZStreamOrder extends JoinOrderAlgorithm {
  val name = "zstream"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = over(vars, stats)

  /** The best tree over `order` that keeps its leaf order. */
  def over(order: Seq[String], stats: PatternStatistics): JoinTree = {
    val n = order.size
    require(n >= 1, "zstream needs at least one variable")
    val best = Array.fill(n, n)(Double.PositiveInfinity)
    val cut = Array.fill(n, n)(-1)
    for (len <- 1 to n; i <- 0 to n - len) {
      val j = i + len - 1
      val pm = CostModel.logPM(order.slice(i, j + 1).toSet, stats)
      if (len == 1) best(i)(j) = pm
      else for (k <- i until j) {
        val (l, r) = (order.slice(i, k + 1).toSet, order.slice(k + 1, j + 1).toSet)
        val latency = CostModel.logAdd(CostModel.logLatencyStep(l, r, stats),
          CostModel.logLatencyStep(r, l, stats))
        val c = CostModel.logSum(Seq(best(i)(k), best(k + 1)(j), pm, latency,
            CostModel.logCandidateCost(l, r, stats), CostModel.logKleeneInput(l, r, stats),
            CostModel.logSortCost(l, r, i == 0 && j == n - 1, stats)))
        if (c < best(i)(j)) { best(i)(j) = c; cut(i)(j) = k }
      }
    }
    def build(i: Int, j: Int): JoinTree =
      if (i == j) JoinLeaf(order(i)) else JoinNode(build(i, cut(i)(j)), build(cut(i)(j) + 1, j))
    build(0, n - 1)
  }
}

/** ZSTREAM_ORD: the leaf order of GREEDY, then ZSTREAM's interval search over it. */
object ZStreamOrdOrder extends JoinOrderAlgorithm {
  val name = "zstream_ord"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree =
    ZStreamOrder.over(GreedyOrder.plan(vars, stats).leaves, stats)
}
