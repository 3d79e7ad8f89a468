package org.apache.spark.sql.matchrecognize.optimizer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, NegationStatistics, PatternStatistics}
import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree

/** The cost functions against costs worked out by hand (no Spark session). */
class CostModelSuite extends AnyFunSuite {

  // PATTERN (A B C) WITHIN 10: rows per window W*r: A 10, B 20, C 5.
  // sel(A,B) = 0.5, sel(B,C) = 0.1, sel(A,C) = 1 (no condition).
  private val abc = PatternStatistics(10, Map("A" -> 1.0, "B" -> 2.0, "C" -> 0.5),
    Map(("A", "B") -> 0.5, ("B", "C") -> 0.1))

  private def close(a: Double, b: Double) = math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b))
  private def cost(logCost: Double) = math.exp(logCost)

  test("Cost_ord sums the partial matches of each prefix of the order") {
    // (A B C): 10 + 10*20*0.5 + 10*20*5*0.5*0.1*1 = 10 + 100 + 50 = 160
    assert(close(cost(CostModel.logCostOrd(Seq("A", "B", "C"), abc)), 160))
    // (C B A): 5 + 5*20*0.1 + 5*20*10*0.1*0.5*1 = 5 + 10 + 50 = 65
    assert(close(cost(CostModel.logCostOrd(Seq("C", "B", "A"), abc)), 65))
    // (A C B): 10 + 10*5*1 + 50 = 110
    assert(close(cost(CostModel.logCostOrd(Seq("A", "C", "B"), abc)), 110))
  }

  test("Cost_tree sums PM over every node, leaves included") {
    // ((A B) C): leaves 10+20+5, PM(AB) = 10*20*0.5 = 100, PM(root) = 100*5*(1*0.1) = 50
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"), abc)), 185))
    // (A (B C)): leaves 35, PM(BC) = 20*5*0.1 = 10, PM(root) = 10*10*(0.5*1) = 50
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(A (B C))"), abc)), 95))
    // ((A C) B): leaves 35, PM(AC) = 10*5*1 = 50, PM(root) = 50*20*(0.5*0.1) = 50
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) B)"), abc)), 135))
  }

  test("latency: rows that the pattern's last variable waits for") {
    // Orders: after C come nothing in (A B C); B and A in (C B A): 20 + 10.
    assert(CostModel.logLatencyOrd(Seq("A", "B", "C"), "C", abc) == Double.NegativeInfinity)
    assert(close(cost(CostModel.logLatencyOrd(Seq("C", "B", "A"), "C", abc)), 30))
    // Trees: ((A B) C): C meets PM(AB) = 100. (A (B C)): C meets B (20), then BC meets A (10).
    assert(close(cost(CostModel.logLatencyTree(JoinTree.parse("((A B) C)"), "C", abc)), 100))
    assert(close(cost(CostModel.logLatencyTree(JoinTree.parse("(A (B C))"), "C", abc)), 30))
  }

  test("the weighted sum of throughput and latency costs") {
    val t = JoinTree.parse("((A B) C)")
    val trpt = CostModel.logCostTree(t, abc)
    val lat = CostModel.logLatencyTree(t, "C", abc)
    assert(CostModel.logWeighted(trpt, lat, 0) == trpt)
    // 185 + 0.5 * 100 = 235
    assert(close(cost(CostModel.logWeighted(trpt, lat, 0.5)), 235))
  }

  test("a Kleene variable multiplies the node it is attached at by its subset count") {
    // PATTERN (A B+ C) WITHIN 10: A 10 rows, C 5 rows per window; B 0.2 per unit, so 2 rows
    // per window and 2^2 = 4 subsets. B needs A and C: attached at the root of (A C).
    val s = PatternStatistics(10, Map("A" -> 1.0, "C" -> 0.5),
      kleene = Map("B" -> (0.2, Set("A", "C"))))
    // leaves 10 + 5, root 10*5*4 = 200
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(A C)"), s)), 215))
  }

  test("log space keeps huge Kleene factors comparable") {
    // 45 rows per window: 2^45 subsets for one B, 2^90 for two; still ordered correctly.
    val s = PatternStatistics(1, Map("A" -> 1.0, "C" -> 1.0, "D" -> 1000.0),
      kleene = Map("B" -> (45.0, Set("A", "C"))))
    val early = CostModel.logCostTree(JoinTree.parse("((A C) D)"), s)
    val late = CostModel.logCostTree(JoinTree.parse("((A D) C)"), s)
    assert(!early.isInfinite && !late.isInfinite)
    // (A C) binds B's neighbours early: 2^45 * 1000 at the root either way, but (A C) also
    // holds 2^45; ((A D) C) holds 1000 at (A D) instead. Hand: ln(2^45*1000 + 2^45 + 1002)
    // vs ln(2^45*1000 + 1000 + 1002).
    assert(close(early, math.log(math.pow(2, 45) * 1000 + math.pow(2, 45) + 1002)))
    assert(close(late, math.log(math.pow(2, 45) * 1000 + 1000 + 1002)))
    assert(late < early)
  }

  test("the objectives add alpha times the latency of the pattern's last variable") {
    val s = abc.copy(latencyWeight = 1.0, last = Some("C"))
    // Orders, Cost_ord + Cost_lat: ABC 160 + 0, ACB 110 + 20 (B after C), BCA 80 + 10,
    // CBA 65 + 30.
    assert(close(cost(CostModel.logOrdObjective(Seq("A", "B", "C"), s)), 160))
    assert(close(cost(CostModel.logOrdObjective(Seq("A", "C", "B"), s)), 130))
    assert(close(cost(CostModel.logOrdObjective(Seq("B", "C", "A"), s)), 90))
    assert(close(cost(CostModel.logOrdObjective(Seq("C", "B", "A"), s)), 95))
    // Trees: ((A B) C) 185 + 100, ((A C) B) 135 + 20 + 10, (A (B C)) 95 + 10 + 20.
    assert(close(cost(CostModel.logTreeObjective(JoinTree.parse("((A B) C)"), s)), 285))
    assert(close(cost(CostModel.logTreeObjective(JoinTree.parse("((A C) B)"), s)), 165))
    assert(close(cost(CostModel.logTreeObjective(JoinTree.parse("(A (B C))"), s)), 125))
    // Without a weight the objectives are the plain costs.
    assert(close(cost(CostModel.logOrdObjective(Seq("C", "B", "A"), abc)), 65))
    assert(close(cost(CostModel.logTreeObjective(JoinTree.parse("((A B) C)"), abc)), 185))
  }

  test("a DP's latency step is alpha times PM of the side without the last variable") {
    val s = abc.copy(latencyWeight = 2.0, last = Some("C"))
    // Joining {B, C} with {A}: 2 * PM(A) = 20; with the last variable on neither side: none.
    assert(close(cost(CostModel.logLatencyStep(Set("B", "C"), Set("A"), s)), 20))
    assert(CostModel.logLatencyStep(Set("A"), Set("B"), s) == Double.NegativeInfinity)
    assert(CostModel.logLatencyStep(Set("B", "C"), Set("A"), abc) == Double.NegativeInfinity)
  }

  // The candidate term, on `abc` with omega = 0.1 and the band ordered A B C. Band factors
  // (order guaranteed: max(sel, 1/2), at most 1): A~B 0.5, B~C 0.5, A~C 1.
  private val banded = abc.copy(candidateWeight = 0.1, bandOrder = Seq("A", "B", "C"))

  test("a sequence join tests the pairs its band does not rule out by order") {
    // (A ⋈ B): f = B, A before it: 10 * 20 * 0.5 = 100.
    assert(close(cost(CostModel.logCandidates(Set("A"), Set("B"), banded)), 100))
    // ((A B) ⋈ C): f = C, A and B before it: PM(AB) 100 * 5 * (1 * 0.5) = 250.
    assert(close(cost(CostModel.logCandidates(Set("A", "B"), Set("C"), banded)), 250))
    // (A ⋈ (B C)): f = B; A before B, so A's order with B and C: 10 * PM(BC) 10 * 0.5 * 1,
    // times 2 for a right side of two variables (it may end past A's window): 100.
    assert(close(cost(CostModel.logCandidates(Set("A"), Set("B", "C"), banded)), 100))
    // ((A C) ⋈ B): f = B; A before it (0.5), C after it (0.5): PM(AC) 50 * 20 * 0.25 = 250.
    assert(close(cost(CostModel.logCandidates(Set("A", "C"), Set("B"), banded)), 250))
    // (C ⋈ (A B)): f = A, C after it: only C~A (1): 5 * PM(AB) 100 * 2 = 1000.
    assert(close(cost(CostModel.logCandidates(Set("C"), Set("A", "B"), banded)), 1000))
    // Without a band order every pair in the window is tested: 100 * 5 = 500.
    assert(close(cost(CostModel.logCandidates(Set("A", "B"), Set("C"),
            banded.copy(bandOrder = Nil))), 500))
    // Never fewer than the partial matches the join produces.
    for ((l, r) <- Seq(Set("A") -> Set("B"), Set("A", "C") -> Set("B"), Set("C") -> Set("A", "B")))
      assert(CostModel.logCandidates(l, r, banded) >= CostModel.logPM(l ++ r, banded) - 1e-9)
  }

  test("Cost_tree and Cost_ord add omega times the candidates tested at every join") {
    // ((A B) C): 185 + 0.1 * (100 + 250) = 220; (A (B C)): 95 + 0.1 * (BC 20*5*0.5 = 50,
    // root 100) = 110; its mirror ((B C) A): f = A, B and C after it: B~A 0.5, C~A 1, so
    // root 10 * 10 * 0.5 = 50 and 95 + 0.1 * (50 + 50) = 105; ((A C) B): 135 + 0.1 * (AC 50
    // + root 250) = 165; the swapped (C (A B)): 185 + 0.1 * (100 + 1000) = 295.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"), banded)), 220))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(A (B C))"), banded)), 110))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((B C) A)"), banded)), 105))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) B)"), banded)), 165))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(C (A B))"), banded)), 295))
    // Orders: ABC 160 + 0.1 * (C(A, B) 100 + C(AB, C) 250) = 195; CBA 65 + 0.1 * (C(C, B)
    // 5*20*0.5 = 50 + C(CB, A) PM(CB) 10 * 10 * (1 * 0.5) = 50) = 75.
    assert(close(cost(CostModel.logCostOrd(Seq("A", "B", "C"), banded)), 195))
    assert(close(cost(CostModel.logCostOrd(Seq("C", "B", "A"), banded)), 75))
    // Weight 0 is the paper's cost.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"),
            banded.copy(candidateWeight = 0))), 185))
  }

  test("expected Kleene bindings between neighbours: sums of lambda^k / k!") {
    def bindings(lambda: Double, min: Int, max: Option[Int]) =
      math.exp(PatternStatistics.logExpectedBindings(lambda, min, max))
    // lambda = 0.4 rows between the neighbours on average.
    assert(close(bindings(0.4, 1, None), math.exp(0.4) - 1)) // B+: 0.492, a filter
    assert(close(bindings(0.4, 0, None), math.exp(0.4))) // B*: 1.492
    assert(close(bindings(0.4, 1, Some(2)), 0.4 + 0.08)) // B{1,2}: 0.4 + 0.4^2/2
    assert(close(bindings(0.4, 2, None), math.exp(0.4) - 1 - 0.4)) // B{2,}: 0.0918
    // Many rows: e^lambda, kept in log space.
    assert(close(PatternStatistics.logExpectedBindings(1000, 1, None), 1000))
    assert(close(PatternStatistics.logExpectedBindings(40, 1, None), 40 + math.log1p(-math.exp(-40))))
  }

  test("a rare Kleene closure is a filter: attaching it early becomes the cheaper plan") {
    // PATTERN (A B+ C D) WITHIN 1: A, C, D 10 rows per window, no conditions between them;
    // B needs A and C. B: 0.9 rows per window, so lambda = 0.3 between its neighbours.
    val paper = PatternStatistics(1, Map("A" -> 10.0, "C" -> 10.0, "D" -> 10.0),
      kleene = Map("B" -> (0.9, Set("A", "C"))))
    val expected = paper.copy(kleeneBounds = Map("B" -> (1, None)))
    val early = JoinTree.parse("((A C) D)")
    val late = JoinTree.parse("((A D) C)")
    // Expected bindings e^0.3 - 1 = 0.3499; the join where B is attached also counts the
    // rows it hands to the closure: ((A C) D) = 30 + (100 + 100 * 0.35) + 1000 * 0.35 =
    // 515; ((A D) C) = 30 + 100 + (1000 + 1000 * 0.35) = 1480.
    val f = math.exp(0.3) - 1
    assert(close(cost(CostModel.logCostTree(early, expected)), 30 + 100 + 100 * f + 1000 * f))
    assert(close(cost(CostModel.logCostTree(late, expected)), 30 + 100 + 1000 + 1000 * f))
    assert(CostModel.logCostTree(early, expected) < CostModel.logCostTree(late, expected))
    // Orders alike: A C D = 10 + (100 + 35) + 350 = 495; D A C = 10 + 100 + (1000 + 350).
    assert(close(cost(CostModel.logCostOrd(Seq("A", "C", "D"), expected)), 10 + 100 + 100 * f + 1000 * f))
    assert(close(cost(CostModel.logCostOrd(Seq("D", "A", "C"), expected)), 10 + 100 + 1000 + 1000 * f))
    // The paper's 2^0.9 = 1.866 subsets make the late attachment look cheaper.
    val g = math.pow(2, 0.9)
    assert(close(cost(CostModel.logCostTree(early, paper)), 30 + 100 * g + 1000 * g))
    assert(CostModel.logCostTree(late, paper) < CostModel.logCostTree(early, paper))
  }

  test("bindings measured in the sample replace the Poisson expectation; the subset counts") {
    // The same pattern with B's rows in bursts: 4 bindings per (A, C) pair measured, where
    // Poisson says 0.35. Attaching early stops being a filter: ((A C) D) = 30 + (100 + 400)
    // + 1000 * 4 = 4530; ((A D) C) = 30 + 100 + (1000 + 4000) = 5130.
    val measured = PatternStatistics(1, Map("A" -> 10.0, "C" -> 10.0, "D" -> 10.0),
      kleene = Map("B" -> (0.9, Set("A", "C"))), kleeneBounds = Map("B" -> (1, None)),
      kleeneBindings = Map("B" -> 4.0))
    assert(close(math.exp(measured.logKleeneFactor("B")), 4.0))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) D)"), measured)), 4530))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A D) C)"), measured)), 5130))
    // The paper's model (no bounds) ignores the measurement: 2^0.9.
    assert(close(math.exp(measured.copy(kleeneBounds = Map.empty).logKleeneFactor("B")),
        math.pow(2, 0.9)))
    // Subsets of n rows the quantifier allows, summed by the estimator over neighbour pairs.
    import StatisticsEstimator.subsets
    assert(subsets(3, 1, None) == 7) // B+: 2^3 - 1
    assert(subsets(3, 0, None) == 8) // B*
    assert(subsets(4, 2, Some(3)) == 10) // B{2,3}: C(4,2) + C(4,3)
    assert(subsets(0, 1, None) == 0) // no B row between: no binding
    assert(subsets(1, 2, None) == 0)
    assert(subsets(5000, 1, None) == 1e300) // capped, never infinite
  }

  test("a negation's check filters the node where its neighbours are bound") {
    // PATTERN (A !N C D) WITHIN 1: A, C, D 10 rows per window, no conditions between them;
    // N's check needs A and C and lets 0.1 of the (A, C) pairs through.
    val s = PatternStatistics(1, Map("A" -> 10.0, "C" -> 10.0, "D" -> 10.0),
      negations = Map("N" -> NegationStatistics(1.0, 0.1, Set("A", "C"))))
    // ((A C) D): leaves 30, PM(AC) = 100 * 0.1 = 10, root 10 * 10 = 100: 140.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) D)"), s)), 140))
    // ((A D) C): leaves 30, PM(AD) = 100, root 1000 * 0.1 = 100: 230.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A D) C)"), s)), 230))
    // Orders alike: A C D = 10 + 10 + 100; D A C = 10 + 100 + 100.
    assert(close(cost(CostModel.logCostOrd(Seq("A", "C", "D"), s)), 120))
    assert(close(cost(CostModel.logCostOrd(Seq("D", "A", "C"), s)), 210))
    assert(close(cost(CostModel.logPM(Set("A", "C"), s)), 10))
    assert(close(cost(CostModel.logPM(Set("A", "D"), s)), 100))
    // Without the negation (the paper's model) both trees cost 30 + 100 + 1000.
    val paper = s.copy(negations = Map.empty)
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) D)"), paper)), 1130))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A D) C)"), paper)), 1130))
  }

  test("a trailing negation's check waits for the pattern's first variable") {
    // PATTERN (A B C !N) WITHIN 1: A, B, C 10 rows per window, no conditions between them;
    // N's range ends with the window of A's row, so its check needs A and C, and lets 0.1
    // of the partial matches through.
    val s = PatternStatistics(1, Map("A" -> 10.0, "B" -> 10.0, "C" -> 10.0),
      negations = Map("N" -> NegationStatistics(1.0, 0.1, Set("A", "C"))))
    // ((A C) B): leaves 30, PM(AC) = 100 * 0.1 = 10, root 10 * 10 = 100: 140.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) B)"), s)), 140))
    // ((B C) A), A joined last: the check is at the root only. Leaves 30 (C's leaf is not
    // filtered), PM(BC) = 100, root 1000 * 0.1 = 100: 230.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((B C) A)"), s)), 230))
    assert(close(cost(CostModel.logPM(Set("C"), s)), 10))
    assert(close(cost(CostModel.logPM(Set("B", "C"), s)), 100))
    // Orders alike: C B A = 10 + 100 + 100; A C B = 10 + 10 + 100.
    assert(close(cost(CostModel.logCostOrd(Seq("C", "B", "A"), s)), 210))
    assert(close(cost(CostModel.logCostOrd(Seq("A", "C", "B"), s)), 120))
  }

  test("a negation's Poisson pass rate over the gap of a pair of rows within one window") {
    import PatternStatistics.negationPassRate
    // m negated rows per window, the gap uniform on [0, W]: (1 - e^-m)/m. m = 1: 0.632.
    assert(close(negationPassRate(1.0), 1 - math.exp(-1)))
    // m = 20: (1 - e^-20)/20 = 0.05.
    assert(close(negationPassRate(20.0), (1 - math.exp(-20)) / 20))
    // Rare rows: 1 - m/2 (half the window is the mean gap); none: every pair passes.
    assert(math.abs(negationPassRate(1e-3) - (1 - 1e-3 / 2)) < 1e-6)
    assert(negationPassRate(0.0) == 1.0)
    // Far above e^(-m/2), the chance of no row in a gap of the mean length.
    assert(negationPassRate(20.0) > 1000 * math.exp(-20.0 / 2))
  }

  test("sorts: a join whose right side holds the pattern's first variable leaves its output unordered") {
    // PATTERN (A B C) in `abc`, band order A B C, sigma = 1. Leaves are not counted.
    val s = abc.copy(bandOrder = Seq("A", "B", "C"), sortWeight = 1.0)
    // ((A B) C): both joins keep their left side's order: no sort, the paper's 185.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"), s)), 185))
    // ((B C) A): (B C) is ordered; the root adds A, the first variable, on its right, but
    // nothing reads the root: 95 + 0 = the same as without sorts.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((B C) A)"), s)), 95))
    // ((C B) A): (C B) holds B on its right, so the root sorts its 10 rows: 95 + 10.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((C B) A)"), s)), 105))
    // Orders alike: C B A = 65 + PM(BC) 10 sorted by the second join.
    assert(close(cost(CostModel.logCostOrd(Seq("C", "B", "A"), s)), 75))
    // Without a band order no join output is in order: every non-root join is sorted.
    val unbanded = s.copy(bandOrder = Nil)
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"), unbanded)), 185 + 100))
    // A closure attached at an unordered join sorts its input and keeps that order:
    // PATTERN (A K+ C D), K needs A and C (factor 4 per pair); ((C A) D) with no
    // conditions, 10 rows per window each: PM(CA) = 100 before the closure, 400 after;
    // (C A) is unordered (A is first): the closure sorts 100, the root nothing. Leaves 30,
    // PM(CA) 400, root 4000.
    val k = PatternStatistics(1, Map("A" -> 10.0, "C" -> 10.0, "D" -> 10.0),
      kleene = Map("K" -> (4.0, Set("A", "C"))), kleeneBounds = Map("K" -> (1, None)),
      kleeneBindings = Map("K" -> 4.0), bandOrder = Seq("A", "C", "D"), sortWeight = 1.0)
    // logKleeneInput adds the closure's input, 100, too.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((C A) D)"), k)),
        30 + 400 + 4000 + 100 + 100))
    // ((A C) D): ordered join, ordered closure: no sort.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) D)"), k)),
        30 + 400 + 4000 + 100))
    // A closure that opens the pattern (PATTERN (K+ A C D) with the same factor, say) may
    // start a match earlier: its output is out of order and the root sorts its 400 rows.
    val opening = k.copy(openingKleene = Set("K"))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A C) D)"), opening)),
        30 + 400 + 4000 + 100 + 400))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((C A) D)"), opening)),
        30 + 400 + 4000 + 100 + (100 + 400)))
  }

  test("span-aware partial matches: 2^C(m,2) / (m-1)! times the paper's product") {
    // `abc` again, span-aware: PM(S) of m rows is multiplied by 2^C(m,2)/(m-1)!: 1 for a
    // leaf, 2 for a pair, 8/2 = 4 for three rows.
    val s = abc.copy(spanAware = true)
    assert(close(cost(CostModel.logPM(Set("A", "B"), s)), 100 * 2))
    assert(close(cost(CostModel.logPM(Set("A", "B", "C"), s)), 50 * 4))
    // ((A B) C): leaves 35, PM(AB) 200, root 200: 435. (A (B C)): 35 + 20 + 200 = 255.
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"), s)), 435))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(A (B C))"), s)), 255))
    // (C B A): 5 + 10 * 2 + 50 * 4 = 225.
    assert(close(cost(CostModel.logCostOrd(Seq("C", "B", "A"), s)), 225))
    // Candidates, omega = 1, band order A B C: a join tests PM(L) * PM(R) / |L| pairs (the
    // band of a left match of a rows is W / a long on average). ((A B) C): 10 * 20 / 1 = 200
    // at (A B), 200 * 5 / 2 = 500 at the root: 435 + 700. Orders: A B C = 410 + 700.
    val c = s.copy(candidateWeight = 1.0, bandOrder = Seq("A", "B", "C"))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("((A B) C)"), c)), 1135))
    assert(close(cost(CostModel.logCostOrd(Seq("A", "B", "C"), c)), 1110))
    // (A (B C)): (B C) 20 * 5 / 1 = 100; root 10 * PM(BC) 20 / 1 = 200: 255 + 300. Without a
    // band order, right matches starting within a window either side: twice PM(L) * PM(R).
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(A (B C))"), c)), 555))
    assert(close(cost(CostModel.logCostTree(JoinTree.parse("(A (B C))"), c.copy(bandOrder = Nil))),
        255 + 2 * 300))
    // Six rows: 2^15 / 5! = 273.07.
    assert(close(math.exp(s.logSpanFactor(6)), 32768.0 / 120))
    assert(abc.logSpanFactor(6) == 0.0)
  }

  test("span-aware Kleene bindings and negation pass rates shrink with the rows bound") {
    // PATTERN (A K+ C D E) WITHIN 1, K 2.2 rows per window: K+ between A and C. With m rows
    // in one window the gap between two neighbours is W * Beta(1, m - 1), and the expected
    // bindings E[e^(2.2 X)] - 1:
    //   m = 2, X uniform:          (e^2.2 - 1)/2.2 - 1            = 2.648
    //   m = 3, density 2(1 - x):   2 (e^2.2 - 1 - 2.2)/2.2^2 - 1  = 1.407
    val k = PatternStatistics(1, Map("A" -> 1.0, "C" -> 1.0, "D" -> 1.0, "E" -> 1.0),
      kleene = Map("K" -> (2.2, Set("A", "C"))), kleeneBounds = Map("K" -> (1, None)),
      spanAware = true)
    val e = math.exp(2.2)
    def near(a: Double, b: Double) = math.abs(a - b) <= 1e-3 * b
    assert(near(math.exp(k.logKleeneFactor("K", 2)), (e - 1) / 2.2 - 1))
    assert(near(math.exp(k.logKleeneFactor("K", 3)), 2 * (e - 1 - 2.2) / (2.2 * 2.2) - 1))
    // Measured 2.648 bindings per pair fix the rate at 2.2 rows per window, so m = 3 again
    // gives 1.407 (whatever the sample's rate said).
    val measured = k.copy(kleene = Map("K" -> (9.0, Set("A", "C"))),
      kleeneBindings = Map("K" -> ((e - 1) / 2.2 - 1)))
    assert(near(math.exp(measured.logKleeneFactor("K", 3)), 2 * (e - 1 - 2.2) / (2.2 * 2.2) - 1))
    // Four rows: PM(A C D E) = 1 * 2^6/3! * bindings(4); below it, bindings fall with m.
    val f = (2 to 6).map(m => k.logKleeneFactor("K", m))
    assert(f.zip(f.tail).forall { case (a, b) => b < a })
    assert(close(CostModel.logPM(Set("A", "C", "D", "E"), k),
        math.log(64.0 / 6) + k.logKleeneFactor("K", 4)))
    // Without spans, one Poisson value at a third of the window for every node.
    val flat = k.copy(spanAware = false)
    assert(flat.logKleeneFactor("K", 2) == flat.logKleeneFactor("K", 5))

    // A negation, 3 rows per window between A and C: E[e^(-3 X)]:
    //   m = 2: (1 - e^-3)/3 = 0.3167 (the pair-level rate);  m = 3: 2 (e^-3 - 1 + 3)/9 = 0.4555.
    val n = PatternStatistics(1, Map("A" -> 1.0, "C" -> 1.0, "D" -> 1.0),
      negations = Map("N" -> NegationStatistics(3.0, PatternStatistics.negationPassRate(3.0),
        Set("A", "C"))), spanAware = true)
    assert(near(math.exp(n.logNegationPass("N", 2)), (1 - math.exp(-3)) / 3))
    assert(near(math.exp(n.logNegationPass("N", 3)), 2 * (math.exp(-3) - 1 + 3) / 9))
    // A measured pass rate of 0.3167 stands for 3 rows per window, whatever the rate says.
    val nm = n.copy(negations = Map("N" -> NegationStatistics(0.1, (1 - math.exp(-3)) / 3,
      Set("A", "C"), measured = true)))
    assert(near(math.exp(nm.logNegationPass("N", 3)), 2 * (math.exp(-3) - 1 + 3) / 9))
    // ((A C) D): leaves 3, PM(AC) = 2 * 0.3167, root = 4 * 0.4555.
    assert(near(cost(CostModel.logCostTree(JoinTree.parse("((A C) D)"), n)),
        3 + 2 * (1 - math.exp(-3)) / 3 + 4 * 2 * (math.exp(-3) - 1 + 3) / 9))
  }
}
