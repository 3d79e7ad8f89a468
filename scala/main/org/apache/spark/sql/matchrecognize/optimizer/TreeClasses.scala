package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.StatisticsEstimator.GroupRates
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * Trees per key: from the rates of the sample's groups (runs of a key's rows within a block),
 * the few trees that together cost least for them, each group costed under its own rates by
 * the tree it would pick. Starting from the tree chosen for the average, trees are added
 * greedily (each group's best tree is a candidate) while one lowers the predicted total; the
 * set is kept when it divides the total by at least `minGain`. When the sample shows a key's
 * rates moving (one variable's rate differing [[DriftFactor]] times between runs of the same
 * key), keys may move to profiles the sample did not catch: the set is then completed, up to
 * `maxTrees`, with the tree for the average in which one variable is rare, variable by
 * variable (hedges, chosen by no sampled group).
 */
object TreeClasses {

  /**
   * At most this many groups are planned on their own (spread evenly over the sample, so
   * over its keys and times), within the time given; every group is costed.
   */
  val PlannedGroups = 32

  /** A variable's rate moving by this factor between runs of one key's rows is drift. */
  val DriftFactor = 4.0

  /** How much rarer than on average a variable is in a hedge's profile. */
  val RareFactor = 100.0

  /**
   * The trees beside `average` (those sampled groups pick, in order of their share, then the
   * hedges), the predicted total cost of the sampled groups with one tree and with these,
   * and each tree's share of the sampled rows (0 for a hedge).
   */
  final case class Classes(others: Seq[JoinTree], logCostOne: Double, logCostPerKey: Double,
      shares: Seq[Double]) {
    def hedges: Int = shares.count(_ == 0.0)
  }

  def choose(average: JoinTree, stats: PatternStatistics, groups: Seq[GroupRates],
      plan: PatternStatistics => JoinTree, maxTrees: Int, minGain: Double,
      planningMillis: Long = Long.MaxValue): Option[Classes] = {
    val vars = stats.rates.keySet
    val usable = groups.filter(g => vars.subsetOf(g.rates.keySet))
    if (maxTrees < 2 || usable.size < 2) return None
    def statsOf(g: GroupRates) = stats.copy(rates = g.rates.filter { case (v, _) => vars(v) })
    val step = math.max(1, usable.size / PlannedGroups)
    val deadline = System.nanoTime() + math.min(planningMillis, Long.MaxValue / 2000000) * 1000000
    val planned = usable.indices.by(step).take(PlannedGroups).iterator
      .takeWhile(_ => System.nanoTime() < deadline).map(i => plan(statsOf(usable(i)))).toIndexedSeq
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
    val gains = chosen.size > 1 && one - best >= math.log(minGain)
    // Each group's pick among the chosen trees (the first of equals), weighed by its rows.
    val kept = if (gains) chosen else Seq(0)
    val picks = cost.map(c => kept.minBy(c(_)))
    val rows = usable.map(_.rows.toDouble).sum
    val share = kept.map(t => usable.indices.filter(picks(_) == t).map(usable(_).rows).sum / rows)
    val sampled = kept.tail.zip(share.tail).filter(_._2 > 0).sortBy(-_._2).map(o => candidates(o._1) -> o._2)
    val hedges =
      if (!drifts(usable, vars)) Nil
      else {
        val have = (average +: sampled.map(_._1)).toSet
        vars.toIndexedSeq.sorted.iterator
          .takeWhile(_ => System.nanoTime() < deadline)
          .map(v => plan(stats.copy(rates = stats.rates.updated(v, stats.rates(v) / RareFactor))))
          .filterNot(have).toIndexedSeq.distinct.take(maxTrees - 1 - sampled.size)
      }
    val others = sampled ++ hedges.map(_ -> 0.0)
    if (others.isEmpty) None
    else Some(Classes(others.map(_._1), one, if (gains) best else one, share.head +: others.map(_._2)))
  }

  /** Whether some key's runs of rows show one variable's rate moving by [[DriftFactor]]. */
  private def drifts(groups: Seq[GroupRates], vars: Set[String]): Boolean =
    groups.groupBy(_.key).values.exists { runs =>
      runs.size > 1 && vars.exists { v =>
        val rates = runs.map(_.rates(v))
        rates.max >= DriftFactor * rates.min
      }
    }
}
