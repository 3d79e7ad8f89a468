package org.apache.spark.sql.matchrecognize.optimizer.cost

import org.apache.spark.sql.matchrecognize.compile.anymatch.{JoinLeaf, JoinNode, JoinTree}

/**
 * The JQPG paper's cost functions over evaluation plans (§4.1, §4.2, §6.1).
 *
 * The paper counts partial matches that coexist in memory within a window. In Spark the
 * plan's cost is the size of the intermediate results its joins produce, shuffle and sort:
 * each partial match of a node is one row of that node's output. Summing the partial
 * matches of every node therefore models the rows the plan materializes, which is what
 * the reorderer minimizes. All values are computed in log space (Kleene factors are
 * exponential) and compared as logs; `exp` of a cost may be infinite.
 *
 * Our sequence join also pays for the pairs it tests that fail (see [[logCandidates]]); a
 * positive `candidateWeight` (omega) adds omega times those tests at every join, to both
 * Cost_ord and Cost_tree. With omega = 0 the costs are exactly the paper's.
 */
object CostModel {

  /** ln(e^a + e^b) without overflow. */
  private[optimizer] def logAdd(a: Double, b: Double): Double =
    if (a == Double.NegativeInfinity) b
    else if (b == Double.NegativeInfinity) a
    else math.max(a, b) + math.log1p(math.exp(-math.abs(a - b)))

  private[optimizer] def logSum(xs: Iterable[Double]): Double = xs.foldLeft(Double.NegativeInfinity)(logAdd)

  /**
   * ln PM(S): the partial matches of a plan node that binds the variables `vars`. It does
   * not depend on how the node was built: W * r of every variable, the selectivity of every
   * pair inside, the subset count of every Kleene variable whose needs `vars` covers
   * (it is attached at or below this node), and the pass rate of every negation whose
   * needs it covers (its check is attached at or below; `spark` cost model only); with
   * `spanAware` statistics, the span factor, and the Kleene and negation factors taken for
   * |S| rows in one window (a function of S still: a closure attached lower binds the
   * same rows, and the joins above keep the partial matches whose rows lie closer).
   */
  def logPM(vars: Set[String], s: PatternStatistics): Double = {
    val seq = vars.toIndexedSeq.sorted
    val pairs = for (i <- seq.indices; j <- i + 1 until seq.size)
      yield math.log(s.selectivity(seq(i), seq(j)))
    val m = vars.size
    seq.map(s.logWindowRows).sum + pairs.sum + s.logSpanFactor(m) + s.kleene.collect {
      case (k, (_, needs)) if needs.nonEmpty && needs.subsetOf(vars) => s.logKleeneFactor(k, m)
    }.sum + s.negations.collect {
      case (d, n) if n.needs.nonEmpty && n.needs.subsetOf(vars) => s.logNegationPass(d, m)
    }.sum
  }

  /** ln of a negation's pass rate (floored, so that a rate of 0 stays finite). */
  private[optimizer] def logPass(pass: Double): Double = math.log(math.max(pass, 1e-12))

  /**
   * ln of the factor by which the band of a sequence join narrows the pairs of `x` (left)
   * and `y` (right) when it guarantees their order: either order is as likely for two rows
   * within a window of a stationary stream, so half of them; no narrower than the pair's
   * selectivity, which includes the order (a pair without conditions has selectivity 1).
   */
  def logBandFactor(x: String, y: String, s: PatternStatistics): Double =
    math.log(math.min(1.0, math.max(s.selectivity(x, y), 0.5)))

