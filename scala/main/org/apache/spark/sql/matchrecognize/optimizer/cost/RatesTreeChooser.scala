package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.plans.KeyTreeChooser

/**
 * Chooses a group's tree by the cost model: `stats` (the sample's, selectivities and all)
 * with the single-row variables' rates replaced by those the group's last rows show, and
 * the selectivities of `pairs` moved towards the pass rates measured on them, the more the
 * more pairs were tested ([[RatesTreeChooser.selectivities]]); each of `candidates` costed,
 * the cheapest taken (the first of equals, so tree 0 on a tie). A group running a tree
 * moves to another only when it costs `minGain` times less.
 */
final case class RatesTreeChooser(candidates: Seq[JoinTree], stats: PatternStatistics,
    prefixRows: Int, minGain: Double, override val pairs: Seq[(String, String)] = Nil) extends KeyTreeChooser {

  override val variables: Seq[String] = stats.rates.keys.toIndexedSeq.sorted

  override def trees: Seq[String] = candidates.map(_.sql)

  override def choose(admitted: Array[Long], rows: Long, span: Double, current: Int,
      tested: Array[Long], passed: Array[Long]): Int =
    if (rows < 2) math.max(current, 0)
    else {
      val s = stats.copy(rates = RatesTreeChooser.rates(variables, admitted, span),
        selectivities = RatesTreeChooser.selectivities(stats, pairs, tested, passed))
      val costs = candidates.map(CostModel.logTreeObjective(_, s))
      val best = costs.indices.minBy(costs)
      if (current < 0 || costs(best) + math.log(minGain) < costs(current)) best else current
    }
}

object RatesTreeChooser {

  /** Rows admitted per window position, half a row where none was (no rate is 0, as in sampling). */
  def rates(variables: Seq[String], admitted: Array[Long], span: Double): Map[String, Double] =
    variables.indices.map(i => variables(i) -> math.max(admitted(i).toDouble, 0.5) / math.max(span, 1.0)).toMap

  /**
   * Pairs tested that weigh as much as the selectivity planned with: a pass rate measured on
   * as many pairs counts half, so that a rate of 1 pair in 100, which a few hundred pairs
   * measure only to within a factor of 2, does not move a group between trees of about the
   * same cost, while a pair passing far more or far less than planned still shows.
   */
  val PriorPairs = 256.0

  /**
   * The selectivities of `stats` with those of the pairs measured moved towards what their
   * rows showed: a pass rate is measured on ordered pairs (an earlier row of the first
   * variable, a later one of the second), and a selectivity counts the pairs of the two
   * variables' rows in a window either way round, half of them in order; so the planned
   * selectivity s counts as PriorPairs pairs passing at 2s, added to those tested.
   */
  def selectivities(stats: PatternStatistics, pairs: Seq[(String, String)], tested: Array[Long],
      passed: Array[Long]): Map[(String, String), Double] =
    pairs.indices.filter(i => tested(i) > 0).foldLeft(stats.selectivities) { (m, i) =>
      val (a, b) = pairs(i)
      val prior = math.min(1.0, 2 * stats.selectivity(a, b))
      val inOrder = (passed(i) + prior * PriorPairs) / (tested(i) + PriorPairs)
      m - ((b, a)) + ((a, b) -> inOrder / 2)
    }
}
