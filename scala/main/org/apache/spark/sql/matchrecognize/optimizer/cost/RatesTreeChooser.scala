package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.plans.KeyTreeChooser

/**
 * Chooses a group's tree by the cost model: `stats` (the sample's, selectivities and all)
 * with the single-row variables' rates replaced by those the group's last rows show, each
 * of `candidates` costed, the cheapest taken (the first of equals, so tree 0 on a tie). A
 * group running a tree moves to another only when it costs `minGain` times less.
 */
final case class RatesTreeChooser(candidates: Seq[JoinTree], stats: PatternStatistics,
    prefixRows: Int, minGain: Double) extends KeyTreeChooser {

  override val variables: Seq[String] = stats.rates.keys.toIndexedSeq.sorted

  override def trees: Seq[String] = candidates.map(_.sql)

  override def choose(admitted: Array[Long], rows: Long, span: Double, current: Int): Int =
    if (rows < 2) math.max(current, 0)
    else {
      val s = stats.copy(rates = RatesTreeChooser.rates(variables, admitted, span))
      val costs = candidates.map(CostModel.logTreeObjective(_, s))
      val best = costs.indices.minBy(costs)
      if (current < 0 || costs(best) + math.log(minGain) < costs(current)) best else current
    }
}

object RatesTreeChooser {

  /** Rows admitted per window position, half a row where none was (no rate is 0, as in sampling). */
  def rates(variables: Seq[String], admitted: Array[Long], span: Double): Map[String, Double] =
    variables.indices.map(i => variables(i) -> math.max(admitted(i).toDouble, 0.5) / math.max(span, 1.0)).toMap
}
