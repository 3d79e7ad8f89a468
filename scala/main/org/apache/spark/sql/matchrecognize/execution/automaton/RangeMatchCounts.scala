package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * What the driver needs of one range of a split input ([[SplitMatching]]) to number its
 * matches on from the ranges before it: the keys (in their comparable form) of the first
 * and last MATCH_RECOGNIZE partitions the range holds rows of, how many matches each had in
 * this range, how many output rows the first one wrote (they come first), and how many
 * partitions the range holds. A range without rows holds none.
 */
final case class RangeMatchCounts(
    firstKey: UnsafeRow,
    firstMatches: Long,
    firstRows: Long,
    lastKey: UnsafeRow,
    lastMatches: Long,
    partitions: Int) extends SplitPiece {

  /** With one more partition ended: its key, its matches and the output rows so far. */
  def ended(key: UnsafeRow, matches: Long, rowsWritten: Long): RangeMatchCounts =
    if (partitions == 0) RangeMatchCounts(key, matches, rowsWritten, key, matches, 1)
    else copy(lastKey = key, lastMatches = matches, partitions = partitions + 1)
}

object RangeMatchCounts {

  val None: RangeMatchCounts = RangeMatchCounts(null, 0L, 0L, null, 0L, 0)

  /**
   * For each range in order, the matches its first partition had in the ranges before it:
   * what that partition's MATCH_NUMBER() values in this range are to be raised by. Rows of
   * one partition are consecutive in the range order, so a partition that began in an
   * earlier range is the last of every range it crosses before this one.
   */
  def numberedBefore(ranges: Seq[RangeMatchCounts]): Array[Long] = {
    var lastKey: UnsafeRow = null
    var carried = 0L
    ranges.map { r =>
      if (r.partitions == 0) 0L
      else {
        val before = if (lastKey != null && lastKey == r.firstKey) carried else 0L
        carried = if (r.partitions == 1) before + r.firstMatches else r.lastMatches
        lastKey = r.lastKey
        before
      }
    }.toArray
  }
}
