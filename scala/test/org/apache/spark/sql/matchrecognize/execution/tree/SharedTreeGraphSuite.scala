package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode, TreeLeafNode, TreeLeafSpec, TreeNodeSpec}
import org.apache.spark.sql.types.LongType

/**
 * Several patterns over one list of leaves evaluated as one graph: each pattern's matches
 * against a brute force over the same events, with a node shared by trees of different
 * windows; and the graph itself (shared nodes counted once).
 */
class SharedTreeGraphSuite extends AnyFunSuite with TreeEvents {
  import SharedTreeGraphSuite.Pattern

  override protected def variables: Seq[String] = Seq("A", "B", "C", "D")
  private val leaves = variables.map(x => TreeLeafSpec(x, EqualTo(kind, Literal(x.toLowerCase)), cols(x)))
  private val index = variables.zipWithIndex.toMap

  /** The tree given as nested pairs, each join ordered as the pattern `order`, `B.v > A.v` where it binds both. */
  private def tree(t: Any, order: Seq[String]): TreeNodeSpec = {
    def vars(t: Any): Seq[String] = t match {
      case s: String => Seq(s)
      case (l, r) => vars(l) ++ vars(r)
    }
    t match {
      case s: String => TreeLeafNode(index(s))
      case (l, r) =>
        val (ls, rs) = (vars(l), vars(r))
        val before = (x: String, y: String) => order.indexOf(x) < order.indexOf(y)
        val ordering = for (x <- ls; y <- rs) yield {
          if (before(x, y)) LessThan(o(x), o(y)) else LessThan(o(y), o(x)): Expression
        }
        val bindsAB = (ls.contains("A") && rs.contains("B")) || (ls.contains("B") && rs.contains("A"))
        val cond = if (bindsAB) ordering :+ GreaterThan(v("B"), v("A")) else ordering
        val dir =
          if (ls.forall(x => rs.forall(before(x, _)))) 1 else if (rs.forall(y => ls.forall(before(y, _)))) -1 else 0
        TreeJoinNode(tree(l, order), tree(r, order), cond.reduce(And), dir, s"$l$r")
    }
  }

  private val patterns = Seq(
    Pattern(Seq("A", "B", "C"), (("A", "B"), "C"), 10),
    Pattern(Seq("A", "B"), ("A", "B"), 4),
    Pattern(Seq("A", "B", "D"), (("A", "B"), "D"), 7),
    Pattern(Seq("B", "C"), ("B", "C"), 10),
    Pattern(Seq("A", "B", "C"), ("A", ("B", "C")), 6))

  private val alternatives = patterns.map { p =>
    TreeAlternative(leaves, tree(p.shape, p.order), Nil, AttributeReference("#lo", LongType)(),
      AttributeReference("#hi", LongType)(), p.order.mkString(" "), Nil, window = Some(p.window))
  }

  private val rng = new scala.util.Random(11)
  private val events: Seq[(String, Long, Int)] = {
    var t = 0L
    (0 until 400).map { _ =>
      t += 1 + rng.nextInt(2)
      (Seq("a", "b", "c", "d", "x")(rng.nextInt(5)), t, rng.nextInt(5))
    }
  }

  /** Every match of `p` by brute force: the times of its rows in pattern order. */
  private def expected(p: Pattern): Set[Seq[Long]] = {
    def extend(prefix: Seq[(String, Long, Int)], rest: Seq[String]): Seq[Seq[(String, Long, Int)]] =
      rest match {
        case Seq() => Seq(prefix)
        case x +: more =>
          events.filter { case (e, t, _) =>
            e == x.toLowerCase && prefix.lastOption.forall(_._2 < t) &&
            prefix.headOption.forall(h => t - h._2 <= p.window)
          }.flatMap(ev => extend(prefix :+ ev, more))
      }
    extend(Nil, p.order).filter { m =>
      val at = p.order.zip(m).toMap
      !(at.contains("A") && at.contains("B")) || at("B")._3 > at("A")._3
    }.map(_.map(_._2)).toSet
  }

  test("every pattern of a shared graph finds its own matches, within its own window") {
    val e = new TreeGraphEvaluator(alternatives, patterns.map(_.window), input, time, time, time,
      narrowByOrder = true, Long.MaxValue)
    val found = patterns.indices.map(_ => mutable.ArrayBuffer.empty[Seq[Long]])
    val emits: Array[PartialMatch => Unit] = patterns.indices.map { t => (m: PartialMatch) =>
      val row = e.rowOf(t, m)
      val leafOrder = alternatives(t).root.leafIndexes
      val at = leafOrder.zipWithIndex.map { case (k, i) => variables(k) -> row.getLong(2 * i) }.toMap
      found(t) += patterns(t).order.map(at)
      ()
    }.toArray
    val state = e.newState()
    events.foreach { case (k, t, x) => e.add(state, event(k, t, x), emits, () => "the test") }
    patterns.indices.foreach { t =>
      assert(found(t).size == found(t).toSet.size, s"pattern $t: a match twice")
      assert(found(t).toSet == expected(patterns(t)), s"pattern $t")
      assert(found(t).nonEmpty, s"pattern $t has matches")
    }
    // (A B) is one node for three trees; (B C) is its own, as is (A (B C))'s.
    val names = TreeUnits.bufferNames(alternatives, window).flatten
    assert(e.nodeCount == 4 + 1 + 1 + 1 + 1 + 1 && names.size == e.nodeCount, names)
    assert(names.contains("[1,2,3] AB"), names)
  }

  test("the units of an operator: shareable alternatives over one list of leaves, the rest alone") {
    val other = alternatives.head.copy(leaves = leaves.reverse)
    assert(SharedTreeGraph.units(alternatives :+ other) == Seq(Seq(0, 1, 2, 3, 4), Seq(5)))
    assert(SharedTreeGraph.units(Seq(alternatives.head)) == Seq(Seq(0)))
  }
}

object SharedTreeGraphSuite {
  final case class Pattern(order: Seq[String], shape: Any, window: Long)
}
