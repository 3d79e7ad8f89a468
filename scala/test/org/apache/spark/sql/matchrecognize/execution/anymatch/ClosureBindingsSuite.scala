package org.apache.spark.sql.matchrecognize.execution.anymatch

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, PartitionKeyText}
import org.apache.spark.sql.matchrecognize.plans.KleeneOutput
import org.apache.spark.sql.types.{IntegerType, LongType}

/**
 * The closure and negation kernels on their own: the bindings of `B{min,max}` between two
 * neighbours (WITHIN 10, window positions equal to ORDER BY positions) against a brute force
 * over the subsets of the same B rows; the outputs of a binding; the limit error; and where
 * a negation's band forbids rows.
 */
class ClosureBindingsSuite extends AnyFunSuite {
  import ClosureBindingsSuite.BRow

  // The partial match: its neighbours' ORDER BY positions. A B row: its value.
  private val lower = AttributeReference("A#o", LongType)()
  private val upper = AttributeReference("C#o", LongType)()
  private val b = AttributeReference("B#v", IntegerType)()
  private val previousB = AttributeReference("B#prev_v", IntegerType)()
  private val window = 10L

  private def kernel(min: Int, max: Option[Int], condition: Option[Expression] = None, limit: Long = 1000L) =
    new ClosureBindings[BRow]("B+", min, max, Some(lower), Some(upper), window, limit, condition,
      Seq(lower, upper), Seq(b), Seq(b -> previousB)) {
      override protected def orderOf(c: BRow): Long = c.at
      override protected def loOf(c: BRow): Long = c.at
      override protected def hiOf(c: BRow): Long = c.at
      override protected def rowOf(c: BRow): InternalRow = c.row
    }

  /** Every binding, as the positions it chose and its span with the match. */
  private def bindingsOf(k: ClosureBindings[BRow], neighbours: (Any, Any), lo: Long, hi: Long,
      rows: Seq[BRow]): Seq[(List[Long], Long, Long)] = {
    k.open(InternalRow(neighbours._1, neighbours._2), lo, hi)
    rows.foreach(k.offer)
    val out = mutable.ArrayBuffer.empty[(List[Long], Long, Long)]
    k.foreachBinding(() => "partition key (k=1) in one time slice") { (l, h) =>
      out += (((0 until k.chosenCount).map(k.chosenOrder).toList, l, h))
    }
    out.toSeq
  }

  // B rows at 1..9, offered out of order as a band sorted by start may offer them; value:
  // the position modulo 4.
  private val rows = Seq(5L, 1L, 3L, 2L, 9L, 4L, 8L, 6L, 7L).map(p => BRow(p, (p % 4).toInt))
  private val rising = Some(Or(IsNull(previousB), GreaterThanOrEqual(b, previousB)))

  for ((min, max) <- Seq((1, None), (0, None), (2, Some(3)))) {
    test(s"B{$min,${max.getOrElse("")}}: every rising subset between the neighbours, once, depth first") {
      val got = bindingsOf(kernel(min, max, rising), (2L, 9L), 0L, 0L, rows)
      val between = rows.map(_.at).filter(p => p > 2 && p < 9).sorted
      val want = (min to max.getOrElse(between.size).min(between.size)).flatMap(between.combinations)
        .filter(xs => xs.zip(xs.drop(1)).forall { case (p, q) => q % 4 >= p % 4 }).map(_.toList)
      assert(want.exists(_.size >= 2))
      assert(got.map(_._1).sortBy(_.toString) == want.sortBy(_.toString))
      // Depth first in ORDER BY order: lexicographic, a binding before those extending it.
      def before(x: List[Long], y: List[Long]): Boolean =
        x.zipAll(y, -1L, -1L).find { case (p, q) => p != q }.exists { case (p, q) => p < q }
      assert(got.map(_._1) == got.map(_._1).sortWith(before))
      assert(got.forall { case (xs, lo, hi) => lo == 0L && hi == xs.lastOption.getOrElse(0L) })
    }
  }

  test("rows that would take the match past the window are not chosen, alone or together") {
    // The match spans 5..5: a row may start from -5 and end by 15, and the rows chosen
    // with the match span at most 10.
    val got = bindingsOf(kernel(0, None), (Long.MinValue, Long.MaxValue), 5L, 5L,
      Seq(-6L, -4L, 14L, 16L).map(BRow(_, 0)))
    assert(got == Seq((Nil, 5L, 5L), (List(-4L), -4L, 5L), (List(14L), 5L, 14L)))
  }

