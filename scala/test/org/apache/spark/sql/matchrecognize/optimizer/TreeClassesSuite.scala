package org.apache.spark.sql.matchrecognize.optimizer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.StatisticsEstimator.GroupRates
import org.apache.spark.sql.matchrecognize.optimizer.algorithms.JoinOrderAlgorithm
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, PatternStatistics, RatesTreeChooser}

/** Trees per key chosen from sampled groups' rates, and a group's pick among them (no Spark session). */
class TreeClassesSuite extends AnyFunSuite {

  private val vars = Seq("A", "B", "C")
  // PATTERN (A B C) WITHIN 100, selective conditions between neighbours only.
  private val base = PatternStatistics(100, Map("A" -> 0.25, "B" -> 0.5, "C" -> 0.25),
    Map(("A", "B") -> 0.01, ("B", "C") -> 0.01, ("A", "C") -> 0.5), candidateWeight = 0.1)
  private val rareA = Map("A" -> 0.01, "B" -> 0.5, "C" -> 0.49)
  private val rareC = Map("A" -> 0.49, "B" -> 0.5, "C" -> 0.01)
  private val dp = JoinOrderAlgorithm.named("dp_bushy").get
  private def plan(s: PatternStatistics): JoinTree = dp.plan(vars, s)
  private def best(rates: Map[String, Double]) = plan(base.copy(rates = rates))

  test("opposite groups get each their own tree, with their shares of the sampled rows") {
    val groups = (Seq.fill(3)(rareA) ++ Seq.fill(2)(rareC)).zipWithIndex.map { case (r, k) => GroupRates(100, r, k) }
    val average = plan(base)
    val c = TreeClasses.choose(average, base, groups, plan, maxTrees = 4, minGain = 1.25).get
    val trees = average +: c.others
    assert(best(rareA) != best(rareC))
    assert(trees.contains(best(rareA)) && trees.contains(best(rareC)))
    assert(math.abs(c.shares.sum - 1.0) < 1e-9)
    assert(c.logCostPerKey <= c.logCostOne - math.log(1.25))
  }

  test("groups alike, too few groups, or one tree asked for: no trees per key") {
    val alike = (0 until 5).map(GroupRates(100, rareA, _))
    assert(TreeClasses.choose(best(rareA), base, alike, plan, 4, 1.25).isEmpty)
    val opposite = Seq(GroupRates(100, rareA, 0), GroupRates(100, rareC, 1))
    assert(TreeClasses.choose(plan(base), base, opposite.take(1), plan, 4, 1.25).isEmpty)
    assert(TreeClasses.choose(plan(base), base, opposite, plan, 1, 1.25).isEmpty)
    // A gain the cost model predicts but below the asked factor is not taken.
    assert(TreeClasses.choose(plan(base), base, opposite, plan, 4, 1e6).isEmpty)
  }

  test("a key whose rates move gets trees for each variable rare, beside those sampled") {
    // Two runs of one key's rows: A rare, then B rare. Neither C nor D's profile is sampled.
    val four = Seq("A", "B", "C", "D")
    val st = PatternStatistics(100, four.map(_ -> 0.25).toMap,
      Map(("A", "B") -> 0.01, ("B", "C") -> 0.01, ("C", "D") -> 0.01), candidateWeight = 0.1)
    def plan4(s: PatternStatistics) = dp.plan(four, s)
    def rare(v: String) = four.map(w => w -> (if (w == v) 0.0025 else 0.33)).toMap
    val runs = Seq(GroupRates(100, rare("A"), 0), GroupRates(100, rare("B"), 0))
    val c = TreeClasses.choose(plan4(st), st, runs, plan4, maxTrees = 8, minGain = 1.25).get
    val hedged = c.others.zip(c.shares.tail).filter(_._2 == 0).map(_._1)
    assert(c.hedges == hedged.size && hedged.nonEmpty)
    // Every variable's rare profile has its best tree in the set.
    for (v <- four) assert((plan4(st) +: c.others).contains(plan4(st.copy(rates = st.rates.updated(v, 0.0025)))), v)
    // The same runs as two keys that do not move: no hedges.
    val still = runs.zipWithIndex.map { case (g, k) => g.copy(key = k) }
    assert(TreeClasses.choose(plan4(st), st, still, plan4, 8, 1.25).forall(_.hedges == 0))
    // At most maxTrees trees in all.
    assert(TreeClasses.choose(plan4(st), st, runs, plan4, 2, 1.25).forall(_.others.size == 1))
  }

