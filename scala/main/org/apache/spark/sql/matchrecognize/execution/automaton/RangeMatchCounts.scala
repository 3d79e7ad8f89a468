package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * What the driver needs of one range of a split input ([[SplitMatching]]) to reconcile its
 * output with the ranges before it: the keys (in their comparable form) of the first and
 * last MATCH_RECOGNIZE partitions the range holds rows of, how many matches each had in this
 * range, how many output rows the first one wrote (they come first), how many partitions
 * the range holds, how many of the range's rows its first partition holds, and how many
 * rows past the range's end the last partition's matches cover. A range without rows holds
 * no partition.
 */
final case class RangeMatchCounts(
    firstKey: UnsafeRow,
    firstMatches: Long,
    firstRows: Long,
    lastKey: UnsafeRow,
    lastMatches: Long,
    partitions: Int,
    firstInputRows: Long = 0L,
    lastReach: Long = 0L) extends SplitPiece {

  /**
   * With one more partition ended: its key, its matches, the output rows so far, the input
   * rows so far and the rows past the range's end its matches cover.
   */
  def ended(key: UnsafeRow, matches: Long, rowsWritten: Long, rowsRead: Long = 0L, reach: Long = 0L): RangeMatchCounts =
    if (partitions == 0) RangeMatchCounts(key, matches, rowsWritten, key, matches, 1, rowsRead, reach)
    else copy(lastKey = key, lastMatches = matches, partitions = partitions + 1, lastReach = reach)
}

object RangeMatchCounts {

  val None: RangeMatchCounts = RangeMatchCounts(null, 0L, 0L, null, 0L, 0)

  /**
   * For each range in order, the matches its first partition had in the ranges before it:
   * what that partition's MATCH_NUMBER() values in this range are to be raised by. Rows of
   * one partition are consecutive in the range order, so a partition that began in an
   * earlier range is the last of every range it crosses before this one.
   */
  def numberedBefore(ranges: Seq[RangeMatchCounts]): Array[Long] =
    carried(ranges)((before, r) => if (r.partitions == 1) before + r.firstMatches else r.lastMatches)

  /**
   * For each range in order, how many of its first rows matches of the ranges before it
   * cover (a match starts in one range and may read on over several): the rows of its
   * first partition it must not write as unmatched.
   */
  def coveredAtStart(ranges: Seq[RangeMatchCounts]): Array[Long] =
    carried(ranges) { (before, r) =>
      if (r.partitions == 1) math.max(before - r.firstInputRows, r.lastReach) else r.lastReach
    }

  /**
   * A value carried from range to range along a partition: each range's first partition
   * gets what the range before handed on when it is the same partition (else 0), and hands
   * on `next(got, range)` for its last partition. Ranges without rows hand on what they got.
   */
  private def carried(ranges: Seq[RangeMatchCounts])(next: (Long, RangeMatchCounts) => Long): Array[Long] = {
    var lastKey: UnsafeRow = null
    var carry = 0L
    ranges.map { r =>
      if (r.partitions == 0) 0L
      else {
        val before = if (lastKey != null && lastKey == r.firstKey) carry else 0L
        carry = next(before, r)
        lastKey = r.lastKey
        before
      }
    }.toArray
  }
}
