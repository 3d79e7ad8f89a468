package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics}

/** What the subset DPs share: the variables of a bit mask, and ln PM of every mask. */
private[algorithms] object SubsetCosts {

  def setOf(vars: Seq[String], mask: Int): Set[String] =
    vars.indices.filter(i => (mask & (1 << i)) != 0).map(vars).toSet

  /**
   * Under the `spark` cost model (`kleeneBounds` given), each Kleene closure's needs as a
   * bit mask of `vars`, with ln of its factor for a node of m rows: what
   * CostModel.logKleeneInput reads, for the DPs' splits. Empty under the paper's model.
   */
  def kleeneMasks(vars: Seq[String], stats: PatternStatistics): Seq[(Int, Int => Double)] =
    if (stats.kleeneBounds.isEmpty) Nil
    else stats.kleene.toIndexedSeq.collect {
      case (k, (_, needs))
          if needs.nonEmpty &&
            needs.subsetOf(vars.toSet) =>
        (vars.indices.filter(i => needs.contains(vars(i))).map(1 << _).sum,
          (m: Int) => stats.logKleeneFactor(k, m))
    }

  /** ln PM(S) for every subset S of `vars` (index = bit mask; the empty set is unused). */
  def logPMByMask(vars: Seq[String], stats: PatternStatistics): Array[Double] = {
    val full = (1 << vars.size) - 1
    val pm = new Array[Double](full + 1)
    for (mask <- 1 to full) pm(mask) = CostModel.logPM(setOf(vars, mask), stats)
    pm
  }
}

/**
 * The Kleene closures and negations a join of two masks of `vars` attaches (needs covered by
 * both, by neither side), with ln of their factors for its rows: CostModel.attachedAt over
 * masks, in the order that function gives them.
 */
private[algorithms] final class MaskAttachments(vars: Seq[String], stats: PatternStatistics) {
  private val index = vars.zipWithIndex.toMap
  private def maskOf(needs: Set[String]): Option[Int] =
    if (needs.isEmpty || !needs.forall(index.contains)) None
    else Some(needs.toIndexedSeq.map(v => 1 << index(v)).sum)
  private val kleenes: Seq[(Int, Int => Double, Boolean)] = stats.kleene.toIndexedSeq.flatMap {
    case (k, (_, needs)) => maskOf(needs).map(mask =>
        (mask, (m: Int) => stats.logKleeneFactor(k, m), !stats.openingKleene.contains(k)))
  }
  private val negations: Seq[(Int, Int => Double)] = stats.negations.toIndexedSeq.flatMap { case (d, n) =>
    maskOf(n.needs).map(_ -> ((m: Int) => stats.logNegationPass(d, m)))
  }

  def apply(left: Int, right: Int): (Seq[(Double, Boolean)], Seq[Double]) = {
    val both = left | right
    def here(needs: Int) = (needs & ~both) == 0 && (needs & ~left) != 0 && (needs & ~right) != 0
    val m = Integer.bitCount(both)
    (kleenes.collect { case (needs, f, keepsOrder) if here(needs) => (f(m), keepsOrder) },
      negations.collect { case (needs, f) if here(needs) => f(m) })
  }
}

/**
 * CostModel.logCandidateCost over bit masks of `vars`: O(1) per join with `spanAware`
 * statistics; otherwise O(n) instead of O(n^2) set work: the band factors of every pair are
 * read once, and for each left variable their sum over any right mask is tabulated
 * (n * 2^n values). `pm` is [[SubsetCosts.logPMByMask]]. Only for weights > 0.
 */
private[algorithms] final class MaskCandidateCosts(vars: Seq[String], stats: PatternStatistics,
    pm: Array[Double]) {
  private val n = vars.size
  private val logOmega = math.log(stats.candidateWeight)
  private val banded = stats.bandOrder.nonEmpty
  private val position = vars.map { v =>
    val p = stats.bandOrder.indexOf(v); if (p < 0) Int.MaxValue else p
  }.toArray
  private val factor = Array.tabulate(n, n) { (i, j) =>
    if (i == j || !banded) 0.0 else CostModel.logBandFactor(vars(i), vars(j), stats)
  }
  private val full = (1 << n) - 1
  // The right side's first variable in pattern order, and each variable's summed factors
  // (the paper's product only: the span-aware estimate needs neither).
  private lazy val first = Array.tabulate(full + 1) { mask =>
    if (mask == 0) -1 else (0 until n).filter(i => (mask & (1 << i)) != 0).minBy(position(_))
  }
  private lazy val factorSum = Array.tabulate(n) { i =>
    val a = new Array[Double](full + 1)
    for (mask <- 1 to full) {
      val j = Integer.numberOfTrailingZeros(mask)
      a(mask) = a(mask & (mask - 1)) + factor(i)(j)
    }
    a
  }

  /** ln(omega * C(left, right)). */
  def apply(left: Int, right: Int): Double =
    if (stats.spanAware) {
      logOmega + pm(left) + pm(right) + CostModel.logBandShare(Integer.bitCount(left), stats)
    } else {
      var c = logOmega + pm(left) + pm(right) + math.log(Integer.bitCount(right))
      if (banded) {
        val f = first(right)
        var m = left
        while (m != 0) {
          val x = Integer.numberOfTrailingZeros(m)
          c += (if (position(x) < position(f)) factorSum(x)(right) else factor(x)(f))
          m &= m - 1
        }
      }
      c
    }
}

/**
 * CostModel.logSortCost over bit masks of `vars`, for the DPs: the closures and negations
 * a join attaches, and whether its left side holds the set's pattern-first variable, read
 * from masks. `pm` is [[SubsetCosts.logPMByMask]]. Only for sort weights > 0.
 */
private[algorithms] final class MaskSortCosts(vars: Seq[String], stats: PatternStatistics,
    pm: Array[Double]) {
  private val attachments = new MaskAttachments(vars, stats)
  private val position = vars.map { v =>
    val p = stats.bandOrder.indexOf(v); if (p < 0) Int.MaxValue else p
  }.toArray
  private def first(mask: Int): Int = {
    var m = mask
    var best = Int.MaxValue
    while (m != 0) { best = math.min(best, position(Integer.numberOfTrailingZeros(m))); m &= m - 1 }
    best
  }

  def apply(left: Int, right: Int, isRoot: Boolean): Double = {
    val (ks, ns) = attachments(left, right)
    val ordered = stats.bandOrder.nonEmpty && first(left) < first(right)
    CostModel.logSortedRows(pm(left | right) - ks.map(_._1).sum - ns.sum, ordered, ks, ns, isRoot,
      stats.sortWeight)
  }
}