  test("a group's first rows pick the tree cheapest under their rates") {
    val trees = Seq(best(rareA), best(rareC))
    val chooser = RatesTreeChooser(trees, base, prefixRows = 1000, minGain = 1.25)
    val none = Array.empty[Long]
    assert(chooser.variables == vars)
    // 1,000 rows over 1,000 positions: A on 10, B on 500, C on 490; and the reverse.
    assert(chooser.choose(Array(10L, 500L, 490L), 1000, 1000.0, -1, none, none) == 0)
    assert(chooser.choose(Array(490L, 500L, 10L), 1000, 1000.0, -1, none, none) == 1)
    // A variable with no rows counts as half a row, as in sampling; one row tells nothing.
    assert(chooser.choose(Array(0L, 500L, 490L), 990, 1000.0, -1, none, none) == 0)
    assert(chooser.choose(Array(0L, 0L, 1L), 1, 1.0, -1, none, none) == 0)
    assert(chooser.choose(Array(0L, 0L, 1L), 1, 1.0, 1, none, none) == 1)
    // A group running a tree moves only for one that costs minGain times less.
    assert(chooser.choose(Array(490L, 500L, 10L), 1000, 1000.0, 0, none, none) == 1)
    val even = Array(250L, 500L, 250L)
    val stay = chooser.choose(even, 1000, 1000.0, -1, none, none)
    assert(chooser.choose(even, 1000, 1000.0, 1 - stay, none, none) == 1 - stay)
    val rates = RatesTreeChooser.rates(vars, Array(0L, 10L, 20L), 10.0)
    assert(rates == Map("A" -> 0.05, "B" -> 1.0, "C" -> 2.0))
    assert(CostModel.logTreeObjective(trees(0), base.copy(rates = rareA)) <
      CostModel.logTreeObjective(trees(1), base.copy(rates = rareA)))
  }

  test("pass rates measured on a group's rows move the selectivities it was planned with") {
    // Trees binding A-B first, or B-C first; equal rates, the planned selectivities alike.
    val ab = JoinTree.parse("((A B) C)")
    val bc = JoinTree.parse("(A (B C))")
    val even = base.copy(selectivities = Map(("A", "B") -> 0.05, ("B", "C") -> 0.05, ("A", "C") -> 0.5))
    val chooser = RatesTreeChooser(Seq(ab, bc), even, prefixRows = 1000, minGain = 1.25,
      pairs = Seq("A" -> "B", "B" -> "C"))
    assert(chooser.pairs == Seq("A" -> "B", "B" -> "C"))
    val rows = Array(330L, 340L, 330L)
    val tested = Array(1000L, 1000L)
    // A-B passing nearly every pair makes its node the costly one, and the reverse.
    assert(chooser.choose(rows, 1000, 1000.0, -1, tested, Array(900L, 2L)) == 1)
    assert(chooser.choose(rows, 1000, 1000.0, -1, tested, Array(2L, 900L)) == 0)
    // Nothing tested: the selectivities planned with.
    val unmeasured = RatesTreeChooser(Seq(ab, bc), even, prefixRows = 1000, minGain = 1.25)
    for (a <- Seq(rows, Array(10L, 500L, 490L), Array(490L, 500L, 10L))) {
      assert(chooser.choose(a, 1000, 1000.0, -1, Array(0L, 0L), Array(0L, 0L)) ==
        unmeasured.choose(a, 1000, 1000.0, -1, Array.empty[Long], Array.empty[Long]))
    }
    // Planned 0.05 (0.1 of the ordered pairs): kept while the measured pass rate's interval
    // holds 0.1; beyond it, it is taken to the interval's nearer end (a selectivity is half
    // the ordered rate).
    val kept = RatesTreeChooser.selectivities(even, chooser.pairs, Array(256L, 256L), Array(30L, 20L))
    assert(kept(("A", "B")) == 0.05 && kept(("B", "C")) == 0.05 && kept(("A", "C")) == 0.5)
    val moved = RatesTreeChooser.selectivities(even, chooser.pairs, Array(256L, 256L), Array(77L, 0L))
    assert(moved(("A", "B")) == RatesTreeChooser.passInterval(77, 256)._1 / 2)
    assert(moved(("B", "C")) == RatesTreeChooser.passInterval(0, 256)._2 / 2)
    assert(moved(("A", "B")) > 0.11 && moved(("B", "C")) < 0.02)
    // Few pairs prove little: 0 of 20 is within chance of 0.1, 20 of 20 is not.
    val few = RatesTreeChooser.selectivities(even, chooser.pairs, Array(20L, 20L), Array(20L, 0L))
    assert(few(("A", "B")) > 0.34 && few(("B", "C")) == 0.05)
    // Measured either way round the planned key; none planned counts as passing all.
    val flipped = RatesTreeChooser.selectivities(even.copy(selectivities = Map(("B", "A") -> 0.05)),
      Seq("A" -> "B"), Array(256L), Array(0L))
    assert(flipped.keySet == Set(("A", "B")) && flipped(("A", "B")) == RatesTreeChooser.passInterval(0, 256)._2 / 2)
    val nonePlanned = RatesTreeChooser.selectivities(even.copy(selectivities = Map.empty),
      Seq("A" -> "B"), Array(256L), Array(256L))
    assert(nonePlanned(("A", "B")) == 0.5)
  }

