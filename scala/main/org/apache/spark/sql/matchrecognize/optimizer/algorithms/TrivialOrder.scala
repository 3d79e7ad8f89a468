package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.PatternStatistics

/** TRIVIAL: a left-deep tree in the pattern's own order (no statistics). */
object TrivialOrder extends JoinOrderAlgorithm {
  val name = "trivial"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = JoinTree.leftDeep(vars)
}
