package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.{EqualTo, GreaterThan, Literal}
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode, TreeLeafSpec, TreeNegationSpec, TreeNodeSpec}

/**
 * A group moving to another tree of its alternative mid-way: the next tree, built from the
 * rows the leaves of the tree left kept (`TreeRebuild`), writes exactly
 * the matches the tree left would have written from there on: with one tree run throughout,
 * the same matches, each once, for every pair of trees and point of the move, with negations
 * between two variables and after the last (whose matches are held when the move comes).
 */
class TreeRebuildSuite extends AnyFunSuite with TreeEvents {

  override protected def variables: Seq[String] = Seq("A", "B", "C", "X")
  private val position = Map("A" -> 0, "B" -> 1, "C" -> 2)
  private val trees: Seq[Any] =
    Seq((("A", "B"), "C"), ("A", ("B", "C")), (("A", "C"), "B"), (("C", "B"), "A"), ("B", ("C", "A")))

  private val rng = new scala.util.Random(11)
  private val events: Seq[(String, Long, Int)] = {
    var t = 0L
    (0 until 400).map { _ =>
      t += 1 + rng.nextInt(2)
      (Seq("a", "b", "c", "x")(rng.nextInt(4)), t, rng.nextInt(5))
    }
  }

  private val x = TreeLeafSpec("X", EqualTo(kind, Literal("x")), cols("X"))

  /** The smallest node of `root` binding every variable of `vars`. */
  private def covering(a: TreeAlternative, root: TreeNodeSpec, vars: Set[String]): TreeNodeSpec = root match {
    case j: TreeJoinNode =>
      Seq(j.left, j.right).find(c => vars.subsetOf(c.leafIndexes.map(a.leaves(_).variable).toSet))
        .map(covering(a, _, vars)).getOrElse(root)
    case leaf => leaf
  }

  private val negations: Map[String, TreeAlternative => TreeAlternative] = Map(
    "none" -> identity,
    "A !X B C" -> (a =>
      a.copy(negations = Seq(
        TreeNegationSpec(x, covering(a, a.root, Set("A", "B")), o("A"), Some(o("B")), None)))),
    "A B C !X" -> (a => a.copy(negations = Seq(TreeNegationSpec(x, a.root, o("C"), None, None)))))

  private def evaluatorOf(tree: Any, negation: String): (TreeGraphEvaluator, Seq[String]) = {
    val (a, order) = sequenceAsTree(tree, position, GreaterThan(v("B"), v("A")))
    (new TreeGraphEvaluator(Seq(negations(negation)(a)), Seq(window), input, time, time, time,
        narrowByOrder = true, Long.MaxValue, keepsLeaves = true), order)
  }

  /** The (A, B, C) times of the matches of `negation` over the events, moving tree at each of `moves`. */
  private def run(path: Seq[Any], moves: Seq[Int], negation: String): Seq[(Long, Long, Long)] = {
    val out = mutable.ArrayBuffer.empty[(Long, Long, Long)]
    val evaluators = path.map(evaluatorOf(_, negation))
    var current = 0
    def emit(i: Int): Array[PartialMatch => Unit] = Array { m =>
      val (e, order) = evaluators(i)
      val at = order.zipWithIndex.map { case (x, k) => x -> e.rowOf(0, m).getLong(2 * k) }.toMap
      out += ((at("A"), at("B"), at("C")))
    }
    var state = evaluators.head._1.newState()
    events.zipWithIndex.foreach { case ((k, t, value), i) =>
      if (moves.contains(i)) {
        val next = evaluators(current + 1)._1.newState()
        TreeRebuild(evaluators(current)._1, state, evaluators(current + 1)._1, next, emit(current + 1), () => "k")
        assert(state.buffered == 0 && state.held.isEmpty)
        state = next
        current += 1
      }
      evaluators(current)._1.add(state, event(k, t, value), emit(current), () => "k")
    }
    evaluators(current)._1.finish(state, emit(current), () => "k")
    out.toSeq
  }

  for (negation <- negations.keys.toSeq.sorted) {
    test(s"$negation: a move to any other tree at any row loses and repeats no match") {
      val expected = run(Seq(trees.head), Nil, negation)
      assert(expected.nonEmpty && expected.size == expected.toSet.size)
      for (from <- trees; to <- trees if to != from; at <- Seq(1, 57, 200, 399)) {
        val got = run(Seq(from, to), Seq(at), negation)
        assert(got.size == got.toSet.size, (from, to, at))
        assert(got.toSet == expected.toSet, (from, to, at))
      }
    }
  }

  test("a group moving every few rows among all the trees writes the same matches") {
    for (negation <- negations.keys) {
      val expected = run(Seq(trees.head), Nil, negation).toSet
      val path = Iterator.continually(trees).flatten.take(80).toSeq
      val got = run(path, (1 until 80).map(_ * 5), negation)
      assert(got.size == got.toSet.size && got.toSet == expected, negation)
    }
  }

  test("the next tree holds the rows and partial matches a tree of its shape would") {
    val (left, _) = evaluatorOf(("A", ("B", "C")), "none")
    val (right, _) = evaluatorOf((("A", "B"), "C"), "none")
    val (moved, alone, noEmit) = (left.newState(), right.newState(), Array[PartialMatch => Unit](_ => ()))
    events.take(100).foreach { case (k, t, value) =>
      left.add(moved, event(k, t, value), noEmit, () => "k")
      right.add(alone, event(k, t, value), noEmit, () => "k")
    }
    val rebuilt = right.newState()
    val rows = TreeRebuild(left, moved, right, rebuilt, noEmit, () => "k")
    // Every leaf's rows within the window, kept alike by both trees (post order: A, B, AB, C).
    assert(rows == Seq(0, 1, 3).map(i => alone.buffers(i).size).sum)
    // Once the next event has closed the window, every buffer alike in the partial matches
    // a later row can still complete (a tree keeps others until their last row expires).
    val (k, t, value) = events(100)
    right.add(rebuilt, event(k, t, value), noEmit, () => "k")
    right.add(alone, event(k, t, value), noEmit, () => "k")
    def live(s: TreeState) = s.buffers.map(_.iterator.filter(_.lo >= t - window).map(m => m.rows.toSeq).toSet).toSeq
    assert(live(rebuilt) == live(alone))
    // (A B) is the left tree's partial matches, which the right one never made.
    assert(live(rebuilt)(2).nonEmpty)
  }
}
