package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.PatternStatistics

/**
 * EFREQ: the rarest variable first — a left-deep tree in ascending arrival rate (ties in
 * pattern order). Ignores the conditions between variables.
 */
object EfreqOrder extends JoinOrderAlgorithm {
  val name = "efreq"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree =
    JoinTree.leftDeep(vars.zipWithIndex.sortBy { case (v, i) => (stats.rates(v), i) }.map(_._1))
}
