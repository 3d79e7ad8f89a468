package org.apache.spark.sql.matchrecognize.streaming

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate.Count
import org.apache.spark.sql.matchrecognize.execution.tree.TreeState
import org.apache.spark.sql.types.{IntegerType, LongType}

/**
 * The window columns of a streamed key, computed delivery by delivery, against their
 * definitions over all the key's rows at once: RANK and the count of rows up to the last
 * ORDER BY peer (over `t`), ROW_NUMBER, LAG of `v` by one and by three rows, and LEAD by
 * two (a row is passed on once the two rows after it are delivered).
 */
class RunningWindowColumnsSuite extends AnyFunSuite {

  private val t = AttributeReference("t", LongType, nullable = false)()
  private val v = AttributeReference("v", IntegerType)()
  private val input = Seq(t, v)
  private val order = Seq(SortOrder(t, Ascending))
  private def window(name: String, f: Expression, frame: WindowFrame): Alias =
    Alias(WindowExpression(f, WindowSpecDefinition(Nil, order, frame)), name)()
  private val rows = SpecifiedWindowFrame(RowFrame, UnboundedPreceding, CurrentRow)
  private val columns = Seq(
    window("rank", Rank(Seq(t)), rows),
    window("peers", Count(Seq(Literal(1))).toAggregateExpression(),
      SpecifiedWindowFrame(RangeFrame, UnboundedPreceding, CurrentRow)),
    window("row_number", RowNumber(), rows),
    window("prev1", Lag(v, Literal(1), Literal.create(null, IntegerType), ignoreNulls = false), rows),
    window("prev3", Lag(v, Literal(3), Literal.create(null, IntegerType), ignoreNulls = false), rows),
    window("next2", Lead(v, Literal(2), Literal.create(null, IntegerType), ignoreNulls = false), rows))
  private val toRow = UnsafeProjection.create(input, input)

  private type Values = (Int, Long, Int, Integer, Integer, Integer)

  /** The values of every row whose NEXT is delivered: all but the last two. */
  private def expected(all: Seq[(Long, Integer)]): Seq[Values] =
    all.indices.dropRight(2).map { i =>
      val (time, _) = all(i)
      (all.count(_._1 < time) + 1, all.count(_._1 <= time).toLong, i + 1,
        if (i >= 1) all(i - 1)._2 else null, if (i >= 3) all(i - 3)._2 else null, all(i + 2)._2)
    }

  private def int(r: InternalRow, i: Int): Integer = if (r.isNullAt(i)) null else Integer.valueOf(r.getInt(i))

  test("deliveries of whole event times give the values of one pass over every row") {
    // (The deliveries below may end inside a peer group held back for NEXT: its rows are
    // passed on together with their peers' counts all the same.)
    val rng = new Random(5)
    for (round <- 0 until 20) {
      var time = 0L
      val all = (0 until 60).map { _ =>
        time += rng.nextInt(3) // 0: a peer of the previous row
        (time, if (rng.nextInt(6) == 0) null else Integer.valueOf(rng.nextInt(100)))
      }
      // Deliveries end between event times, as the watermark releases rows.
      val times = all.map(_._1).distinct
      val cuts = times.filter(_ => rng.nextInt(4) == 0).toSet
      val deliveries = all.foldLeft(Seq(Seq.empty[(Long, Integer)])) { case (acc, r) =>
        if (cuts.contains(r._1) && acc.last.nonEmpty && acc.last.last._1 != r._1) acc :+ Seq(r)
        else acc.init :+ (acc.last :+ r)
      }
      val computed = new RunningWindowColumns(columns, input, Seq(t))
      var progress = computed.start()
      val got = Seq.newBuilder[Values]
      for (d <- deliveries) {
        val unsafe = d.map { case (a, b) => toRow(InternalRow(a, b)).copy() }.toIndexedSeq
        computed.foreach(progress, unsafe) { r =>
          got += ((r.getInt(2), r.getLong(3), r.getInt(4), int(r, 5), int(r, 6), int(r, 7)))
        }
        // Between deliveries the progress goes through the state store.
        val saved = new TreeKeyState(Array.empty, progress, Array(new TreeState(1)))
        progress =
          TreeKeyState.decode(TreeKeyState.encode(saved, QuerySignature(Nil)), _ => true, QuerySignature(Nil)).window
      }
      assert(got.result() == expected(all), s"round $round, deliveries ${deliveries.map(_.size)}")
    }
  }
}
