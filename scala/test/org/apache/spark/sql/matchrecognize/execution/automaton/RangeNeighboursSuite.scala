package org.apache.spark.sql.matchrecognize.execution.automaton

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, AttributeReference, RowOrdering, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.IntegerType

/** The rows a range of a split partition reads of its neighbours, and how tasks group ranges. */
class RangeNeighboursSuite extends AnyFunSuite {

  private val key = AttributeReference("k", IntegerType, nullable = false)()
  private val ts = AttributeReference("ts", IntegerType, nullable = false)()
  private val toRow = UnsafeProjection.create(Seq(key, ts), Seq(key, ts))

  private def row(k: Int, t: Int): UnsafeRow = toRow(InternalRow(k, t)).copy()

  /** Ranges of (key, ts) in order; each range's rows shuffled, as a shuffle delivers them. */
  private val ranges: IndexedSeq[Seq[UnsafeRow]] = IndexedSeq(
    Seq(row(1, 3), row(1, 1), row(1, 2)),
    Seq(row(2, 2), row(1, 5), row(2, 1), row(1, 4)),
    Seq(row(2, 4), row(2, 3)),
    Seq(row(2, 6), row(3, 1), row(2, 5)),
    Seq(row(3, 2)))

  private def neighbours(first: Int, end: Int): (RangeNeighbours, Array[Int]) = {
    val reads = new Array[Int](ranges.length)
    val ordering = RowOrdering.create(Seq(SortOrder(key, Ascending), SortOrder(ts, Ascending)), Seq(key, ts))
    val n = new RangeNeighbours(j => { reads(j) += 1; ranges(j).iterator }, first, end, ranges.length,
      ordering, (a: UnsafeRow, b: UnsafeRow) => a.getInt(0) == b.getInt(0))
    (n, reads)
  }

  private def pairs(rows: Iterable[UnsafeRow]): Seq[(Int, Int)] = rows.map(r => (r.getInt(0), r.getInt(1))).toSeq

  test("the rows before a range: its first key's last rows, across whole ranges of that key") {
    val (n, reads) = neighbours(3, 4)
    assert(pairs(n.rowsBefore(row(2, 5), 2)) == Seq((2, 3), (2, 4)))
    assert(pairs(n.rowsBefore(row(2, 5), 5)) == Seq((2, 1), (2, 2), (2, 3), (2, 4)))
    assert(reads.toSeq == Seq(0, 1, 2, 0, 0))
    // A key that starts in the range has no rows before it.
    assert(neighbours(4, 5)._1.rowsBefore(row(3, 2), 3).map(_.getInt(1)) == Seq(1))
    assert(neighbours(0, 1)._1.rowsBefore(row(1, 1), 3).isEmpty)
  }

  test("the rows after a range: its last key's rows in order, up to the key's end") {
    val (n, _) = neighbours(1, 2)
    assert(pairs(n.rowsAfter(row(2, 2)).toSeq) == Seq((2, 3), (2, 4), (2, 5), (2, 6)))
    assert(neighbours(0, 1)._1.rowsAfter(row(1, 3)).map(_.getInt(1)).toSeq == Seq(4, 5))
    assert(neighbours(4, 5)._1.rowsAfter(row(3, 2)).isEmpty)
  }

  test("tasks take consecutive ranges, all of them, each at least one") {
    assert((0 until 4).map(NeighbourReadingRDD.group(_, 4, 32)) == Seq((0, 8), (8, 16), (16, 24), (24, 32)))
    assert((0 until 3).map(NeighbourReadingRDD.group(_, 3, 7)) == Seq((0, 2), (2, 4), (4, 7)))
    assert((0 until 2).map(NeighbourReadingRDD.group(_, 4, 2)) == Seq((0, 1), (1, 2)))
  }
}