  /**
   * ln C(L, R): the candidate pairs the sequence join of `left` with `right` tests. For
   * each left partial match the join reads the right ones starting within the window, after
   * every left variable the pattern puts before the right side's first variable f, and
   * before every other left variable (CepJoinPlan, `bandBounds`). So the order of (x, y) is
   * guaranteed for x before f and any y, and for x after f with y = f; the other conditions
   * between the sides (the order of x and the later right variables, DEFINE comparisons)
   * are tested pair by pair. Without a band order (`bandOrder` empty) every pair within the
   * window is tested.
   *
   * With `spanAware` statistics, where PM counts the partial matches that start in a window:
   * for a left match of a rows the band is the gap between two of its rows (or the room
   * before its first or after its last), W * Beta(1, a - 1) long, W / a on average, so
   * C = PM(L) * PM(R) / a; without a band order, right matches starting within a window on
   * either side of the left one, C = 2 PM(L) PM(R). The joint window check rejects most of
   * these when both sides span several rows (a join of 3 and 4 rows emits 1 in 20 before
   * its conditions). Otherwise (the paper's product) PM(L) * PM(R) narrowed by the band's
   * factors, times k for a right side of k variables: PM(R) counts right matches lying
   * inside one window, but k times as many start inside a window and end within a window
   * of their start (ordered points: W^k / k! against W * W^(k-1) / (k-1)!).
   */
  def logCandidates(left: Set[String], right: Set[String], s: PatternStatistics): Double =
    if (s.spanAware) logPM(left, s) + logPM(right, s) + logBandShare(left.size, s)
    else {
      val band = if (s.bandOrder.isEmpty) 0.0
      else {
        val index = s.bandOrder.zipWithIndex.toMap
        def position(v: String) = index.getOrElse(v, Int.MaxValue)
        val f = right.toIndexedSeq.sorted.minBy(position)
        left.toIndexedSeq.map { x =>
          if (position(x) < position(f)) right.toIndexedSeq.map(logBandFactor(x, _, s)).sum
          else logBandFactor(x, f, s)
        }.sum
      }
      logPM(left, s) + logPM(right, s) + math.log(right.size) + band
    }

  /** ln of the share of a window a span-aware band leaves a left side of `a` rows. */
  private[optimizer] def logBandShare(a: Int, s: PatternStatistics): Double =
    if (s.bandOrder.isEmpty) math.log(2) else -math.log(a)

  /**
   * ln of the factors of the Kleene closures and the negations attached at the join of
   * `left` and `right` (those whose needs it is the first to cover), for its |L + R| rows;
   * the closures' in the order the planner attaches them, each with whether its output
   * keeps start order (see [[logSortCost]]).
   */
  private[optimizer] def attachedAt(left: Set[String], right: Set[String],
      s: PatternStatistics): (Seq[(Double, Boolean)], Seq[Double]) = {
    val both = left ++ right
    def here(needs: Set[String]) = needs.nonEmpty && needs.subsetOf(both) &&
      !needs.subsetOf(left) && !needs.subsetOf(right)
    val m = both.size
    (s.kleene.toIndexedSeq.collect {
        case (k, (_, needs)) if here(needs) =>
          (s.logKleeneFactor(k, m), !s.openingKleene.contains(k))
      },
      s.negations.toIndexedSeq.collect { case (d, n) if here(n.needs) => s.logNegationPass(d, m) })
  }

  /**
   * ln of the rows the join of `left` and `right` hands to the Kleene closures attached at
   * it (those whose needs it is the first to cover): its output before they multiply it
   * by their bindings. The `spark` cost model (`kleeneBounds` given) counts them: with
   * rare Kleene rows the bindings are a filter, and the join output it filters is work
   * the node's PM no longer shows. -inf (nothing) otherwise.
   */
  def logKleeneInput(left: Set[String], right: Set[String], s: PatternStatistics): Double =
    if (s.kleeneBounds.isEmpty) Double.NegativeInfinity
    else {
      val kleenes = attachedAt(left, right, s)._1
      if (kleenes.isEmpty) Double.NegativeInfinity else logPM(left ++ right, s) - kleenes.map(_._1).sum
    }

