package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.SparkArithmeticException
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.util.SQLOrderingUtil
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode}
import org.apache.spark.sql.types.DoubleType
import org.apache.spark.unsafe.types.UTF8String

/**
 * Probes that look their partners up by a compared value ([[NodeValueIndex]]) find the
 * very matches, in the very order, that probes testing every buffered match find: for
 * each comparison, with nulls, NaN and -0.0 among the values, under several tree shapes,
 * and with a condition that fails on some rows.
 */
class NodeValueIndexSuite extends AnyFunSuite with TreeEvents {

  override protected def variables: Seq[String] = Seq("A", "B", "C")
  private val position = Map("A" -> 0, "B" -> 1, "C" -> 2)

  test("doubles map to longs that sort as Spark compares them") {
    val rng = new scala.util.Random(3)
    val special = Seq(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity,
      Double.MinPositiveValue, -Double.MinPositiveValue, Double.MaxValue, -Double.MaxValue,
      java.lang.Double.longBitsToDouble(0x7ff8000000000123L))
    val values = special ++ Seq.fill(200)(rng.nextGaussian() * math.pow(10, rng.nextInt(20) - 10))
    for (a <- values; b <- values) {
      val expected = Integer.signum(SQLOrderingUtil.compareDoubles(a, b))
      val got = Integer.signum(java.lang.Long.compare(IndexedComparison.sortable(a), IndexedComparison.sortable(b)))
      assert(got == expected, s"$a vs $b")
    }
  }

  /** `A B C` as `tree` (nested pairs), with `condition(A's value, B's value)` where A and B meet. */
  private def alternativeOf(tree: Any, condition: (Expression, Expression) => Expression): TreeAlternative =
    sequenceAsTree(tree, position, condition(v("A"), v("B")))._1

  private val rng = new scala.util.Random(11)
  private val events: Seq[InternalRow] = {
    var t = 0L
    (0 until 400).map { _ =>
      t += 1 + rng.nextInt(2)
      val x = if (rng.nextInt(8) == 0) null else Integer.valueOf(rng.nextInt(7))
      InternalRow(UTF8String.fromString(Seq("a", "b", "c")(rng.nextInt(3))), t, x)
    }
  }

  /** The match rows (A, B, C times, in emission order), or the error, with the index used from `indexFrom` matches. */
  private def run(a: TreeAlternative, indexFrom: Int): Either[Throwable, Seq[Seq[Long]]] = {
    val e = new TreeGraphEvaluator(Seq(a), Seq(window), input, time, time, time, narrowByOrder = true,
      Long.MaxValue, indexFrom = indexFrom)
    val leafOrder = a.root.leafIndexes.map(a.leaves(_).variable)
    val out = mutable.ArrayBuffer.empty[Seq[Long]]
    val state = e.newState()
    val emit: PartialMatch => Unit = { m =>
      val row = e.rowOf(0, m)
      out += Seq("A", "B", "C").map(x => row.getLong(2 * leafOrder.indexOf(x)))
    }
    try {
      events.foreach(ev => e.add(state, ev, Array(emit), () => "the test key"))
      scala.util.Right(out.toSeq)
    } catch {
      case err: SparkArithmeticException => scala.util.Left(err)
    }
  }

  // A value with NaN (A's 3), -0.0 (0) and the others as doubles.
  private def special(x: Expression): Expression =
    If(EqualTo(x, Literal(3)), Literal(Double.NaN),
      If(EqualTo(x, Literal(0)), Literal(-0.0), Cast(x, DoubleType)))

