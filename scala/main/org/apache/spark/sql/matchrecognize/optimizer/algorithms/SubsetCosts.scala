package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.optimizer.{CostModel, PatternStatistics}

/** What the subset DPs share: the variables of a bit mask, and ln PM of every mask. */
private[algorithms] object SubsetCosts {

  def setOf(vars: Seq[String], mask: Int): Set[String] =
    vars.indices.filter(i => (mask & (1 << i)) != 0).map(vars).toSet

  /** ln PM(S) for every subset S of `vars` (index = bit mask; the empty set is unused). */
  def logPMByMask(vars: Seq[String], stats: PatternStatistics): Array[Double] = {
    val full = (1 << vars.size) - 1
    val pm = new Array[Double](full + 1)
    for (mask <- 1 to full) pm(mask) = CostModel.logPM(setOf(vars, mask), stats)
    pm
  }
}
