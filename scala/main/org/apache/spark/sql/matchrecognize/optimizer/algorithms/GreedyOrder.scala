package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * GREEDY: a left-deep tree grown one variable at a time, each time with the variable that
 * gives the fewest partial matches for the prefix so far (its rate times the selectivity
 * of its conditions with the variables already chosen). Ties go to pattern order.
 */
object GreedyOrder extends JoinOrderAlgorithm {
  val name = "greedy"
  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = {
    val chosen = scala.collection.mutable.ArrayBuffer.empty[String]
    var left = vars
    while (left.nonEmpty) {
      val next = left.minBy(v => CostModel.logPM((chosen :+ v).toSet, stats))
      chosen += next
      left = left.filterNot(_ == next)
    }
    JoinTree.leftDeep(chosen.toIndexedSeq)
  }
}
