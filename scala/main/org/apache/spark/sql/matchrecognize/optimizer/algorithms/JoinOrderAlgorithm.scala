package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.PatternStatistics

/**
 * A plan-generation algorithm of the JQPG paper: a join tree over the single-row
 * variables of one simple sequence, chosen with the statistics of `PatternStatistics`.
 * Every algorithm returns a tree over exactly `vars`; the operators accept any tree.
 */
trait JoinOrderAlgorithm {
  def name: String
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree
}

object JoinOrderAlgorithm {
  val all: Seq[JoinOrderAlgorithm] = Seq(TrivialOrder, EfreqOrder, GreedyOrder, DpLeftDeep,
    DpBushy, ZStreamOrder, ZStreamOrdOrder, IterativeImprovementRandom,
    IterativeImprovementGreedy)

  def named(name: String): Option[JoinOrderAlgorithm] = all.find(_.name == name)
}
