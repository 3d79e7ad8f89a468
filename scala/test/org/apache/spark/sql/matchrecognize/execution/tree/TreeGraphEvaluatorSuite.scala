package org.apache.spark.sql.matchrecognize.execution.tree

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeLeafSpec, TreeNegationSpec}

/**
 * The one-pass evaluation of `A B C WITHIN 10` (`B.v > A.v`), one tree evaluated alone,
 * against a brute force over the same events, under every tree shape; and its state
 * between events.
 */
class TreeGraphEvaluatorSuite extends AnyFunSuite with TreeEvents {

  override protected def variables: Seq[String] = Seq("A", "B", "C", "X")
  private val position = Map("A" -> 0, "B" -> 1, "C" -> 2)

  /** The evaluator of the tree given as nested pairs of variable names. */
  private def evaluator(tree: Any, maxBuffered: Long = Long.MaxValue): (TreeGraphEvaluator, Seq[String]) = {
    val (a, order) = alternativeOf(tree)
    (evaluatorOf(a, maxBuffered), order)
  }

  /** The alternative of the tree given as nested pairs of variable names, and its leaves' variables. */
  private def alternativeOf(tree: Any): (TreeAlternative, Seq[String]) =
    sequenceAsTree(tree, position, GreaterThan(v("B"), v("A")))

  private val rng = new scala.util.Random(7)
  private val events: Seq[(String, Long, Int)] = {
    var t = 0L
    (0 until 300).map { _ =>
      t += 1 + rng.nextInt(2) // distinct times: a match is told by its rows' times
      (Seq("a", "b", "c", "x")(rng.nextInt(4)), t, rng.nextInt(5))
    }
  }

  private val expected: Set[(Long, Long, Long)] = (for {
    (ea, ta, va) <- events if ea == "a"
    (eb, tb, vb) <- events if eb == "b" && tb > ta && vb > va
    (ec, tc, _) <- events if ec == "c" && tc > tb && tc - ta <= window
  } yield (ta, tb, tc)).toSet

  /** The (A, B, C) times of the matches, read from the match rows in leaf order. */
  private def run(
      tree: Any, evaluate: (TreeGraphEvaluator, TreeState, PartialMatch => Unit) => Unit): Seq[(Long, Long, Long)] = {
    val (e, order) = evaluator(tree)
    val out = mutable.ArrayBuffer.empty[(Long, Long, Long)]
    val state = e.newState()
    evaluate(e, state,
      { m =>
        val at = order.zipWithIndex.map { case (x, i) => x -> e.rowOf(0, m).getLong(2 * i) }.toMap
        out += ((at("A"), at("B"), at("C")))
      })
    out.toSeq
  }

  private def feedAll(e: TreeGraphEvaluator, s: TreeState, emit: PartialMatch => Unit): Unit =
    events.foreach { case (k, t, x) => e.add(s, event(k, t, x), Array(emit), () => "the test key") }

  for (tree <- Seq((("A", "B"), "C"), ("A", ("B", "C")), (("A", "C"), "B"), (("C", "B"), "A"),
        ("B", ("C", "A")))) {
    test(s"tree $tree finds exactly the brute force's matches, each once") {
      val got = run(tree, feedAll _)
      assert(expected.nonEmpty)
      assert(got.size == got.toSet.size)
      assert(got.toSet == expected)
    }
  }

  for (tree <- Seq((("A", "B"), "C"), ("A", ("B", "C")), (("C", "B"), "A"))) {
    test(s"tree $tree hands a pair sink its root matches unbuilt, the same as built ones") {
      val (e, order) = evaluator(tree)
      val pairRow = e.pairOutputRow(0, Nil)
      val state = e.newState()
      val out = mutable.ArrayBuffer.empty[(Long, Long, Long)]
      var built = 0
      val sink = new PairSink {
        override def apply(m: PartialMatch): Unit = built += 1
        override def pair(l: PartialMatch, r: PartialMatch): Unit = {
          e.pairRow(0, l, r)
          val row = pairRow.of(new UnsafeRow(0), math.min(l.lo, r.lo), math.max(l.hi, r.hi))
          val at = order.zipWithIndex.map { case (x, i) => x -> row.getLong(2 * i) }.toMap
          out += ((at("A"), at("B"), at("C")))
        }
      }
      feedAll(e, state, sink)
      assert(built == 0)
      assert(out.size == expected.size && out.toSet == expected)
      assert(state.matches == expected.size && state.created.last == expected.size)
    }
  }

  test("buffers keep only partial matches the window can still complete") {
    val (e, _) = evaluator((("A", "B"), "C"))
    val s = e.newState()
    val noEmit: PartialMatch => Unit = _ => ()
    Seq(("a", 0L, 0), ("b", 3L, 1), ("a", 5L, 0)).foreach { case (k, t, x) =>
      e.add(s, event(k, t, x), Array(noEmit), () => "k")
    }
    // A@0, A@5 and (A@0, B@3); B@3 probes A's buffer but is never buffered itself: every
    // partial match B can join with (an earlier A) has already arrived.
    assert(s.buffered == 3)
    e.add(s, event("x", 12L, 0), Array(noEmit), () => "k") // 12 - 10 = 2: A@0 expires
    assert(s.buffered == 2)
    e.add(s, event("x", 14L, 0), Array(noEmit), () => "k") // (A@0, B@3) ends at 3 < 14 - 10
    assert(s.buffered == 1)
    e.close(s, 20L, Array(noEmit), () => "k") // nothing that starts at or before 10 can match after 20
    assert(s.buffered == 0)
    assert(s.created.last == 0)
  }

  test("the state survives serialization between events") {
    val (half, rest) = events.splitAt(events.size / 2)
    val got = run((("A", "B"), "C"),
      { (e, s, emit) =>
        half.foreach { case (k, t, x) => e.add(s, event(k, t, x), Array(emit), () => "k") }
        val bytes = new ByteArrayOutputStream()
        new ObjectOutputStream(bytes).writeObject(s)
        val copy = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray))
          .readObject().asInstanceOf[TreeState]
        rest.foreach { case (k, t, x) => e.add(copy, event(k, t, x), Array(emit), () => "k") }
      })
    assert(got.toSet == expected && got.size == expected.size)
  }

  test("the buffer guard fails with an error naming its key and the group") {
    val (e, _) = evaluator((("A", "B"), "C"), maxBuffered = 5)
    val s = e.newState()
    val err = intercept[MatchRecognizeLimitException] {
      (0 until 20).foreach(i => e.add(s, event("a", i.toLong, 0), Array(_ => ()), () => "partition key (k=7)"))
    }
    assert(err.getMessage.contains("spark.sql.matchRecognize.maxBufferedPartialMatches"))
    assert(err.getMessage.contains("partition key (k=7)"))
  }

  test("a tree alone keeps its nodes in post order, then its negations, in its state and its metrics") {
    val (a, _) = alternativeOf(("A", ("B", "C")))
    val x = TreeLeafSpec("X", EqualTo(kind, Literal("x")), cols("X"))
    val negated = a.copy(negations = Seq(TreeNegationSpec(x, a.root, o("A"), Some(o("B")), None)))
    val nodes = Seq("A", "B", "C", "BC", "A(B,C)")
    assert(TreeUnits.bufferNames(Seq(negated), window) == Seq(nodes :+ "!X"))
    assert(evaluatorOf(negated).newState().buffers.length == nodes.size + 1)
    assert(TreeUnits.bufferNames(Seq(negated, a), window) ==
      Seq((nodes :+ "!X").map("[1] " + _), nodes.map("[2] " + _)))
  }
}
