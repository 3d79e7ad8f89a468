package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import scala.collection.mutable

import org.apache.spark.sql.matchrecognize.compile.anymatch.{JoinLeaf, JoinNode, JoinTree}
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * DP_BUSHY: the tree of any shape with the least Cost_tree, by dynamic programming over
 * subsets: the best tree over S joins the best trees of some split of S into two non-empty
 * parts, and adds PM(S), which does not depend on the split. 3^n steps (cross products
 * allowed, as in the paper). A latency weight adds, at each node on the last variable's
 * path, alpha * PM of the other side, which again depends only on the split. A candidate
 * weight adds omega * C(left, right), which also depends on which part is the join's right
 * side: both are tried; so does a sort weight (the rows sorted because of the join). A
 * sub-tree shared with other patterns (`stats.computed`) is the plan of its variables when
 * its share of the cost is below their best tree's.
 */
object DpBushy extends JoinOrderAlgorithm {
  val name = "dp_bushy"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = {
    val n = vars.size
    require(n >= 1 && n <= 14, s"dp_bushy plans 1 to 14 variables, not $n")
    val full = (1 << n) - 1
    val best = Array.fill(full + 1)(Double.PositiveInfinity)
    val split = Array.fill(full + 1)(0) // the left part of the best split
    val pmOf = SubsetCosts.logPMByMask(vars, stats)
    val candidates =
      if (stats.candidateWeight > 0) Some(new MaskCandidateCosts(vars, stats, pmOf)) else None
    // CostModel.logKleeneInput over masks: the closures a split attaches (needs covered by
    // the set, by neither part) and ln PM of the set without their factors.
    val kleeneNeeds = SubsetCosts.kleeneMasks(vars, stats)
    def kleeneInputOf(mask: Int, sub: Int): Double = {
      val rest = mask ^ sub
      val here = kleeneNeeds.filter { case (needs, _) =>
        (needs & ~mask) == 0 && (needs & ~sub) != 0 && (needs & ~rest) != 0
      }
      if (here.isEmpty) Double.NegativeInfinity
      else pmOf(mask) - here.map(_._2(Integer.bitCount(mask))).sum
    }
    // CostModel.logSortCost over masks: a node's cost includes the sorts its output causes
    // (its parent's, except at the root), so a subtree's best cost does not depend on where
    // it is used.
    val sorts = if (stats.sortWeight > 0) Some(new MaskSortCosts(vars, stats, pmOf)) else None
    val latencyBit = stats.latencyVariable.map(v => 1 << vars.indexOf(v)).filter(_ > 0)
    val logAlpha = math.log(stats.latencyWeight)
    // Sub-trees shared with other patterns: their cost split among the patterns that pay
    // for it, nothing (nor for their own nodes) when computed anyway.
    def maskOf(t: JoinTree): Int = t.variables.foldLeft(0)((m, v) => m | (1 << vars.indexOf(v)))
    val shared: Map[Int, (JoinTree, Double)] = stats.computed.filter(_._1.variables.subsetOf(vars.toSet))
      .flatMap { case (t, payers) =>
        if (payers.isPosInfinity) t.nodes.collect { case j: JoinNode => j -> Double.NegativeInfinity }
        else Seq(t -> (CostModel.logCostTree(t, stats) - math.log(payers)))
      }.groupBy { case (t, _) => maskOf(t) }.map { case (m, ts) => m -> ts.minBy(_._2) }
    val forced = mutable.HashMap.empty[Int, JoinTree]
    for (mask <- 1 to full) {
      val pm = pmOf(mask)
      if (Integer.bitCount(mask) == 1) best(mask) = pm
      else {
        // Each split once: the left part holds the lowest variable of the set.
        val low = mask & -mask
        var sub = (mask - 1) & mask
        while (sub > 0) {
          if ((sub & low) != 0) {
            // CostModel.logLatencyStep: alpha * PM of the side without the last variable.
            val latency = latencyBit.filter(b => (mask & b) != 0).map { b =>
              logAlpha + pmOf(if ((sub & b) != 0) mask ^ sub else sub)
            }.getOrElse(Double.NegativeInfinity)
            val kleeneInput = if (kleeneNeeds.isEmpty) Double.NegativeInfinity
            else kleeneInputOf(mask, sub)
            val c = CostModel.logSum(Seq(best(sub), best(mask ^ sub), pm, latency, kleeneInput))
            if (candidates.isEmpty && sorts.isEmpty) {
              if (c < best(mask)) { best(mask) = c; split(mask) = sub }
            } else {
              // The candidates tested and the rows sorted depend on which part is the left.
              def oriented(l: Int, r: Int): Double = {
                var o = c
                candidates.foreach(cc => o = CostModel.logAdd(o, cc(l, r)))
                sorts.foreach(sc => o = CostModel.logAdd(o, sc(l, r, mask == full)))
                o
              }
              val asLeft = oriented(sub, mask ^ sub)
              val asRight = oriented(mask ^ sub, sub)
              if (asLeft < best(mask)) { best(mask) = asLeft; split(mask) = sub }
              if (asRight < best(mask)) { best(mask) = asRight; split(mask) = mask ^ sub }
            }
          }
          sub = (sub - 1) & mask
        }
      }
      shared.get(mask).foreach { case (t, c) =>
        if (c < best(mask)) { best(mask) = c; forced(mask) = t }
      }
    }
    def build(mask: Int): JoinTree =
      if (forced.contains(mask)) forced(mask)
      else if (Integer.bitCount(mask) == 1) JoinLeaf(vars(Integer.numberOfTrailingZeros(mask)))
      else JoinNode(build(split(mask)), build(mask ^ split(mask)))
    build(full)
  }
}
