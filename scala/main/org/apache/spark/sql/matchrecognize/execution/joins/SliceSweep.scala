package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, BindReferences, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.GenerateOrdering

/**
 * Walks two inputs sorted by (partition key, slice, lo) slice by slice: for each left row it
 * offers the right rows of the same slice whose `lo` lies within a band around the left
 * row's `lo`. Right rows are buffered only while they are in the band (a window-wide
 * buffer), so a slice is never held in memory whole and no nested loop runs over it.
 */
final class SliceSweep(
    left: Iterator[InternalRow],
    right: Iterator[InternalRow],
    leftKeys: Seq[Attribute],
    leftSchema: Seq[Attribute],
    rightKeys: Seq[Attribute],
    rightSchema: Seq[Attribute],
    rightLo: Int) {

  private val leftKeyOf = UnsafeProjection.create(leftKeys, leftSchema)
  private val rightKeyOf = UnsafeProjection.create(rightKeys, rightSchema)
  private val keyOrdering = GenerateOrdering.generate(
    leftKeys.zipWithIndex.map { case (a, i) =>
      SortOrder(BindReferences.bindReference[org.apache.spark.sql.catalyst.expressions.Expression](
          a, leftKeys), Ascending)
    }, leftKeys)

  private val rightIn = right.buffered
  private val buffer = new BandBuffer
  private var currentKey: UnsafeRow = _
  private var peak = 0

  /** The most right rows buffered at once. */
  def peakBuffered: Int = peak

  /**
   * Moves the band to [from, to] for the slice of `leftRow` and returns the buffered right
   * rows (sorted by `lo`); rows before `from` are dropped for good.
   */
  def band(leftRow: InternalRow, from: Long, to: Long): BandBuffer = {
    val key = leftKeyOf(leftRow)
    if (currentKey == null || keyOrdering.compare(key, currentKey) != 0) {
      currentKey = key.copy()
      buffer.clear()
      // Skip right rows of earlier slices.
      while (rightIn.hasNext && keyOrdering.compare(rightKeyOf(rightIn.head), currentKey) < 0) {
        rightIn.next()
      }
    }
    while (!buffer.isEmpty && buffer.lo(0) < from) buffer.removeFirst()
    var more = true
    while (more && rightIn.hasNext) {
      val r = rightIn.head
      if (keyOrdering.compare(rightKeyOf(r), currentKey) != 0) more = false
      else if (r.getLong(rightLo) > to) more = false
      else {
        val lo = r.getLong(rightLo)
        if (lo >= from) buffer.addLast(r.asInstanceOf[UnsafeRow].copy(), lo)
        rightIn.next()
      }
    }
    if (buffer.size > peak) peak = buffer.size
    buffer
  }

  /** The left input, in order. */
  def leftRows: Iterator[InternalRow] = left
}
