package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree

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
 * @param kleeneBounds  when given, a Kleene variable's quantifier bounds (min, max), and its
 *                      factor is the expected number of bindings between its neighbours
 *                      (see [[logKleeneFactor]]) instead of the paper's 2^(rW)
 * @param kleeneBindings a Kleene variable's bindings per neighbour pair as measured in a
 *                      time-ordered sample; used instead of the Poisson expectation where
 *                      `kleeneBounds` asks for bindings (bursts of Kleene rows make the
 *                      mean of 2^k far larger than 2 to the mean k)
 * @param sortWeight    sigma: the cost of sorting one row of an intermediate result that its
 *                      consumer needs in start order and does not get so (see
 *                      [[CostModel.logSortCost]]), relative to one partial match; 0 (the
 *                      paper's model): sorts are not counted
 * @param negations     under the `spark` cost model, each negated variable's statistics
 *                      (empty under the paper's model, which leaves negation out of the cost)
 * @param spanAware     the `spark` cost model's account of a node's span (see
 *                      [[logSpanFactor]]): its partial matches are tuples in pattern order whose
 *                      span fits the window, and its Kleene bindings and negation pass rates
 *                      depend on how many single rows it binds (the more rows share one
 *                      window, the closer two neighbours lie). False: the paper's products
 * @param openingKleene the Kleene variables with no variable before them in the pattern:
 *                      their bindings may start a match earlier than its rows, so their
 *                      output is not in start order (see [[CostModel.logSortCost]])
 * @param computed      sub-trees this pattern may share with other patterns planned
 *                      together with it (in its variable names), each with the number of
 *                      patterns that pay for it: DP_BUSHY counts a sub-tree's cost divided by
 *                      that number (nothing for one computed anyway: infinitely many), so a
 *                      tree that shares it may win over the pattern's best tree alone
 */
final case class PatternStatistics(
    window: Double,
    rates: Map[String, Double],
    selectivities: Map[(String, String), Double] = Map.empty,
    kleene: Map[String, (Double, Set[String])] = Map.empty,
    latencyWeight: Double = 0.0,
    last: Option[String] = None,
    candidateWeight: Double = 0.0,
    bandOrder: Seq[String] = Nil,
    kleeneBounds: Map[String, (Int, Option[Int])] = Map.empty,
    kleeneBindings: Map[String, Double] = Map.empty,
    negations: Map[String, NegationStatistics] = Map.empty,
    sortWeight: Double = 0.0,
    spanAware: Boolean = false,
    openingKleene: Set[String] = Set.empty,
    computed: Seq[(JoinTree, Double)] = Nil) {

  /** The latency term's variable, when the weight asks for one. */
  def latencyVariable: Option[String] = if (latencyWeight > 0) last else None

  def selectivity(a: String, b: String): Double =
    selectivities.getOrElse((a, b), selectivities.getOrElse((b, a), 1.0))

  /** ln(W * r): the expected rows of `v` in one window, in log space. */
  def logWindowRows(v: String): Double = math.log(window * rates(v))

  /**
   * ln of a Kleene variable's factor in a partial match binding `m` single rows: the
   * paper's 2^(rW) (the subsets of a window's worth of rows, §5.2; without `kleeneBounds`),
   * else the expected bindings its quantifier allows between its neighbours: Poisson over
   * the gap between them ([[PatternStatistics.logExpectedBindings]]), the gap taken as a
   * third of the window, or, when `spanAware`, averaged over the gap's distribution among
   * `m` rows in one window ([[PatternStatistics.logSpanMean]]), with the rate that
   * reproduces the bindings measured between neighbour pairs when they were measured.
   * Kept in log space: it overflows a double for a few hundred rows.
   */
  def logKleeneFactor(v: String, m: Int = 2): Double = kleeneBounds.get(v) match {
    case None => kleene(v)._1 * window * math.log(2)
    case Some((min, max)) if !spanAware =>
      kleeneBindings.get(v) match {
        case Some(measured) => math.log(measured)
        case None => PatternStatistics.logExpectedBindings(kleene(v)._1 * window / 3, min, max)
      }
    case Some((min, max)) => cached(("kleene", v, m)) {
        def atRows(rows: Double, m: Int) =
          PatternStatistics.logSpanMean(m)(x => PatternStatistics.logExpectedBindings(rows * x, min, max))
        val rows = kleeneBindings.get(v) match {
          case Some(measured) => PatternStatistics.solveRising(math.log(measured))(atRows(_, 2))
          case None => kleene(v)._1 * window
        }
        atRows(rows, m)
      }
  }

  /**
   * ln of a negation's pass rate in a partial match binding `m` single rows: its pair-level
   * `passRate` as estimated, or, when `spanAware`, e^(-n g) averaged over the gap g between
   * its neighbours among `m` rows in one window, n being its rows per window (the value that
   * reproduces a measured pass rate at m = 2, else its rate times W).
   */
  def logNegationPass(d: String, m: Int): Double = {
    val n = negations(d)
    if (!spanAware) CostModel.logPass(n.passRate)
    else cached(("negation", d, m)) {
      def atRows(rows: Double, m: Int) = PatternStatistics.logSpanMean(m)(x => -rows * x)
      val rows = if (n.measured) PatternStatistics.solveRising(-CostModel.logPass(n.passRate))(r => -atRows(r, 2))
      else n.rate * window
      atRows(rows, m)
    }
  }

  /**
   * ln of the factor by which the partial matches of a node binding `m` single rows exceed
   * the paper's product (0 unless `spanAware`). The product counts m rows each within a
   * window, 1/2 per pair for the pattern order that every pair selectivity includes:
   * (W r)^m 2^-C(m,2). A join emits the tuples in pattern order that start within a window
   * and span at most W: (W r)^m / (m-1)!, 2^C(m,2) / (m-1)! times as many (2 for a pair, 273
   * for six rows: the JQPG size-7 Kleene plan measured actual / estimated partial matches
   * growing from 1 to 199 between its 2- and 6-row nodes).
   */
  def logSpanFactor(m: Int): Double =
    if (!spanAware || m < 2) 0.0
    else m * (m - 1) / 2 * math.log(2) - (2 until m).map(i => math.log(i)).sum

  private val cache = new java.util.concurrent.ConcurrentHashMap[(String, String, Int), java.lang.Double]()
  private def cached(key: (String, String, Int))(f: => Double): Double =
    cache.computeIfAbsent(key, _ => java.lang.Double.valueOf(f)).doubleValue
}

/**
 * A negated variable: its arrival rate, its pass rate (the fraction of pairs of its
 * neighbours' rows with none of its rows between them; `measured` in the sample, or the
 * Poisson expectation) and the single-row variables bound where its check is attached.
 */
final case class NegationStatistics(rate: Double, passRate: Double, needs: Set[String],
    measured: Boolean = false)

object PatternStatistics {

  private val SpanPoints = 256

  /**
   * ln E[e^f(X)] where X is the gap, as a fraction of the window, between two neighbours
   * among `m` rows of one partial match that fits the window: with the first row at 0 the
   * other m - 1 lie uniformly within the window, so each gap between consecutive rows (and
   * the room left after the last) is Beta(1, m - 1), mean 1/m; uniform for a pair. With
   * one row the room is the whole window (X = 1). Midpoint rule over the quantiles.
   */
  def logSpanMean(m: Int)(f: Double => Double): Double =
    if (m <= 1) f(1.0)
    else {
      val values = (0 until SpanPoints).map { i =>
        val u = (i + 0.5) / SpanPoints
        f(1 - math.pow(1 - u, 1.0 / (m - 1)))
      }
      val top = values.max
      if (top.isInfinite) top
      else top + math.log(values.map(v => math.exp(v - top)).sum / SpanPoints)
    }

  /** The x >= 0 with g(x) = target for a non-decreasing g (bisection; 0 or 1e4 at the ends). */
  private[optimizer] def solveRising(target: Double)(g: Double => Double): Double = {
    if (g(0.0) >= target) return 0.0
    var (lo, hi) = (0.0, 1e4)
    if (g(hi) <= target) return hi
    var i = 0
    while (i < 80) {
      val mid = if (lo == 0) hi / 1e3 else math.sqrt(lo * hi)
      if (g(mid) < target) lo = mid else hi = mid
      i += 1
    }
    if (lo == 0) hi else math.sqrt(lo * hi)
  }

  /**
   * The fraction of pairs of rows, the second within one window after the first, with no
   * row between them of a variable whose rows arrive `rowsPerWindow` to a window (Poisson):
   * what the estimator measures when it can. On a stationary stream the gap of such a pair
   * is uniform on [0, W], so with m = rowsPerWindow the expectation of e^(-m g/W) is
   * (1 - e^-m)/m (1 - m/2 as m goes to 0; about 1/m for large m, far above e^(-m/2), the
   * value at the mean gap).
   */
  def negationPassRate(rowsPerWindow: Double): Double = {
    val m = rowsPerWindow
    if (m < 1e-6) 1 - m / 2 else -math.expm1(-m) / m
  }

  /**
   * ln of the expected number of bindings of `B{min,max}` between two neighbours when the
   * B rows between them are Poisson with mean `lambda`: a set of n rows has C(n, k) subsets
   * of k rows, and E[C(N, k)] = lambda^k / k!, so the expectation is the sum of
   * lambda^k / k! for k in [min, max] = e^lambda * P(min <= N <= max). Below 1 it is a
   * filter (few neighbour pairs have a B row between them), which the paper's 2^(rW),
   * the subsets of a window's worth of rows, never is. The cost model takes lambda as r
   * times a third of the window, the mean gap between two ordered points in it.
   */
  def logExpectedBindings(lambda: Double, min: Int, max: Option[Int]): Double = {
    // P(min <= N <= max) from the Poisson terms, summed in the linear domain: lambda stays
    // small where the sum matters (a large lambda makes the probability ~1).
    // Beyond a few hundred rows e^-lambda underflows; the count is astronomical anyway.
    if (lambda > 500) return lambda
    val upper = max.getOrElse(Int.MaxValue)
    val last = math.min(upper.toLong, math.ceil(lambda + 12 * math.sqrt(lambda) + 30).toLong).toInt
    var term = math.exp(-lambda) // P(N = 0)
    var p = 0.0
    var k = 0
    while (k <= last) {
      if (k >= min) p += term
      k += 1
      term *= lambda / k
    }
    lambda + math.log(math.max(p, 1e-12))
  }
}
