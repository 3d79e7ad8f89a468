package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import scala.util.Random

import org.apache.spark.sql.matchrecognize.compile.cep.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.{CostModel, PatternStatistics}

/**
 * Iterative improvement over left-deep orders (Cost_ord): from a start order, apply the
 * first move that lowers the cost — a swap of two variables, or a cycle of three — until
 * no move does (a local minimum); repeated from several starts, keeping the best. Seeded,
 * so a plan never changes between runs.
 */
abstract class IterativeImprovement(val name: String, restarts: Int, seed: Long)
  extends JoinOrderAlgorithm {

  /** The start order of restart `i`. */
  protected def start(vars: Seq[String], stats: PatternStatistics, i: Int, rng: Random): Seq[String]

  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = {
    val rng = new Random(seed)
    val results = (0 until restarts).map(i => improve(start(vars, stats, i, rng).toArray, stats))
    JoinTree.leftDeep(results.minBy(o => CostModel.logCostOrd(o, stats)))
  }

  private def improve(order: Array[String], stats: PatternStatistics): Seq[String] = {
    def cost = CostModel.logCostOrd(order.toSeq, stats)
    var current = cost
    var improved = true
    val n = order.length
    def tryMove(apply: () => Unit, undo: () => Unit): Boolean = {
      apply()
      val c = cost
      if (c < current - 1e-12) { current = c; true } else { undo(); false }
    }
    def swap(i: Int, j: Int): Unit = { val t = order(i); order(i) = order(j); order(j) = t }
    while (improved) {
      improved = false
      // Swaps.
      for (i <- 0 until n; j <- i + 1 until n if !improved) {
        improved = tryMove(() => swap(i, j), () => swap(i, j))
      }
      // Cycles of three: i -> j -> k -> i.
      for (i <- 0 until n; j <- 0 until n; k <- 0 until n
           if !improved && i != j && j != k && i != k) {
        improved = tryMove(() => { swap(i, j); swap(j, k) }, () => { swap(j, k); swap(i, j) })
      }
    }
    order.toSeq
  }
}

/** II_RANDOM: iterative improvement from seeded random orders. */
object IterativeImprovementRandom extends IterativeImprovement("ii_random", restarts = 8,
    seed = 17L) {
  protected def start(vars: Seq[String], stats: PatternStatistics, i: Int, rng: Random): Seq[String] =
    rng.shuffle(vars)
}

/** II_GREEDY: iterative improvement from GREEDY's order (then from random ones). */
object IterativeImprovementGreedy extends IterativeImprovement("ii_greedy", restarts = 4,
    seed = 17L) {
  protected def start(vars: Seq[String], stats: PatternStatistics, i: Int, rng: Random): Seq[String] =
    if (i == 0) GreedyOrder.plan(vars, stats).leaves else rng.shuffle(vars)
}
