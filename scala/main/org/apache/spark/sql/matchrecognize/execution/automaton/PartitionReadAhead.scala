package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * The rows of a range's first MATCH_RECOGNIZE partition from its first row on, read ahead of
 * the matcher (by [[RangeEntry]], as far as the matches begun before the range reach). The
 * rows taken from the task's input are kept, to be read again by the matcher; past the
 * range's last row the partition goes on in the ranges after (`rowsAfter`).
 *
 * @param first the range's first row (copied: the input may reuse it)
 * @param samePartition whether a row belongs to `first`'s partition
 */
private[automaton] final class PartitionReadAhead(
    first: UnsafeRow,
    input: Iterator[InternalRow],
    samePartition: UnsafeRow => Boolean,
    rowsAfter: UnsafeRow => Iterator[UnsafeRow]) {

  /** The range's first row, as the matcher should read it. */
  val firstRow: UnsafeRow = first.copy()

  // Rows taken from the input after the first (copies); the last may begin another partition.
  private val taken = new ArrayBuffer[UnsafeRow]
  private var otherPartitionTaken = false

  /** The rows taken from the task's input after the first, to be read again. */
  def takenRows: Iterator[InternalRow] = taken.iterator

  /** The partition's rows from the first on, reading ahead as far as the caller goes. */
  def rows(): Iterator[UnsafeRow] = new Iterator[UnsafeRow] {
    private var at = -1 // -1: the first row comes next, else taken(at)
    private var after: Iterator[UnsafeRow] = _

    override def hasNext: Boolean = {
      if (after != null) return after.hasNext
      if (at < 0) return true
      if (at < taken.length) return !(otherPartitionTaken && at == taken.length - 1)
      if (otherPartitionTaken) return false
      if (input.hasNext) {
        val row = input.next().asInstanceOf[UnsafeRow].copy()
        taken += row
        if (!samePartition(row)) otherPartitionTaken = true
        !otherPartitionTaken
      } else {
        after = rowsAfter(if (taken.isEmpty) firstRow else taken.last)
        after.hasNext
      }
    }

    override def next(): UnsafeRow = {
      if (!hasNext) throw new NoSuchElementException
      if (after != null) after.next()
      else {
        at += 1
        if (at == 0) firstRow else taken(at - 1)
      }
    }
  }
}
