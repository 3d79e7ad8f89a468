package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree

/**
 * The partial matches the one-pass execution keeps buffered for one partition key (or time
 * slice) at a time, as the cost model sees them: every node below the root holds the
 * partial matches of the last window (PM(node), §4.2), and every negation and Kleene
 * closure holds its rows of the last window. A closure extends only complete matches in
 * the one pass, so it multiplies no node's partial matches. `orders(node)` is how many
 * orders of the node's variables it keeps (more than one when it evaluates a conjunction,
 * `PERMUTE`).
 *
 * This is a mean over keys and windows: a burst, or a key far denser than the average,
 * buffers more, which is why the planner compares it with half the bound.
 */
object OnePassFootprint {

  def perKey(tree: JoinTree, s: PatternStatistics, orders: JoinTree => Int): Double = {
    val unextended = s.copy(kleene = Map.empty, kleeneBounds = Map.empty, kleeneBindings = Map.empty)
    val nodes = CostModel.logPartialMatches(tree, unextended).collect {
      case (n, logPm) if n ne tree => math.exp(logPm) * orders(n)
    }
    val closures = s.kleene.values.map { case (rate, _) => rate * s.window }
    val negated = s.negations.values.map(_.rate * s.window)
    nodes.sum + closures.sum + negated.sum
  }
}