  /**
   * ln(sigma * the rows sorted because of the join of `left` and `right`). Every operator
   * of a join tree reads its inputs in start order. A sequence join's output keeps its left
   * input's order when the right side starts after some left variable, i.e. when `left`
   * holds the pattern-first variable of the two sides (and only with a band order: without
   * one no join output is in order). A Kleene closure or a negation reads its input in
   * start order (sorting it if it does not come so) and keeps that order, except a closure
   * that opens the pattern, whose bindings may start a match earlier. So an unordered
   * output is sorted by whoever reads it: each closure or negation attached at this join in
   * turn (closures first, as the planner attaches them), then the parent join — none at
   * the root. -inf (nothing) without a sort weight. Leaves are sorted once in every plan
   * alike and are not counted.
   */
  def logSortCost(left: Set[String], right: Set[String], isRoot: Boolean,
      s: PatternStatistics): Double =
    if (s.sortWeight <= 0) Double.NegativeInfinity
    else {
      val both = left ++ right
      val (kleenes, negations) = attachedAt(left, right, s)
      val position = s.bandOrder.zipWithIndex.toMap
      val joinOrdered = s.bandOrder.nonEmpty && left.nonEmpty &&
        left.map(position.getOrElse(_, Int.MaxValue)).min < right.map(position.getOrElse(_, Int.MaxValue)).min
      logSortedRows(logPM(both, s) - kleenes.map(_._1).sum - negations.sum, joinOrdered, kleenes,
        negations, isRoot, s.sortWeight)
    }

  /**
   * The rows sorted after a join with output `rows` (ln), `ordered` or not, through the
   * closures (factors `kleenes`) and then negations attached at it, and by its parent
   * unless it is the root: ln(weight * sum), or -inf when nothing is sorted.
   */
  private[optimizer] def logSortedRows(rows: Double, ordered: Boolean,
      kleenes: Seq[(Double, Boolean)], negations: Seq[Double], isRoot: Boolean,
      weight: Double): Double = {
    var current = rows
    var inOrder = ordered
    var sorted = Double.NegativeInfinity
    kleenes.foreach { case (f, keepsOrder) =>
      if (!inOrder) sorted = logAdd(sorted, current)
      current += f
      inOrder = keepsOrder
    }
    negations.foreach { f =>
      if (!inOrder) sorted = logAdd(sorted, current)
      current += f
      inOrder = true
    }
    if (!inOrder && !isRoot) sorted = logAdd(sorted, current)
    if (sorted == Double.NegativeInfinity) sorted else math.log(weight) + sorted
  }

  /** ln(omega * C(L, R)), or -inf (nothing) without a candidate weight. */
  def logCandidateCost(left: Set[String], right: Set[String], s: PatternStatistics): Double =
    if (s.candidateWeight <= 0) Double.NegativeInfinity
    else math.log(s.candidateWeight) + logCandidates(left, right, s)