  test("an unknown neighbour position admits no row") {
    assert(bindingsOf(kernel(0, None), (null, 9L), 0L, 0L, rows) == Seq((Nil, 0L, 0L)))
    assert(bindingsOf(kernel(0, None), (0L, null), 0L, 0L, rows) == Seq((Nil, 0L, 0L)))
  }

  test("the outputs of a binding: an aggregate, values from either end, the rows, the positions") {
    val outputs = new ClosureOutputs(
      Seq(
        KleeneOutput.Aggregate(AttributeReference("sum", LongType)(), Sum(b)),
        KleeneOutput.Value(AttributeReference("first", IntegerType)(), b, fromFirst = true, 0),
        KleeneOutput.Value(AttributeReference("second_last", IntegerType)(), b, fromFirst = false, 1),
        KleeneOutput.Rows(AttributeReference("rows", IntegerType)(), Seq(b))), Seq(b))
    assert(outputs.width == 6)
    val k = kernel(1, Some(2))
    k.open(InternalRow(0L, 10L), 0L, 0L)
    Seq(BRow(3L, 30), BRow(7L, 70)).foreach(k.offer)
    val written = mutable.ArrayBuffer.empty[Seq[Any]]
    k.foreachBinding(() => "k") { (_, _) =>
      val target = new GenericInternalRow(outputs.width)
      outputs.write(k, target)
      val chosen = target.getArray(3)
      written += Seq(target.get(0, LongType), target.get(1, IntegerType), target.get(2, IntegerType),
        (0 until chosen.numElements()).map(chosen.getStruct(_, 1).getInt(0)), target.get(4, LongType),
        target.get(5, LongType))
    }
    assert(written == Seq(
      Seq(30L, 30, null, Seq(30), 3L, 3L),
      Seq(100L, 30, 30, Seq(30, 70), 3L, 7L),
      Seq(70L, 70, null, Seq(70), 7L, 7L)))
  }

  test("more bindings than the limit fail naming the closure, the limit, the group and the setting") {
    val err = intercept[MatchRecognizeLimitException](bindingsOf(kernel(1, None, limit = 3L), (0L, 10L), 0L, 0L, rows))
    assert(err.getMessage == "[MATCH_RECOGNIZE.LIMIT_EXCEEDED] the Kleene closure B+ produced more than 3 " +
      "bindings for one match of the rest of the pattern in partition key (k=1) in one time slice; raise " +
      "spark.sql.matchRecognize.maxKleeneBindings or make the pattern or its WITHIN window more selective. " +
      "SQLSTATE: 54000")
    assert(err.getSqlState == "54000")
    val keys = Seq(AttributeReference("k", IntegerType)(), AttributeReference("j", LongType)())
    assert(PartitionKeyText.inOneSlice(keys, InternalRow(7, 8L, 9L)) == "partition key (k=7, j=8) in one time slice")
    assert(PartitionKeyText.inOneSlice(Nil, InternalRow(9L)) == "the input (no PARTITION BY) in one time slice")
    assert(PartitionKeyText.of(keys, InternalRow(7, 8L)) == "partition key (k=7, j=8)")
  }

  test("a negation's band: strictly between the neighbours, a trailing one within the window") {
    val between = new NegationBand(lower, Some(upper), Seq(lower, upper), window)
    assert(!between.open(InternalRow(null, 9L), 0L) && !between.open(InternalRow(2L, null), 0L))
    assert(between.open(InternalRow(2L, 9L), 1L))
    assert(between.probeFrom == 1L && between.probeTo == 11L)
    assert(Seq(2L, 3L, 8L, 9L).map(between.forbids(_, 100L)) == Seq(false, true, true, false))
    val trailing = new NegationBand(lower, None, Seq(lower), window)
    assert(!trailing.open(InternalRow(null), 0L))
    assert(trailing.open(InternalRow(4L), 1L))
    assert(!trailing.forbids(4L, 4L) && trailing.forbids(5L, 11L) && !trailing.forbids(5L, 12L))
  }
}

object ClosureBindingsSuite {

  /** A B row at ORDER BY (and window) position `at`. */
  final case class BRow(at: Long, v: Int) {
    val row: InternalRow = InternalRow(v)
  }
}
