package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.plans.KeyTreeChooser

/**
 * Chooses a group's tree by the cost model: `stats` (the sample's, selectivities and all)
 * with the single-row variables' rates replaced by those the group's last rows show, and
 * the selectivities of `pairs` by the pass rates measured on them where enough pairs were
 * tested; each of `candidates` costed, the cheapest taken (the first of equals, so tree 0 on
 * a tie). A group running a tree moves to another only when it costs `minGain` times less.
 */
final case class RatesTreeChooser(candidates: Seq[JoinTree], stats: PatternStatistics,
    prefixRows: Int, minGain: Double, override val pairs: Seq[(String, String)] = Nil) extends KeyTreeChooser {

  override val variables: Seq[String] = stats.rates.keys.toIndexedSeq.sorted

  override def trees: Seq[String] = candidates.map(_.sql)

  override def choose(admitted: Array[Long], rows: Long, span: Double, current: Int,
      passRates: Array[Double]): Int =
    if (rows < 2) math.max(current, 0)
    else {
      val s = stats.copy(rates = RatesTreeChooser.rates(variables, admitted, span),
        selectivities = RatesTreeChooser.selectivities(stats.selectivities, pairs, passRates))
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
   * `known` with the pairs measured replaced: a pass rate is measured on ordered pairs (an
   * earlier row of the first variable, a later one of the second), and a selectivity counts
   * the pairs of the two variables' rows in a window either way round, half of them in order.
   */
  def selectivities(known: Map[(String, String), Double], pairs: Seq[(String, String)],
      passRates: Array[Double]): Map[(String, String), Double] =
    pairs.indices.filterNot(i => passRates(i).isNaN).foldLeft(known) { (m, i) =>
      val (a, b) = pairs(i)
      m - ((b, a)) + ((a, b) -> passRates(i) / 2)
    }
}
