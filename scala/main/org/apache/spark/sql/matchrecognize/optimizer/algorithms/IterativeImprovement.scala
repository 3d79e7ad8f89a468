package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import scala.util.Random

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/**
 * Iterative improvement over left-deep orders (Cost_ord): from a start order, apply the
 * first move that lowers the cost — a swap of two variables, or a cycle of three — until
 * no move does (a local minimum; sampled for long orders, see `improve`); repeated from
 * several starts, keeping the best. Seeded, so a plan never changes between runs.
 */
abstract class IterativeImprovement(val name: String, restarts: Int, seed: Long)
  extends JoinOrderAlgorithm {

  /** The start order of restart `i`. */
  protected def start(vars: Seq[String], stats: PatternStatistics, i: Int, rng: Random): Seq[String]

  def plan(vars: Seq[String], stats: PatternStatistics): JoinTree = {
    val rng = new Random(seed)
    val results = (0 until restarts).map(i =>
      IterativeImprovement.improve(start(vars, stats, i, rng).toArray, stats, rng))
    JoinTree.leftDeep(results.minBy(o => CostModel.logOrdObjective(o, stats)))
  }
}

object IterativeImprovement {

  /**
   * GREEDY's order improved towards a local minimum, then seeded random restarts, for as
   * long as `budgetNanos` allows (never worse than GREEDY): `auto` beyond its DP size.
   */
  def withinBudget(vars: Seq[String], stats: PatternStatistics, budgetNanos: Long,
      seed: Long = 17L): Seq[String] = {
    val deadline = System.nanoTime() + budgetNanos
    val rng = new Random(seed)
    var best = improve(GreedyOrder.plan(vars, stats).leaves.toArray, stats, rng, deadline)
    var bestCost = CostModel.logOrdObjective(best, stats)
    while (System.nanoTime() < deadline) {
      val o = improve(rng.shuffle(vars).toArray, stats, rng, deadline)
      val c = CostModel.logOrdObjective(o, stats)
      if (c < bestCost) { best = o; bestCost = c }
    }
    best
  }

  /** Orders up to this size try their whole neighbourhood; longer ones sample it. */
  val ExhaustiveUpTo = 6

  /**
   * First-improvement descent with swap and 3-cycle moves, to a local minimum. Up to
   * [[ExhaustiveUpTo]] variables every move is tried before the order counts as a local
   * minimum; beyond, moves are drawn at random (`rng`) and n^2 draws in a row without a
   * gain end the descent (the neighbourhood has n^3 moves of O(n^3) cost each, too many to
   * try at 20 variables; this is the classic randomized form of the algorithm).
   */
  def improve(order: Array[String], stats: PatternStatistics,
      rng: Random = new Random(17L), deadline: Long = Long.MaxValue): Seq[String] = {
    val n = order.length
    var current = CostModel.logOrdObjective(order.toIndexedSeq, stats)
    def swap(i: Int, j: Int): Unit = { val t = order(i); order(i) = order(j); order(j) = t }

    /** Applies the move; keeps it if it lowers the cost, else undoes it. */
    def tryMove(i: Int, j: Int, k: Int): Boolean = {
      if (k < 0) swap(i, j) else { swap(i, j); swap(j, k) }
      val c = CostModel.logOrdObjective(order.toIndexedSeq, stats)
      if (c < current - 1e-12) { current = c; true }
      else {
        if (k < 0) swap(i, j) else { swap(j, k); swap(i, j) }
        false
      }
    }
    if (n < 2) return order.toIndexedSeq
    if (n <= ExhaustiveUpTo) {
      val moves = (for (i <- 0 until n; j <- i + 1 until n) yield (i, j, -1)) ++
        (for (i <- 0 until n; j <- 0 until n; k <- 0 until n if i != j && j != k && i != k)
          yield (i, j, k))
      while (moves.exists { case (i, j, k) => tryMove(i, j, k) }) {}
    } else {
      var misses = 0
      while (misses < n * n && System.nanoTime() < deadline) {
        val i = rng.nextInt(n)
        var j = rng.nextInt(n - 1); if (j >= i) j += 1
        val k = if (rng.nextBoolean()) -1
        else {
          var x = rng.nextInt(n); while (x == i || x == j) x = rng.nextInt(n); x
        }
        if (tryMove(i, j, k)) misses = 0 else misses += 1
      }
    }
    order.toIndexedSeq
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
