package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.plans.KeyTreeChooser

/**
 * Chooses a group's tree by the cost model: `stats` (the sample's, selectivities and all)
 * with the single-row variables' rates replaced by those the group's last rows show, and
 * the selectivities of `pairs` moved towards the pass rates measured on them where those differ
 * from the planned ones beyond chance ([[RatesTreeChooser.selectivities]]); each of `candidates` costed,
 * the cheapest taken (the first of equals, so tree 0 on a tie). A group running a tree
 * moves to another only when it costs `minGain` times less.
 */
final case class RatesTreeChooser(candidates: Seq[JoinTree], stats: PatternStatistics,
    prefixRows: Int, minGain: Double, override val pairs: Seq[(String, String)] = Nil) extends KeyTreeChooser {

  override val variables: Seq[String] = stats.rates.keys.toIndexedSeq.sorted

  override def trees: Seq[String] = candidates.map(_.sql)

  override def choose(admitted: Array[Long], rows: Long, span: Double, current: Int,
      tested: Array[Long], passed: Array[Long], estimates: Array[Double]): Int =
    if (rows < 2) math.max(current, 0)
    else {
      val s = stats.copy(rates = RatesTreeChooser.rates(variables, admitted, span),
        selectivities = RatesTreeChooser.selectivities(stats, pairs, tested, passed, estimates))
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
   * How sure a measured pass rate must be before it moves the planned one: the planned
   * rate is kept while it lies within this many standard errors of the measured one (a
   * Wilson interval, about 1 in 370 of true rates falls outside it), and taken to the
   * nearer end of the interval when it lies outside. A rate of 1 pair in 100 measured on a
   * few hundred pairs, whose passes vary by a factor of 2 from one choice to the next, so
   * keeps the plan's figure; a pair planned at 1 in 20 that passes all of 64 pairs tested is
   * taken at 0.87 or more.
   */
  val Confidence = 3.0

  /**
   * The pass rates `passed` of `tested` pairs may have, at [[Confidence]] standard errors
   * (Wilson's score interval, which stays within 0 and 1 and is not empty at 0 or all).
   */
  def passInterval(passed: Long, tested: Long): (Double, Double) =
    if (tested <= 0) (0.0, 1.0)
    else {
      val n = tested.toDouble
      val p = passed.toDouble / n
      val z2 = Confidence * Confidence
      val centre = (p + z2 / (2 * n)) / (1 + z2 / n)
      val half = Confidence * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
      (math.max(0.0, centre - half), math.min(1.0, centre + half))
    }

  /**
   * The selectivities of `stats` with those of the pairs measured moved to what their rows
   * showed: a pass rate is measured on ordered pairs (an earlier row of the first variable,
   * a later one of the second), and a selectivity counts the pairs of the two variables'
   * rows in a window either way round, half of them in order; so the planned selectivity s
   * is a pass rate of 2s. A pair's rate is the one its group's last choice took
   * (`estimates(i)`, the planned 2s at first), kept where the measured [[passInterval]]
   * holds it and otherwise moved to the interval's nearer end, and written back to
   * `estimates` (when it holds the pairs). Starting from the last rate rather than the
   * planned one keeps a group from moving between two trees that cost about the same on
   * noise: a pair passing 0 of 256 then 2 of 256 keeps the rate the first gave it, where
   * starting afresh took each interval's own end, two fifths higher the second time.
   */
  def selectivities(stats: PatternStatistics, pairs: Seq[(String, String)], tested: Array[Long],
      passed: Array[Long], estimates: Array[Double] = Array.emptyDoubleArray): Map[(String, String), Double] =
    pairs.indices.filter(i => tested(i) > 0).foldLeft(stats.selectivities) { (m, i) =>
      val (a, b) = pairs(i)
      val kept = if (i < estimates.length) estimates(i) else Double.NaN
      val last = if (kept.isNaN) math.min(1.0, 2 * stats.selectivity(a, b)) else kept
      val (lo, hi) = passInterval(passed(i), tested(i))
      val inOrder = math.min(math.max(last, lo), hi)
      if (i < estimates.length) estimates(i) = inOrder
      m - ((b, a)) + ((a, b) -> inOrder / 2)
    }
}
