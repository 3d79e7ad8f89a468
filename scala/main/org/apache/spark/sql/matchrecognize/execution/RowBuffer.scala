package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.shims.ConditionRuntimeException

/**
 * The rows of the current partition that live matches may still read, addressed by their
 * position in the partition (0, 1, ...). Rows are appended as they arrive and dropped from
 * the front once no match can reach them, so memory follows the live matches rather than
 * the partition. Exceeding `maxRows` is an error naming the limit (never an OOM).
 */
final class RowBuffer(maxRows: Long, limitName: String) {
  // Capacity is a power of two, so ring indices are masked rather than divided.
  private var rows = new Array[UnsafeRow](64)
  private var mask = 63
  private var head = 0 // index in `rows` of position `base`
  private var count = 0
  private var base = 0L // position of the oldest retained row
  private var peak = 0

  /** Position the next appended row gets. */
  def end: Long = base + count

  def firstRetained: Long = base

  def size: Int = count

  def peakSize: Int = peak

  def contains(pos: Long): Boolean = pos >= base && pos < base + count

  def append(row: UnsafeRow): Unit = {
    if (count >= maxRows) {
      throw new MatchRecognizeLimitException(
        s"MATCH_RECOGNIZE needed to keep more than $maxRows rows of one partition in memory " +
          s"for a match in progress; raise $limitName or use a pattern whose matches span " +
          "fewer rows (for example with WITHIN).")
    }
    if (count == rows.length) grow()
    // Slots keep their row object once trimmed, and copyFrom reuses its memory when it is
    // large enough: in a steady state appending allocates nothing.
    val slot = (head + count) & mask
    if (rows(slot) == null) rows(slot) = row.copy() else rows(slot).copyFrom(row)
    count += 1
    if (count > peak) peak = count
  }

  /** The row at `pos`, or null when it is outside the retained range. */
  def get(pos: Long): UnsafeRow =
    if (pos < base || pos >= base + count) null
    else rows((head + (pos - base).toInt) & mask)

  /** Forgets every row before `pos`. */
  def trimBefore(pos: Long): Unit = {
    while (count > 0 && base < pos) {
      head = (head + 1) & mask
      count -= 1
      base += 1
    }
    if (count == 0 && base < pos) base = pos
  }

  def clear(nextBase: Long = 0L): Unit = {
    head = 0
    count = 0
    base = nextBase
  }

  private def grow(): Unit = {
    val bigger = new Array[UnsafeRow](rows.length * 2)
    var i = 0
    while (i < rows.length) { // the retained rows first, then the spare row objects
      bigger(i) = rows((head + i) & mask)
      i += 1
    }
    rows = bigger
    mask = bigger.length - 1
    head = 0
  }
}

/**
 * A documented limit was exceeded; the message names the configuration key. Condition
 * `MATCH_RECOGNIZE.LIMIT_EXCEEDED`, SQLSTATE 54000 (program limit exceeded).
 */
final class MatchRecognizeLimitException(message: String)
  extends ConditionRuntimeException("MATCH_RECOGNIZE.LIMIT_EXCEEDED", "54000", message)

/**
 * A runtime error the SQL standard prescribes (AFTER MATCH SKIP to the first row of the
 * match, or to a variable absent from it). Condition `MATCH_RECOGNIZE.SKIP_FAILED`, SQLSTATE
 * 22000 (data exception).
 */
final class MatchRecognizeRuntimeException(message: String)
  extends ConditionRuntimeException("MATCH_RECOGNIZE.SKIP_FAILED", "22000", message)