  /**
   * ln Cost_ord(O) (§4.1): the sum over prefixes p1..pk of the order of
   * W^k * prod(r_pi) * prod over pairs i < j <= k of sel(pi, pj), i.e. of PM(prefix);
   * plus omega * C(prefix, {pk}) for each k >= 2 (a single right variable is its own f, so
   * the band guarantees the order of every pair with it).
   */
  def logCostOrd(order: Seq[String], s: PatternStatistics): Double = {
    // Incremental: the prefix's product over rows and pairs grows by W r_pk * prod over
    // j < k of sel(pj, pk); the span, Kleene and negation factors are taken for its k rows
    // (equal to logPM of each prefix, in O(n^2) instead of O(n^3 log n): iterative
    // improvement calls this for every move it tries). The candidate and sort terms, when
    // weighted (always under the `spark` model), are computed per join from sets, so with
    // them the whole is O(n^3 log n); iterative improvement's time budget bounds its use.
    val kleene = s.kleene.toIndexedSeq.filter(_._2._2.nonEmpty)
    val attached = Array.fill(kleene.size)(false)
    val negations = s.negations.toIndexedSeq.filter(_._2.needs.nonEmpty).toArray
    val checked = Array.fill(negations.length)(false)
    val seen = scala.collection.mutable.HashSet.empty[String]
    var singles = 0.0 // the product over the prefix's rows and pairs
    var pm = 0.0
    var total = Double.NegativeInfinity
    var k = 0
    while (k < order.length) {
      val v = order(k)
      val m = k + 1
      singles += s.logWindowRows(v)
      var j = 0
      while (j < k) {
        singles += math.log(s.selectivity(order(j), v))
        j += 1
      }
      if (k > 0 && (s.candidateWeight > 0 || s.sortWeight > 0)) {
        val prefix = order.take(k).toSet
        total = logAdd(total, logCandidateCost(prefix, Set(v), s))
        total = logAdd(total, logSortCost(prefix, Set(v), k == order.length - 1, s))
      }
      seen += v
      // Negation checks first: the rows a Kleene closure receives are counted after them
      // (as logKleeneInput counts them), an approximation where both attach at one join.
      // Every factor is taken for the prefix's m rows (logPM).
      pm = singles + s.logSpanFactor(m)
      var q = 0
      while (q < negations.length) {
        if (checked(q) || negations(q)._2.needs.subsetOf(seen)) {
          checked(q) = true
          pm += s.logNegationPass(negations(q)._1, m)
        }
        q += 1
      }
      var newly = 0.0
      var attachedHere = false
      q = 0
      while (q < kleene.size) {
        if (attached(q) || kleene(q)._2._2.subsetOf(seen)) {
          val f = s.logKleeneFactor(kleene(q)._1, m)
          if (!attached(q)) { attachedHere = true; newly += f }
          attached(q) = true
          pm += f
        }
        q += 1
      }
      val beforeKleene = pm - newly
      // logKleeneInput: the join output the closures attached here consume.
      if (attachedHere && s.kleeneBounds.nonEmpty) total = logAdd(total, beforeKleene)
      total = logAdd(total, pm)
      k += 1
    }
    total
  }

  /**
   * ln PM(node) for every node of the tree (§4.2), leaves first: PM(leaf v) = W * r_v;
   * PM(node) = PM(left) * PM(right) * SEL_LR, where SEL_LR multiplies the selectivities
   * of the pairs split by the node. A Kleene variable is attached at the lowest node that
   * binds everything it needs (as the planner attaches it) and multiplies that node's
   * partial matches, and so those of its ancestors, by its subset count (§5.2); a negation's
   * check likewise (§5.3), by its pass rate.
   */
  def logPartialMatches(tree: JoinTree, s: PatternStatistics): Seq[(JoinTree, Double)] = {
    // Each factor as a function of the rows m of the node it multiplies (logPM).
    val factors: Seq[(Set[String], Int => Double)] =
      s.kleene.toIndexedSeq.map { case (k, (_, needs)) => (needs, (m: Int) => s.logKleeneFactor(k, m)) } ++
        s.negations.toIndexedSeq.filter(_._2.needs.nonEmpty)
          .map { case (d, n) => (n.needs, (m: Int) => s.logNegationPass(d, m)) }
    val attachedAt: Map[JoinTree, Seq[Int => Double]] = factors.map { case (needs, f) =>
      JoinTree.lowestCovering(tree, needs.intersect(tree.variables)) -> f
    }.groupBy(_._1).map { case (n, fs) => n -> fs.map(_._2) }
    val out = Seq.newBuilder[(JoinTree, Double)]
    // Returns the node's product over rows and pairs, and the factors attached at or below.
    def visit(n: JoinTree): (Double, Seq[Int => Double]) = {
      val (own, below) = n match {
        case JoinLeaf(v) => (s.logWindowRows(v), Nil)
        case JoinNode(l, r) =>
          val split = for (a <- l.variables.toIndexedSeq; b <- r.variables.toIndexedSeq)
            yield math.log(s.selectivity(a, b))
          val ((pl, fl), (pr, fr)) = (visit(l), visit(r))
          (pl + pr + split.sum, fl ++ fr)
      }
      val fs = below ++ attachedAt.getOrElse(n, Nil)
      val m = n.variables.size
      out += n -> (own + s.logSpanFactor(m) + fs.map(_(m)).sum)
      (own, fs)
    }
    visit(tree)
    out.result()
  }