  test("a group's pass rate moves from the last one taken, only when its rows rule it out") {
    val ab = JoinTree.parse("((A B) C)")
    val bc = JoinTree.parse("(A (B C))")
    val even = base.copy(selectivities = Map(("A", "B") -> 0.05, ("B", "C") -> 0.05, ("A", "C") -> 0.5))
    val pairs = Seq("A" -> "B", "B" -> "C")
    val estimates = Array(Double.NaN, Double.NaN)
    // First choice: 0 of 256 rules out the planned 0.1; the rate goes to the interval's top.
    RatesTreeChooser.selectivities(even, pairs, Array(256L, 256L), Array(0L, 30L), estimates)
    val top0 = RatesTreeChooser.passInterval(0, 256)._2
    assert(estimates(0) == top0 && estimates(1) == 0.1)
    // Then 2 of 256: its interval holds the rate taken, which stays (afresh, it would be the
    // interval's own top, two fifths higher).
    val second = RatesTreeChooser.selectivities(even, pairs, Array(256L, 256L), Array(2L, 30L), estimates)
    assert(second(("A", "B")) == top0 / 2 && estimates(0) == top0)
    val afresh = RatesTreeChooser.selectivities(even, pairs, Array(256L, 256L), Array(2L, 30L))
    assert(afresh(("A", "B")) > 1.4 * second(("A", "B")))
    // All of 256 passing rules it out: the rate moves to that interval's bottom.
    RatesTreeChooser.selectivities(even, pairs, Array(256L, 256L), Array(256L, 30L), estimates)
    assert(estimates(0) == RatesTreeChooser.passInterval(256, 256)._1)
    // The chooser keeps them in the array a group hands it.
    val chooser = RatesTreeChooser(Seq(ab, bc), even, prefixRows = 1000, minGain = 1.25, pairs = pairs)
    val kept = Array(Double.NaN, Double.NaN)
    chooser.choose(Array(330L, 340L, 330L), 1000, 1000.0, -1, Array(256L, 256L), Array(0L, 256L), kept)
    assert(kept(0) == top0 && kept(1) == RatesTreeChooser.passInterval(256, 256)._1)
  }

  test("a pass rate's interval holds the rates within chance of the one measured") {
    val (lo, hi) = RatesTreeChooser.passInterval(64, 64)
    assert(hi == 1.0 && lo > 0.87 && lo < 0.88)
    val (lo0, hi0) = RatesTreeChooser.passInterval(0, 256)
    assert(lo0 == 0.0 && hi0 > 0.03 && hi0 < 0.035)
    // A rate of 1 in 100 measured on 256 pairs: 2.56 passes expected, 0 to 7 within the interval.
    for (passes <- 0L to 7L) {
      val (l, h) = RatesTreeChooser.passInterval(passes, 256)
      assert(l <= 0.01 && 0.01 <= h, passes)
    }
    assert(RatesTreeChooser.passInterval(12, 256)._1 > 0.01)
    assert(RatesTreeChooser.passInterval(0, 0) == ((0.0, 1.0)))
  }
}
