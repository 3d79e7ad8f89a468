package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.{KleeneOutput, TreeJoinNode, TreeKleeneSpec, TreeLeafNode, TreeLeafSpec}
import org.apache.spark.sql.types.{ArrayType, IntegerType, LongType, StructField, StructType}

/**
 * Kleene closures in the one-pass tree, on their own: `A X{min,max} C` (a closure between
 * elements whose rows must not fall, `X.v >= LAST(X.v, 1)`) and `A C X{min,max}` (a closure
 * ending the pattern, whose matches wait for the window), WITHIN 10, against a brute force
 * over the subsets of the same events; and the guard on bindings per match.
 */
class TreeKleenesSuite extends AnyFunSuite with TreeEvents {

  override protected def variables: Seq[String] = Seq("A", "C", "X")
  private def leaf(x: String) = TreeLeafSpec(x, EqualTo(kind, Literal(x.toLowerCase)), cols(x))

  private val previous = AttributeReference("X#prev_v", IntegerType)()
  private val rowsOfX = AttributeReference("X#rows",
    ArrayType(StructType(Seq(StructField("o", LongType, nullable = false))), containsNull = false))()

  /** The evaluator of `A C` joined at the root, with closure X between them or after them. */
  private def evaluator(
      min: Int, max: Option[Int], trailing: Boolean, maxBindings: Long = 1000L): TreeGraphEvaluator = {
    val root = TreeJoinNode(TreeLeafNode(0), TreeLeafNode(1), LessThan(o("A"), o("C")), 1, "(A C)")
    val closure = TreeKleeneSpec(leaf("X"), min, max,
      lower = Some(if (trailing) o("C") else o("A")), upper = if (trailing) None else Some(o("C")),
      rowCondition = Some(Or(IsNull(previous), GreaterThanOrEqual(v("X"), previous))),
      previous = Seq(v("X") -> previous), outputs = Seq(KleeneOutput.Rows(rowsOfX, Seq(o("X")))),
      firstOrder = AttributeReference("X#first_o", LongType)(),
      lastOrder = AttributeReference("X#last_o", LongType)(), maxBindings = maxBindings, description = "X")
    evaluatorOf(alternative(Seq(leaf("A"), leaf("C")), root, kleenes = Seq(closure)))
  }

  private val rng = new scala.util.Random(11)
  private val events: Seq[(String, Long, Int)] = {
    var t = 0L
    (0 until 200).map { _ =>
      t += 1 + rng.nextInt(2)
      (Seq("a", "c", "x", "x", "y")(rng.nextInt(5)), t, rng.nextInt(4))
    }
  }

  /** (A's time, C's time, X's times) of every match the brute force finds. */
  private def expected(min: Int, max: Option[Int], trailing: Boolean): Seq[(Long, Long, Seq[Long])] = {
    def rising(xs: Seq[(String, Long, Int)]) = xs.zip(xs.drop(1)).forall { case (p, q) => q._3 >= p._3 }
    for {
      (ea, ta, _) <- events if ea == "a"
      (ec, tc, _) <- events if ec == "c" && tc > ta && tc - ta <= window
      xs = events.filter { case (e, t, _) =>
        e == "x" && (if (trailing) t > tc && t - ta <= window else t > ta && t < tc)
      }
      n <- min to max.getOrElse(xs.size).min(xs.size)
      chosen <- xs.combinations(n) if rising(chosen)
    } yield (ta, tc, chosen.map(_._2))
  }

  private def matches(
      e: TreeGraphEvaluator, out: mutable.ArrayBuffer[(Long, Long, Seq[Long])]): Array[PartialMatch => Unit] =
    Array { m =>
      val row = e.rowOf(0, m)
      val xs = row.getArray(4)
      out += ((row.getLong(0), row.getLong(2), (0 until xs.numElements()).map(i => xs.getStruct(i, 1).getLong(0))))
      ()
    }

  for ((min, max) <- Seq((1, None), (0, None), (1, Some(2)))) {
    test(s"a closure X{$min,${max.getOrElse("")}} between elements: every rising subset, once") {
      val e = evaluator(min, max, trailing = false)
      val s = e.newState()
      val out = mutable.ArrayBuffer.empty[(Long, Long, Seq[Long])]
      events.foreach { case (k, t, x) => e.add(s, event(k, t, x), matches(e, out), () => "k") }
      val want = expected(min, max, trailing = false)
      assert(want.nonEmpty && want.exists(_._3.size >= 2))
      assert(out.sortBy(_.toString) == want.sortBy(_.toString))
    }

    test(s"a closure X{$min,${max.getOrElse("")}} ending the pattern: matches wait for the window") {
      val e = evaluator(min, max, trailing = true)
      val s = e.newState()
      val out = mutable.ArrayBuffer.empty[(Long, Long, Seq[Long])]
      events.foreach { case (k, t, x) => e.add(s, event(k, t, x), matches(e, out), () => "k") }
      val last = events.last._2
      // Nothing is written whose window the events have not passed.
      assert(out.forall(_._1 + window < last))
      val held = s.held.size
      assert(held > 0)
      e.finish(s, matches(e, out), () => "k")
      assert(s.held.isEmpty)
      val want = expected(min, max, trailing = true)
      assert(want.nonEmpty && want.exists(_._3.size >= 2))
      assert(out.sortBy(_.toString) == want.sortBy(_.toString))
    }
  }

  test("more bindings than maxKleeneBindings for one match fail naming the closure and the key") {
    val e = evaluator(1, None, trailing = false, maxBindings = 3)
    val s = e.newState()
    val err = intercept[MatchRecognizeLimitException] {
      (Seq(("a", 0L, 0)) ++ (1 to 5).map(i => ("x", i.toLong, i)) :+ (("c", 7L, 0))).foreach {
        case (k, t, x) => e.add(s, event(k, t, x), Array(_ => ()), () => "partition key (k=7)")
      }
    }
    assert(err.getMessage.contains("spark.sql.matchRecognize.maxKleeneBindings"))
    assert(err.getMessage.contains("partition key (k=7)"))
    assert(err.getMessage.contains("closure X"))
  }
}
