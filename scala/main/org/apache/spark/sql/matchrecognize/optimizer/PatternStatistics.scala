package org.apache.spark.sql.matchrecognize.optimizer

/**
 * What the cost functions know about one simple sequence of a SKIP TILL ANY MATCH pattern.
 *
 * @param window        W, in units of the ORDER BY key (the same units as the rates)
 * @param rates         arrival rate of each single-row variable: rows passing its own DEFINE
 *                      conditions per unit of the ORDER BY key, per partition key on average
 * @param selectivities fraction of pairs of rows that pass the conditions between two
 *                      variables (ordering constraints included); 1 when absent
 * @param kleene        each Kleene variable's rate and the variables it must be attached
 *                      below (its neighbours and every variable its condition reads)
 * @param latencyWeight alpha of §6.1: the cost minimized is Cost^trpt + alpha * Cost^lat
 * @param last          the pattern's last single-row variable (whose row completes a match)
 * @param candidateWeight omega: the cost of testing one candidate pair in a sequence join,
 *                      relative to one partial match produced (0: the paper's cost model)
 * @param bandOrder     the single-row variables in pattern order, when the sequence join
 *                      narrows its band by them (ORDER BY positions are window positions);
 *                      empty when it tests every pair within the window
 */
final case class PatternStatistics(
    window: Double,
    rates: Map[String, Double],
    selectivities: Map[(String, String), Double] = Map.empty,
    kleene: Map[String, (Double, Set[String])] = Map.empty,
    latencyWeight: Double = 0.0,
    last: Option[String] = None,
    candidateWeight: Double = 0.0,
    bandOrder: Seq[String] = Nil) {

  /** The latency term's variable, when the weight asks for one. */
  def latencyVariable: Option[String] = if (latencyWeight > 0) last else None

  def selectivity(a: String, b: String): Double =
    selectivities.getOrElse((a, b), selectivities.getOrElse((b, a), 1.0))

  /** ln(W * r): the expected rows of `v` in one window, in log space. */
  def logWindowRows(v: String): Double = math.log(window * rates(v))

  /**
   * ln(2^(r W)): the paper's Kleene rate r' = 2^(rW)/W (§5.2) times W, i.e. the expected
   * number of subsets of a Kleene variable's rows in one window, kept in log space because
   * it overflows a double for a few hundred rows.
   */
  def logKleeneFactor(v: String): Double = kleene(v)._1 * window * math.log(2)
}
