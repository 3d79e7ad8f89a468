package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.AnalysisException

/** Join trees: building, parsing the forced-tree conf, random shapes (no Spark session). */
class JoinTreeSuite extends AnyFunSuite {

  private val (a, b, c, d) = (JoinLeaf("A"), JoinLeaf("B"), JoinLeaf("C"), JoinLeaf("D"))

  test("left-deep trees join in the given order") {
    val t = JoinTree.leftDeep(Seq("A", "B", "C"))
    assert(t == JoinNode(JoinNode(a, b), c))
    assert(t.isLeftDeep && t.leaves == Seq("A", "B", "C"))
    assert(t.sql == "((A ⋈ B) ⋈ C)")
    assert(JoinTree.leftDeep(Seq("A")) == a)
  }

  test("parse: nested parentheses give any shape; a flat list is left-deep") {
    assert(JoinTree.parse("((A C) B)") == JoinNode(JoinNode(a, c), b))
    assert(JoinTree.parse("(A B C)") == JoinNode(JoinNode(a, b), c))
    assert(JoinTree.parse("((a b) (c d))") == JoinNode(JoinNode(a, b), JoinNode(c, d)))
    assert(!JoinTree.parse("((A B) (C D))").isLeftDeep)
    assert(JoinTree.parse("(`x y` B)") == JoinNode(JoinLeaf("x y"), b))
  }

  test("parse errors name the tree") {
    for (bad <- Seq("(A B", "A B)", "()", "")) {
      val e = intercept[AnalysisException](JoinTree.parse(bad))
      assert(e.getMessage.contains("invalid join tree"), bad)
    }
  }

  test("nodes lists every subtree bottom-up; lowestCovering finds the attachment point") {
    val t = JoinTree.parse("((A B) (C D))")
    assert(t.nodes.size == 7)
    assert(t.nodes.last == t)
    assert(JoinTree.lowestCovering(t, Set("A", "B")) == JoinNode(a, b))
    assert(JoinTree.lowestCovering(t, Set("C")) == c)
    assert(JoinTree.lowestCovering(t, Set("B", "C")) == t)
  }

  test("random trees cover the variables once each and produce several shapes") {
    val vars = Seq("A", "B", "C", "D", "E")
    val rng = new scala.util.Random(7)
    val trees = (1 to 200).map(_ => JoinTree.random(vars, rng))
    trees.foreach(t => assert(t.leaves.sorted == vars))
    assert(trees.exists(_.isLeftDeep))
    assert(trees.exists(t => !t.isLeftDeep))
    assert(trees.map(_.sql).distinct.size > 50)
    // Seeded: the same seed gives the same tree.
    assert(JoinTree.random(vars, new scala.util.Random(3)) ==
      JoinTree.random(vars, new scala.util.Random(3)))
  }
}
