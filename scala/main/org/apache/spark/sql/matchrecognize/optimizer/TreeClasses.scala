package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.StatisticsEstimator.GroupRates
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * Trees per key: from the rates of the sample's groups (keys within a block), the few trees
 * that together cost least for them, each group costed under its own rates by the tree it
 * would pick. Starting from the tree chosen for the average, trees are added greedily (each
 * group's best tree is a candidate) while one lowers the predicted total; the set is kept
 * when it divides the total by at least `minGain`.
 */
object TreeClasses {

  /** At most this many groups are planned on their own (the largest); every group is costed. */
  val PlannedGroups = 16

  /**
   * The trees beside `average` (in order of their share), the predicted total cost of the
   * sampled groups with one tree and with these, and each tree's share of the sampled rows.
   */
  final case class Classes(others: Seq[JoinTree], logCostOne: Double, logCostPerKey: Double,
      shares: Seq[Double])

  def choose(average: JoinTree, stats: PatternStatistics, groups: Seq[GroupRates],
      plan: PatternStatistics => JoinTree, maxTrees: Int, minGain: Double): Option[Classes] = {
    val vars = stats.rates.keySet
    val usable = groups.filter(g => vars.subsetOf(g.rates.keySet))
    if (maxTrees < 2 || usable.size < 2) return None
    def statsOf(g: GroupRates) = stats.copy(rates = g.rates.filter { case (v, _) => vars(v) })
    val planned = usable.sortBy(-_.rows).take(PlannedGroups).map(g => plan(statsOf(g)))
    val candidates = (average +: planned).distinct
    // cost(g)(t): ln of group g's cost under candidate t, weighted by its rows.
    val cost = usable.map { g =>
      val st = statsOf(g)
      candidates.map(t => math.log(g.rows.toDouble) + CostModel.logTreeObjective(t, st)).toArray
    }
    def total(chosen: Seq[Int]): Double = CostModel.logSum(cost.map(c => chosen.map(c(_)).min))
    var chosen = Seq(0)
    var best = total(chosen)
    val one = best
    var improved = true
    while (improved && chosen.size < maxTrees) {
      val (t, tc) = candidates.indices.filterNot(chosen.contains).map(t => t -> total(chosen :+ t))
        .foldLeft((-1, best)) { case (acc, (t, c)) => if (c < acc._2 - 1e-9) (t, c) else acc }
      improved = t >= 0
      if (improved) { chosen :+= t; best = tc }
    }
    if (chosen.size < 2 || one - best < math.log(minGain)) None
    else {
      // Each group's pick among the chosen trees (the first of equals), weighed by its rows.
      val picks = cost.map(c => chosen.minBy(c(_)))
      val rows = usable.map(_.rows.toDouble).sum
      val share = chosen.map(t => usable.indices.filter(picks(_) == t).map(usable(_).rows).sum / rows)
      val others = chosen.tail.zip(share.tail).filter(_._2 > 0).sortBy(-_._2)
      if (others.isEmpty) None
      else Some(Classes(others.map(o => candidates(o._1)), one, best, share.head +: others.map(_._2)))
    }
  }
}
