package org.apache.spark.sql.matchrecognize.execution.automaton

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.{AttributeReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.IntegerType

/**
 * How split ranges' MATCH_NUMBER() values are numbered on, and how far earlier ranges'
 * matches cover a range's first rows ([[RangeMatchCounts]]).
 */
class RangeMatchCountsSuite extends AnyFunSuite {

  private val k = AttributeReference("k", IntegerType, nullable = false)()
  private val toKey = UnsafeProjection.create(Seq(k), Seq(k))
  private def key(v: Int): UnsafeRow = toKey(InternalRow(v)).copy()

  /** A range holding rows of the given partitions (key -> its matches in the range), in order. */
  private def range(partitions: (Int, Long)*): RangeMatchCounts =
    partitions.foldLeft(RangeMatchCounts.None) { case (c, (v, matches)) => c.ended(key(v), matches, 0L) }

  test("a partition crossing ranges is numbered on from every range it crossed before") {
    val ranges = Seq(
      range(1 -> 4L, 2 -> 3L), // key 2 goes on
      range(2 -> 5L), // wholly key 2
      range(), // no rows
      range(2 -> 0L), // key 2 without a match here
      range(2 -> 2L, 3 -> 1L),
      range(4 -> 6L)) // a new key: from 1 again
    assert(RangeMatchCounts.numberedBefore(ranges).toSeq == Seq(0L, 3L, 0L, 8L, 8L, 0L))
  }

  test("keys compare by their bytes: a key equal to the one before is the same partition") {
    val ranges = Seq(range(7 -> 2L), range(7 -> 1L), range(8 -> 1L), range(7 -> 1L))
    // The last range's key 7 follows key 8: another partition (the order puts a key's rows together).
    assert(RangeMatchCounts.numberedBefore(ranges).toSeq == Seq(0L, 2L, 0L, 0L))
  }

  test("the first partition's output rows are those written when it ended") {
    val c = RangeMatchCounts.None.ended(key(1), 3L, 10L).ended(key(2), 1L, 12L).ended(key(3), 5L, 20L)
    assert(c.firstRows == 10L && c.firstMatches == 3L && c.lastMatches == 5L && c.partitions == 3)
    assert(c.firstKey == key(1) && c.lastKey == key(3))
  }

  /** A range of `rows` rows of one partition whose matches reach `reach` rows past its end. */
  private def within(v: Int, rows: Long, reach: Long): RangeMatchCounts =
    RangeMatchCounts.None.ended(key(v), 1L, 0L, rows, reach)

  test("matches reaching over whole ranges cover the next ones' first rows, less each range's rows") {
    val ranges = Seq(
      within(1, rows = 100, reach = 250), // covers the next range whole and 150 rows of the one after
      within(1, rows = 100, reach = 0), // no match of its own reaches out
      within(1, rows = 100, reach = 120), // its own reach is longer than what is left of the first's
      RangeMatchCounts.None, // no rows: hands on what it got
      within(1, rows = 100, reach = 0),
      within(2, rows = 100, reach = 0)) // another key: nothing covered
    assert(RangeMatchCounts.coveredAtStart(ranges).toSeq == Seq(0L, 250L, 150L, 0L, 120L, 0L))
  }

  test("only the last partition's reach is handed on, and only to the same key") {
    val twoKeys = RangeMatchCounts.None.ended(key(1), 1L, 0L, 10L, 0L).ended(key(2), 1L, 0L, 30L, 7L)
    val ranges = Seq(within(1, rows = 50, reach = 40), twoKeys, within(2, rows = 100, reach = 0))
    // Key 1's reach of 40 is more than its 10 rows in the second range: it ends there.
    assert(RangeMatchCounts.coveredAtStart(ranges).toSeq == Seq(0L, 40L, 7L))
  }
}