  /**
   * ln Cost_tree(T) (§4.2): the sum of PM over every node, leaves included; plus omega *
   * C(left, right) at every join, the input of the Kleene closures attached at it, and
   * sigma times the rows sorted because of it.
   */
  def logCostTree(tree: JoinTree, s: PatternStatistics): Double = logSum(logNodeCosts(tree, s).map(_._2))

  /**
   * Each node's part of ln Cost_tree(T): its PM, and at a join the candidates it tests, the
   * input of the closures attached at it and the rows sorted because of it. Patterns
   * planned together pay once for a node their trees share.
   */
  def logNodeCosts(tree: JoinTree, s: PatternStatistics): Seq[(JoinTree, Double)] =
    logPartialMatches(tree, s).map {
      case (n @ JoinNode(l, r), pm) =>
        val (lv, rv) = (l.variables, r.variables)
        val candidates = if (s.candidateWeight <= 0) Double.NegativeInfinity else logCandidateCost(lv, rv, s)
        val sorts = if (s.sortWeight <= 0) Double.NegativeInfinity else logSortCost(lv, rv, n eq tree, s)
        n -> logSum(Seq(pm, candidates, logKleeneInput(lv, rv, s), sorts))
      case leaf => leaf
    }

  /**
   * ln Cost_ord^lat(O) (§6.1): a row of the pattern's last variable waits for the rows of
   * every variable after it in the order, W * r each.
   */
  def logLatencyOrd(order: Seq[String], last: String, s: PatternStatistics): Double =
    logSum(order.drop(order.indexOf(last) + 1).map(s.logWindowRows))

  /**
   * ln Cost_tree^lat(T) (§6.1): walking from the last variable's leaf up to the root, each
   * node on the way (the leaf included, the root not) is joined with everything buffered at
   * its sibling: the sum of PM(sibling).
   */
  def logLatencyTree(tree: JoinTree, last: String, s: PatternStatistics): Double = {
    val pm = logPartialMatches(tree, s).toMap
    def path(n: JoinTree): Seq[Double] = n match {
      case JoinNode(l, r) if l.variables.contains(last) => pm(r) +: path(l)
      case JoinNode(l, r) if r.variables.contains(last) => pm(l) +: path(r)
      case _ => Nil
    }
    logSum(path(tree))
  }

  /** ln(Cost^trpt + alpha * Cost^lat), the weighted sum of §6.1 (alpha >= 0). */
  def logWeighted(logThroughput: Double, logLatency: Double, alpha: Double): Double =
    if (alpha <= 0) logThroughput else logAdd(logThroughput, math.log(alpha) + logLatency)

  /**
   * What the left-deep algorithms minimize: ln Cost_ord(O), plus alpha * Cost_ord^lat(O)
   * when the statistics carry a latency weight (§6.1).
   */
  def logOrdObjective(order: Seq[String], s: PatternStatistics): Double =
    s.latencyVariable.filter(order.contains) match {
      case Some(last) => logWeighted(logCostOrd(order, s), logLatencyOrd(order, last, s),
          s.latencyWeight)
      case None => logCostOrd(order, s)
    }

  /** What the tree algorithms minimize: ln Cost_tree(T) (+ alpha * Cost_tree^lat(T)). */
  def logTreeObjective(tree: JoinTree, s: PatternStatistics): Double =
    s.latencyVariable.filter(tree.variables.contains) match {
      case Some(last) => logWeighted(logCostTree(tree, s), logLatencyTree(tree, last, s),
          s.latencyWeight)
      case None => logCostTree(tree, s)
    }

  /**
   * The latency part a DP adds when it joins `withLast` (the side holding the last
   * variable) to `other`: alpha * PM(other), the rows buffered at the sibling on the last
   * variable's path (§6.1). `-inf` (nothing) when there is no latency weight or the last
   * variable is on neither side.
   */
  def logLatencyStep(withLastSide: Set[String], other: Set[String], s: PatternStatistics): Double =
    s.latencyVariable match {
      case Some(last) if withLastSide.contains(last) =>
        math.log(s.latencyWeight) + logPM(other, s)
      case _ => Double.NegativeInfinity
    }
}
