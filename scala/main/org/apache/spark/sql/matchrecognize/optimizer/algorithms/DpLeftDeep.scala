package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * DP_LEFT_DEEP: the left-deep tree of least Cost_ord, by dynamic programming over subsets
 * (Selinger style; cross products allowed, as in the paper). Cost_ord is the sum of PM over
 * the prefixes, and PM of a prefix depends only on its set of variables, so the best order
 * of a set S ends with some v after the best order of S - {v}: 2^n * n steps. With a
 * latency weight, placing the last variable v after S costs alpha * W * r of every variable
 * not yet placed (they all come after it), which depends only on S + {v}, so the DP stays
 * exact; so do omega * C(S, {v}) with a candidate weight and the sorts placing v causes.
 */
object DpLeftDeep extends JoinOrderAlgorithm {
  val name = "dp_left_deep"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = {
    val n = vars.size
    require(n >= 1 && n <= 20, s"dp_left_deep plans 1 to 20 variables, not $n")
    val full = (1 << n) - 1
    val best = Array.fill(full + 1)(Double.PositiveInfinity)
    val last = Array.fill(full + 1)(-1)
    best(0) = Double.NegativeInfinity // ln 0: the empty prefix costs nothing
    val pmOf = SubsetCosts.logPMByMask(vars, stats)
    val candidates =
      if (stats.candidateWeight > 0) Some(new MaskCandidateCosts(vars, stats, pmOf)) else None
    // CostModel.logCostOrd's Kleene input: closures first covered by placing v after S.
    val kleeneNeeds = SubsetCosts.kleeneMasks(vars, stats)
    val sorts = if (stats.sortWeight > 0) Some(new MaskSortCosts(vars, stats, pmOf)) else None
    for (mask <- 1 to full) {
      val pm = pmOf(mask)
      for (i <- 0 until n if (mask & (1 << i)) != 0) {
        val latency = stats.latencyVariable match {
          case Some(v) if v == vars(i) =>
            math.log(stats.latencyWeight) + CostModel.logSum(vars.indices
                .filter(j => (mask & (1 << j)) == 0).map(j => stats.logWindowRows(vars(j))))
          case _ => Double.NegativeInfinity
        }
        val rest = mask ^ (1 << i)
        // omega * C(rest, {v}).
        val tested = candidates match {
          case Some(cc) if rest != 0 => cc(rest, 1 << i)
          case _ => Double.NegativeInfinity
        }
        val kleeneInput = {
          val here = kleeneNeeds.filter { case (needs, _) =>
            (needs & ~mask) == 0 && (needs & ~rest) != 0
          }
          if (here.isEmpty) Double.NegativeInfinity
          else pm - here.map(_._2(Integer.bitCount(mask))).sum
        }
        // CostModel.logSortCost of the join adding v (none for the first variable).
        val sorted = sorts match {
          case Some(sc) if rest != 0 => sc(rest, 1 << i, mask == full)
          case _ => Double.NegativeInfinity
        }
        val c = CostModel.logSum(Seq(best(rest), pm, latency, tested, kleeneInput, sorted))
        if (c < best(mask)) { best(mask) = c; last(mask) = i }
      }
    }
    var order = List.empty[String]
    var mask = full
    while (mask != 0) { order = vars(last(mask)) :: order; mask ^= 1 << last(mask) }
    JoinTree.leftDeep(order)
  }
}
