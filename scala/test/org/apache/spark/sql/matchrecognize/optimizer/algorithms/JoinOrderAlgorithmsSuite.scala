package org.apache.spark.sql.matchrecognize.optimizer.algorithms

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.compile.anymatch.{JoinLeaf, JoinNode, JoinTree}
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, NegationStatistics, PatternStatistics}

/** Plan generation with fake statistics: hand-known plans, and the exact DPs checked
 * against brute force on random small instances (no Spark session). */
class JoinOrderAlgorithmsSuite extends AnyFunSuite {

  // The instance of CostModelSuite: W*r = A 10, B 20, C 5; sel(A,B) = 0.5, sel(B,C) = 0.1.
  // Orders (Cost_ord): ABC 160, ACB 110, BAC 170, BCA 80, CAB 105, CBA 65.
  // Trees (Cost_tree): ((A B) C) 185, ((A C) B) 135, (A (B C)) 95.
  private val abc = PatternStatistics(10, Map("A" -> 1.0, "B" -> 2.0, "C" -> 0.5),
    Map(("A", "B") -> 0.5, ("B", "C") -> 0.1))
  private val vars = Seq("A", "B", "C")

  private def close(a: Double, b: Double) = math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b))

  test("trivial keeps the pattern order; efreq sorts by rate") {
    assert(TrivialOrder.plan(vars, abc) == JoinTree.parse("(A B C)"))
    assert(EfreqOrder.plan(vars, abc) == JoinTree.parse("(C A B)"))
  }

  test("greedy takes the variable that keeps the prefix smallest") {
    // C (5) first; then {C,B} = 5*20*0.1 = 10 beats {C,A} = 50; then A.
    assert(GreedyOrder.plan(vars, abc) == JoinTree.parse("(C B A)"))
  }

  test("dp_left_deep finds the cheapest order, dp_bushy the cheapest tree") {
    val order = DpLeftDeep.plan(vars, abc)
    assert(order == JoinTree.parse("(C B A)"))
    assert(close(math.exp(CostModel.logCostOrd(order.leaves, abc)), 65))
    val tree = DpBushy.plan(vars, abc)
    assert(tree.variables == vars.toSet && !tree.isLeftDeep)
    assert(close(math.exp(CostModel.logCostTree(tree, abc)), 95))
  }

  test("dp_bushy takes a sub-tree shared with other patterns when its share costs less") {
    val alone = DpBushy.plan(vars, abc) // (A (B C)) at 95
    // (A B) computed by another pattern anyway: ((A B) C) costs only A, B, C and the root.
    val computed = abc.copy(computed = Seq(JoinTree.parse("(A B)") -> Double.PositiveInfinity))
    assert(DpBushy.plan(vars, computed) == JoinTree.parse("((A B) C)"))
    // A whole tree computed elsewhere is the plan, in its own shape.
    val whole = abc.copy(computed = Seq(JoinTree.parse("((C A) B)") -> Double.PositiveInfinity))
    assert(DpBushy.plan(vars, whole) == JoinTree.parse("((C A) B)"))
    // (A B) paid by k patterns: ((A B) C) costs (A B)'s cost / k plus the rest, against 95;
    // paid by this pattern alone it is just the tree at 185.
    val abCost = math.exp(CostModel.logCostTree(JoinTree.parse("(A B)"), abc))
    for (k <- Seq(2.0, 10.0)) {
      val split = abc.copy(computed = Seq(JoinTree.parse("(A B)") -> k))
      val tree = DpBushy.plan(vars, split)
      val cost = math.exp(CostModel.logCostTree(alone, abc))
      assert(close(cost, 95))
      val sharedCost = abCost / k + math.exp(CostModel.logCostTree(JoinTree.parse("((A B) C)"), abc)) - abCost
      assert(tree == (if (sharedCost < cost) JoinTree.parse("((A B) C)") else alone), s"$k payers")
    }
    // Two payers do not make (A B) worth it here; ten do.
    assert(DpBushy.plan(vars, abc.copy(computed = Seq(JoinTree.parse("(A B)") -> 2.0))) == alone)
    assert(DpBushy.plan(vars, abc.copy(computed = Seq(JoinTree.parse("(A B)") -> 10.0))) ==
      JoinTree.parse("((A B) C)"))
    assert(DpBushy.plan(vars, abc.copy(computed = Seq(JoinTree.parse("(A B)") -> 1.0))) == alone)
    // A sub-tree over variables the pattern does not have is no help.
    assert(DpBushy.plan(vars, abc.copy(computed = Seq(JoinTree.parse("(A D)") -> 2.0))) == alone)
  }

  test("every algorithm is found by its conf name and covers the variables once") {
    for (a <- JoinOrderAlgorithm.all) {
      assert(JoinOrderAlgorithm.named(a.name).contains(a))
      assert(a.plan(vars, abc).leaves.sorted == vars)
      assert(a.plan(Seq("A"), abc) == JoinLeaf("A"))
    }
  }

  private def allTrees(vs: Seq[String]): Seq[JoinTree] =
    if (vs.size == 1) Seq(JoinLeaf(vs.head))
    else (1 until (1 << vs.size) - 1).flatMap { mask =>
      val (l, r) = vs.indices.partition(i => (mask & (1 << i)) != 0)
      for (lt <- allTrees(l.map(vs)); rt <- allTrees(r.map(vs))) yield JoinNode(lt, rt)
    }

  private def randomInstance(rng: scala.util.Random, n: Int): (Seq[String], PatternStatistics) = {
    val vs = (0 until n).map(i => ('A' + i).toChar.toString)
    val rates = vs.map(_ -> (0.05 + rng.nextDouble() * 5)).toMap
    val sels = vs.indices.flatMap(i =>
      (i + 1 until n).withFilter(_ => rng.nextBoolean())
        .map(j => (vs(i), vs(j)) -> (0.01 + rng.nextDouble()))).toMap.map { case (k, v) =>
      k -> math.min(1.0, v)
    }
    val kleene = if (n >= 2 && rng.nextBoolean()) {
      Map("K" -> (rng.nextDouble() * 3, Set(vs(rng.nextInt(n)), vs(rng.nextInt(n)))))
    } else Map.empty[String, (Double, Set[String])]
    (vs, PatternStatistics(1 + rng.nextInt(20), rates, sels, kleene))
  }

  test("dp_left_deep reaches the minimum of Cost_ord over all orders (random instances)") {
    val rng = new scala.util.Random(20261121)
    for (_ <- 1 to 60) {
      val (vs, s) = randomInstance(rng, 2 + rng.nextInt(4))
      val brute = vs.permutations.map(o => CostModel.logCostOrd(o, s)).min
      val dp = CostModel.logCostOrd(DpLeftDeep.plan(vs, s).leaves, s)
      assert(close(dp, brute), s"$vs $s: dp $dp, brute force $brute")
    }
  }

  test("dp_bushy reaches the minimum of Cost_tree over all trees (random instances)") {
    val rng = new scala.util.Random(7)
    for (_ <- 1 to 40) {
      val (vs, s) = randomInstance(rng, 2 + rng.nextInt(4))
      val brute = allTrees(vs).map(t => CostModel.logCostTree(t, s)).min
      val dp = CostModel.logCostTree(DpBushy.plan(vs, s), s)
      assert(close(dp, brute), s"$vs $s: dp $dp, brute force $brute")
      // A bushy optimum is never worse than the best left-deep tree.
      assert(dp <= CostModel.logCostTree(DpLeftDeep.plan(vs, s), s) + 1e-9)
    }
  }

  test("zstream keeps the leaf order; zstream_ord searches over greedy's order") {
    // Over A B C: ((A B) C) 185 or (A (B C)) 95.
    assert(ZStreamOrder.plan(vars, abc) == JoinTree.parse("(A (B C))"))
    // Over C B A (greedy): ((C B) A) = 35 + 10 + 50 = 95, (C (B A)) = 35 + 100 + 50 = 185.
    val t = ZStreamOrdOrder.plan(vars, abc)
    assert(t == JoinTree.parse("((C B) A)"))
    assert(close(math.exp(CostModel.logCostTree(t, abc)), 95))
  }

  test("zstream reaches the minimum over the trees that keep its leaf order") {
    val rng = new scala.util.Random(11)
    for (_ <- 1 to 40) {
      val (vs, s) = randomInstance(rng, 2 + rng.nextInt(4))
      val brute = allTrees(vs).filter(_.leaves == vs).map(t => CostModel.logCostTree(t, s)).min
      val z = ZStreamOrder.plan(vs, s)
      assert(z.leaves == vs)
      assert(close(CostModel.logCostTree(z, s), brute))
      assert(CostModel.logCostTree(DpBushy.plan(vs, s), s) <= brute + 1e-9)
    }
  }

  test("iterative improvement ends in a local minimum no worse than its start") {
    // On the 3-variable instance every order is one swap or cycle from the optimum (CBA).
    assert(IterativeImprovementRandom.plan(vars, abc) == JoinTree.parse("(C B A)"))
    assert(IterativeImprovementGreedy.plan(vars, abc) == JoinTree.parse("(C B A)"))
    val rng = new scala.util.Random(3)
    for (_ <- 1 to 30) {
      val (vs, s) = randomInstance(rng, 3 + rng.nextInt(3))
      val ii = CostModel.logCostOrd(IterativeImprovementGreedy.plan(vs, s).leaves, s)
      assert(ii <= CostModel.logCostOrd(GreedyOrder.plan(vs, s).leaves, s) + 1e-9)
      assert(ii >= CostModel.logCostOrd(DpLeftDeep.plan(vs, s).leaves, s) - 1e-9)
      // Seeded: the same plan every time.
      assert(IterativeImprovementRandom.plan(vs, s) == IterativeImprovementRandom.plan(vs, s))
    }
  }

  test("with a latency weight the DPs trade partial matches for an earlier last variable") {
    // CostModelSuite's objectives with alpha = 1 and C last: best order B C A (90, against
    // C B A's 95), best tree A with (B C) (125).
    val s = abc.copy(latencyWeight = 1.0, last = Some("C"))
    assert(DpLeftDeep.plan(vars, s) == JoinTree.parse("(B C A)"))
    assert(close(math.exp(CostModel.logTreeObjective(DpBushy.plan(vars, s), s)), 125))
  }

  /** dp_left_deep, dp_bushy and zstream reach the brute-force minimum of what they minimize
   * (the objectives are the plain costs when there is no latency weight). */
  private def assertExact(vs: Seq[String], s: PatternStatistics): Unit = {
    val bruteOrd = vs.permutations.map(o => CostModel.logOrdObjective(o, s)).min
    assert(close(CostModel.logOrdObjective(DpLeftDeep.plan(vs, s).leaves, s), bruteOrd), s"$vs $s")
    val bruteTree = allTrees(vs).map(t => CostModel.logTreeObjective(t, s)).min
    assert(close(CostModel.logTreeObjective(DpBushy.plan(vs, s), s), bruteTree), s"$vs $s")
    val bruteZ = allTrees(vs).filter(_.leaves == vs).map(t => CostModel.logTreeObjective(t, s)).min
    assert(close(CostModel.logTreeObjective(ZStreamOrder.plan(vs, s), s), bruteZ), s"$vs $s")
  }

  test("the DPs reach the minimum of the weighted objective (random instances)") {
    val rng = new scala.util.Random(99)
    for (_ <- 1 to 40) {
      val (vs, s0) = randomInstance(rng, 2 + rng.nextInt(4))
      val s = s0.copy(latencyWeight = 0.1 + rng.nextDouble() * 5, last = Some(vs(rng.nextInt(vs.size))))
      assertExact(vs, s)
    }
  }

  test("auto runs dp_bushy up to its threshold, beyond it greedy improved within a budget") {
    val auto = new AutoOrder(dpThreshold = 4, budgetMillis = 20)
    assert(auto.delegate(4) == "dp_bushy" && auto.delegate(5) == "greedy+ii")
    val rng = new scala.util.Random(5)
    val (small, ss) = randomInstance(rng, 4)
    assert(auto.plan(small, ss) == DpBushy.plan(small, ss))
    val (large, ls) = randomInstance(rng, 9)
    val t = auto.plan(large, ls)
    assert(t.isLeftDeep && t.leaves.sorted == large.sorted)
    assert(CostModel.logCostOrd(t.leaves, ls) <=
      CostModel.logCostOrd(GreedyOrder.plan(large, ls).leaves, ls) + 1e-9)
  }

  test(
    "the spark cost model: the DPs and zstream reach the minimum of their costs (with Kleene closures, negations, sorts and spans)") {
    // Both orientations of each join count: allTrees holds each split and its mirror.
    val rng = new scala.util.Random(2026)
    for (_ <- 1 to 80) {
      val (vs, s0) = randomInstance(rng, 2 + rng.nextInt(4))
      val s = s0.copy(candidateWeight = 0.01 + rng.nextDouble(),
        bandOrder = if (rng.nextInt(4) == 0) Nil else vs,
        kleeneBounds = s0.kleene.map { case (k, _) => k -> (rng.nextInt(2), None) },
        negations = if (rng.nextBoolean()) Map.empty
        else Map("N" -> NegationStatistics(1.0,
          0.01 + rng.nextDouble(), Set(vs(rng.nextInt(vs.size)), vs(rng.nextInt(vs.size))),
          measured = rng.nextBoolean())),
        sortWeight = if (rng.nextInt(3) == 0) 0.0 else 0.1 + rng.nextDouble() * 2,
        spanAware = rng.nextBoolean(),
        openingKleene = s0.kleene.keySet.filter(_ => rng.nextBoolean()))
      assertExact(vs, s)
    }
  }

  test(
    "the spark cost model with a trailing negation (checked where the first and the last variables are bound): the DPs and zstream reach the minimum") {
    val rng = new scala.util.Random(4242)
    for (_ <- 1 to 40) {
      val (vs, s0) = randomInstance(rng, 2 + rng.nextInt(4))
      val s = s0.copy(candidateWeight = rng.nextDouble(),
        bandOrder = if (rng.nextBoolean()) Nil else vs,
        negations = Map("N" -> NegationStatistics(1.0, 0.01 + rng.nextDouble(),
          Set(vs.head, vs.last))),
        sortWeight = if (rng.nextBoolean()) 0.0 else rng.nextDouble() * 2,
        spanAware = rng.nextBoolean())
      assertExact(vs, s)
    }
  }

  test("with a candidate weight dp_bushy prefers trees whose bands order more pairs") {
    // PATTERN (A B C D), 10 rows per window each, no DEFINE between them: every pair's
    // selectivity is its order, 1/2. PM by size: 10, 50, 125, 156.25.
    val vs = Seq("A", "B", "C", "D")
    val order = PatternStatistics(1, vs.map(_ -> 10.0).toMap,
      (for (i <- vs.indices; j <- i + 1 until 4) yield (vs(i), vs(j)) -> 0.5).toMap)
    def tree(t: String, s: PatternStatistics) = math.exp(CostModel.logCostTree(JoinTree.parse(t), s))
    // The paper's cost cannot tell ((A B) (C D)) from ((A C) (B D)): 40 + 50 + 50 + 156.25.
    assert(close(tree("((A B) (C D))", order), 296.25))
    assert(close(tree("((A C) (B D))", order), 296.25))
    // Our joins' tests: at the root of ((A B) (C D)) every right variable comes after every
    // left one, so the band orders all four pairs: 50 * 50 / 16 = 156.25, times 2 for the
    // two-variable right side = 312.5; with (A B) and (C D), 50 each, 412.5 tests. At the
    // root of ((A C) (B D)) the band puts B after A and before C, but D's order with C is
    // tested: 50 * 50 * (A~B, A~D, C~B: 1/8) * 2 = 625, 725 tests in all.
    val s = order.copy(candidateWeight = 0.1, bandOrder = vs)
    assert(close(tree("((A B) (C D))", s), 296.25 + 0.1 * 412.5))
    assert(close(tree("((A C) (B D))", s), 296.25 + 0.1 * 725))
    // The pattern order, left-deep: PM 40 + 50 + 125 + 156.25 and exact bands: 331.25 tests.
    assert(close(tree("(((A B) C) D)", s), 371.25 + 0.1 * 331.25))
    val best = DpBushy.plan(vs, s)
    assert(best == JoinTree.parse("((A B) (C D))"))
    assert(close(math.exp(CostModel.logCostTree(best, s)), 337.5))
  }
}
