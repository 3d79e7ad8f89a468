package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * The right rows of a band, in `lo` order: a ring that appends at the end, drops from the
 * front and finds by binary search the first row at or after a position, so an operator
 * can test only the rows its order constraints allow rather than the whole band.
 */
final class BandBuffer {
  private var rows = new Array[UnsafeRow](64)
  private var los = new Array[Long](64)
  private var head = 0
  private var count = 0

  def size: Int = count
  def isEmpty: Boolean = count == 0

  /** The i-th row (0 = oldest) and its `lo`. */
  def apply(i: Int): UnsafeRow = rows((head + i) & (rows.length - 1))
  def lo(i: Int): Long = los((head + i) & (rows.length - 1))

  def addLast(row: UnsafeRow, lo: Long): Unit = {
    if (count == rows.length) grow()
    val slot = (head + count) & (rows.length - 1)
    rows(slot) = row
    los(slot) = lo
    count += 1
  }

  def removeFirst(): Unit = {
    rows(head) = null
    head = (head + 1) & (rows.length - 1)
    count -= 1
  }

  def clear(): Unit = {
    while (count > 0) removeFirst()
    head = 0
  }

  /** Index of the first row whose `lo` is >= `x` (`size` if none). */
  def firstAtLeast(x: Long): Int = {
    var a = 0
    var b = count
    while (a < b) {
      val mid = (a + b) >>> 1
      if (lo(mid) < x) a = mid + 1 else b = mid
    }
    a
  }

  /** Index past the last row whose `lo` is <= `x`. */
  def endAtMost(x: Long): Int = if (x == Long.MaxValue) count else firstAtLeast(x + 1)

  def iterator: Iterator[UnsafeRow] = new Iterator[UnsafeRow] {
    private var i = 0
    override def hasNext: Boolean = i < BandBuffer.this.count
    override def next(): UnsafeRow = { val r = apply(i); i += 1; r }
  }

  private def grow(): Unit = {
    val n = rows.length * 2
    val r = new Array[UnsafeRow](n)
    val l = new Array[Long](n)
    var i = 0
    while (i < count) { r(i) = apply(i); l(i) = lo(i); i += 1 }
    rows = r
    los = l
    head = 0
  }
}