  private val conditions: Seq[(String, (Expression, Expression) => Expression)] = Seq(
    "B.v > A.v" -> ((a, b) => GreaterThan(b, a)),
    "B.v >= A.v + 1" -> ((a, b) => GreaterThanOrEqual(b, Add(a, Literal(1)))),
    "B.v < A.v" -> ((a, b) => LessThan(b, a)),
    "A.v <= B.v - 2" -> ((a, b) => LessThanOrEqual(a, Subtract(b, Literal(2)))),
    "B.v = A.v" -> ((a, b) => EqualTo(b, a)),
    "B.v <> A.v AND B.v < A.v + 3" -> ((a, b) => And(Not(EqualTo(b, a)), LessThan(b, Add(a, Literal(3))))),
    "doubles: B > A with NaN and -0.0" -> ((a, b) => GreaterThan(special(b), special(a))),
    "doubles: B = A with NaN and -0.0" -> ((a, b) => EqualTo(special(b), Cast(a, DoubleType))),
    "doubles: A <= B" -> ((a, b) => LessThanOrEqual(special(a), special(b))))

  for ((name, condition) <- conditions;
      tree <- Seq((("A", "B"), "C"), ("A", ("B", "C")),
        (("A", "C"), "B"), (("C", "B"), "A"))) {
    test(s"$name, tree $tree: looked up = tested, in the same order") {
      val a = alternativeOf(tree, condition)
      val indexed = run(a, indexFrom = 0)
      val scanned = run(a, indexFrom = Int.MaxValue)
      assert(scanned.isRight && scanned.toOption.get.nonEmpty)
      assert(indexed == scanned)
    }
  }

  test("the comparison is found where A and B meet, not between ORDER BY positions") {
    val a = alternativeOf((("A", "B"), "C"), (x, y) => GreaterThan(y, x))
    val ab = a.root.asInstanceOf[TreeJoinNode].left.asInstanceOf[TreeJoinNode]
    def find(c: Expression) = IndexedComparison.find(c, ab.left.leafIndexes, ab.right.leafIndexes,
      bufferedIsLeft = true, a.leaves, x => Seq("A", "B", "C").exists(o(_).exprId == x.exprId))
    // B.v > A.v: the buffered A's value below the probing B's.
    assert(find(ab.condition).map(_.code).contains(
        org.apache.spark.sql.matchrecognize.plans.CountedSequence.Pair.BELOW))
    assert(find(LessThan(o("A"), o("B"))).isEmpty)
    assert(find(EqualTo(Add(v("A"), v("B")), Literal(3))).isEmpty)
  }

  test("a condition that fails on some rows fails the same way looked up") {
    // 10 / (A.v - 2) divides by zero where A.v = 2 (ANSI): that A's value is not known, so
    // every probe tests it, and the error comes as it does when every match is tested.
    val a = alternativeOf((("A", "B"), "C"),
      (x, y) =>
        GreaterThan(Cast(y, DoubleType),
          Divide(Literal(10.0), Cast(Subtract(x, Literal(2)), DoubleType), EvalMode.ANSI)))
    val indexed = run(a, indexFrom = 0)
    val scanned = run(a, indexFrom = Int.MaxValue)
    assert(scanned.isLeft && indexed.isLeft)
    assert(indexed.left.toOption.get.getMessage == scanned.left.toOption.get.getMessage)
  }

  test("the index follows purges and a buffer renumbered under it") {
    val a = alternativeOf((("A", "B"), "C"), (x, y) => LessThan(y, x))
    val e = new TreeGraphEvaluator(Seq(a), Seq(window), input, time, time, time, narrowByOrder = true,
      Long.MaxValue, indexFrom = 0)
    val scan = new TreeGraphEvaluator(Seq(a), Seq(window), input, time, time, time, narrowByOrder = true,
      Long.MaxValue, indexFrom = Int.MaxValue)
    val (s1, s2) = (e.newState(), scan.newState())
    var (n1, n2) = (0, 0)
    events.zipWithIndex.foreach { case (ev, i) =>
      e.add(s1, ev, Array(_ => n1 += 1), () => "k")
      scan.add(s2, ev, Array(_ => n2 += 1), () => "k")
      // As a state read back from its entries is numbered afresh.
      if (i == 200) s1.buffers.foreach(_.numberFrom(0L))
    }
    assert(n2 > 0 && n1 == n2)
    assert(s1.indexes != null && s1.indexes.exists(_ != null))
  }
}
