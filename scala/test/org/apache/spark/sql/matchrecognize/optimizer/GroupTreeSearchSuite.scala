package org.apache.spark.sql.matchrecognize.optimizer

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.matchrecognize.compile.anymatch.{GroupSharing, JoinNode, JoinTree}
import org.apache.spark.sql.matchrecognize.optimizer.algorithms.DpBushy
import org.apache.spark.sql.matchrecognize.optimizer.cost.PatternStatistics

class GroupTreeSearchSuite extends AnyFunSuite {

  private def close(a: Double, b: Double, tolerance: Double): Boolean = math.abs(a - b) <= tolerance

  /**
   * Patterns without conditions between their variables, whose variables stand for the
   * leaves named by `leafOf`: two nodes are alike when they join the same leaves in the
   * same shape.
   */
  private final class Patterns(vars: Seq[Seq[String]], leafOf: Seq[Map[String, String]]) extends GroupSharing {
    def shareable: Seq[Int] = vars.indices
    private def global(m: Int, t: JoinTree): JoinTree = GroupTreeSearch.renamed(t, leafOf(m))
    def nodeKeys(m: Int, tree: JoinTree): Seq[(JoinTree, Any)] = tree.nodes.map(n => n -> global(m, n).sql)
    private def subsets(m: Int): Seq[Seq[String]] = (2 to vars(m).size).flatMap(vars(m).combinations)
    def common(a: Int, b: Int): Seq[(Seq[String], Seq[String])] = subsets(a).flatMap { va =>
      subsets(b).find(_.map(leafOf(b)) == va.map(leafOf(a))).map(va -> _)
    }
    def offersAfter(m: Int, before: Seq[(Int, JoinTree)]): Seq[(JoinTree, Double)] = {
      val mine = leafOf(m).map(_.swap)
      before.flatMap { case (b, t) =>
        t.nodes.collect { case n: JoinNode => global(b, n) }.filter(_.variables.subsetOf(mine.keySet))
          .map(n => GroupTreeSearch.renamed(n, mine) -> Double.PositiveInfinity)
      }
    }
  }

  private def search(patterns: Patterns, vars: Seq[Seq[String]], stats: Seq[PatternStatistics]) =
    new GroupTreeSearch(vars.indices, vars, stats,
      (m, vs, offers) => DpBushy.plan(vs, stats(m).copy(computed = offers)), patterns, seed = 7L,
      budgetNanos = Long.MaxValue, maxSteps = 200)

  // A B C and X Y Z over leaves a, b, c and a, b, d: a and b ten rows per window, c and d
  // `rare` (no conditions: a node's partial matches are its leaves' rows multiplied).
  private val vars = Seq(Seq("A", "B", "C"), Seq("X", "Y", "Z"))
  private val leaves = Seq(Map("A" -> "a", "B" -> "b", "C" -> "c"), Map("X" -> "a", "Y" -> "b", "Z" -> "d"))
  private def stats(rare: Double) = Seq(
    PatternStatistics(1, Map("A" -> 10.0, "B" -> 10.0, "C" -> rare)),
    PatternStatistics(1, Map("X" -> 10.0, "Y" -> 10.0, "Z" -> rare)))

  test("a node both patterns need, cheaper paid once than each pattern's own, is shared") {
    // Alone each joins c (or d) first: 90 partial matches against (a ⋈ b)'s 100, then 900
    // at the root. Together one (a ⋈ b) serves both roots.
    val s = stats(9)
    val patterns = new Patterns(vars, leaves)
    val result = search(patterns, vars, s).run()
    assert(result.trees(0).nodes.exists(_.variables == Set("A", "B")))
    assert(result.trees(1).nodes.exists(_.variables == Set("X", "Y")))
    // The leaves a, b, c, d once each, then the joins.
    assert(close(math.exp(result.logCost), (38 + 100 + 900 + 900.0), 1e-6))
    assert(close(math.exp(result.logOwnCost), (38 + 90 + 900 + 90 + 900.0), 1e-6))
    assert(close(result.logCost, search(patterns, vars, s).logCost(result.trees), 1e-12))
  }

  test("patterns keep their own trees when sharing costs more") {
    // c and d one row per window: (a ⋈ c) and (a ⋈ d) of 10 each beat one (a ⋈ b) of 100.
    val s = stats(1)
    val result = search(new Patterns(vars, leaves), vars, s).run()
    assert(result.trees.values.forall(!_.nodes.exists(n =>
          n.variables.size == 2 && n.variables.forall(v => v == "A" || v == "B" || v == "X" || v == "Y"))))
    assert(close(math.exp(result.logCost), (22 + 10 + 100 + 10 + 100.0), 1e-6))
    assert(close(result.logCost, result.logOwnCost, 1e-12))
  }

  test("the plan found is never dearer than each pattern's own tree or the greedy choice") {
    val random = new scala.util.Random(11)
    (1 to 40).foreach { _ =>
      val names = Seq("a", "b", "c", "d", "e")
      val patterns = (0 until 4).map(_ => random.shuffle(names).take(3 + random.nextInt(2)).sorted)
      val vs = patterns.indices.map(m => patterns(m).indices.map(i => s"V${m}_$i"))
      val leafOf = patterns.indices.map(m => vs(m).zip(patterns(m)).toMap)
      val rates = names.map(_ -> math.pow(10, random.nextDouble() * 3 - 1)).toMap
      val st = vs.indices.map(m => PatternStatistics(1, vs(m).map(v => v -> rates(leafOf(m)(v))).toMap))
      val result = search(new Patterns(vs, leafOf), vs, st).run()
      assert(result.logCost <= result.logOwnCost + 1e-9)
      assert(result.logCost <= result.logInTurnCost + 1e-9)
      result.trees.foreach { case (m, t) => assert(t.variables == vs(m).toSet) }
    }
  }
}
