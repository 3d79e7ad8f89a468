package org.apache.spark.sql.matchrecognize.optimizer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.compile.anymatch.JoinTree
import org.apache.spark.sql.matchrecognize.optimizer.cost.{NegationStatistics, OnePassFootprint, PatternStatistics}

/** What the one pass buffers per key, against sums worked out by hand (no Spark session). */
class OnePassFootprintSuite extends AnyFunSuite {

  // PATTERN (A B C) WITHIN 10: rows per window A 10, B 20, C 5; sel(A,B) = 0.5, sel(B,C) = 0.1.
  private val abc = PatternStatistics(10, Map("A" -> 1.0, "B" -> 2.0, "C" -> 0.5),
    Map(("A", "B") -> 0.5, ("B", "C") -> 0.1))

  private def close(a: Double, b: Double) = math.abs(a - b) <= 1e-9 * math.max(1, math.abs(b))
  private def footprint(tree: String, s: PatternStatistics, orders: JoinTree => Int = _ => 1) =
    OnePassFootprint.perKey(JoinTree.parse(tree), s, orders)

  test("every node below the root buffers its partial matches of one window; the root none") {
    // ((A B) C): leaves 10 + 20 + 5, PM(AB) = 100; the root's 50 matches are written, not kept.
    assert(close(footprint("((A B) C)", abc), 135))
    // (A (B C)): leaves 35, PM(BC) = 10.
    assert(close(footprint("(A (B C))", abc), 45))
    // A one-variable tree is its root: nothing is buffered.
    assert(close(footprint("A", abc), 0))
  }

  test("a closure's rows are buffered, and it multiplies no node (it extends complete matches)") {
    val s = abc.copy(kleene = Map("K" -> (0.3, Set("A", "B"))), kleeneBounds = Map("K" -> (1, None)))
    assert(close(footprint("((A B) C)", s), 135 + 3))
  }

  test("a negation's rows are buffered, and its pass rate thins the node that checks it") {
    val s = abc.copy(negations = Map("D" -> NegationStatistics(0.2, 0.5, Set("A", "B"))))
    // PM(AB) = 100 * 0.5, plus D's 2 rows of one window.
    assert(close(footprint("((A B) C)", s), 35 + 50 + 2))
  }

  test("a conjunction's node keeps every order of its variables") {
    val orders = (n: JoinTree) => if (n.variables.size == 2) 2 else 1
    assert(close(footprint("((A B) C)", abc, orders), 35 + 200))
  }
}
