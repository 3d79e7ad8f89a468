package org.apache.spark.sql.matchrecognize.execution.automaton

import java.util.PriorityQueue

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * The rows around one range of a split partition ([[SplitMatching]]): the tasks' inputs are
 * consecutive ranges of one total order (PARTITION BY keys, ORDER BY keys, every other
 * column), each read unsorted by `read(j)`; this task's are `first` until `end`. A task's
 * first MATCH_RECOGNIZE partition may
 * have begun in the ranges before, and its last may go on in the ranges after; this reads
 * those rows of the same partition, selecting the few it needs from each neighbour
 * instead of sorting it.
 *
 * @param sameKey whether two rows belong to the same MATCH_RECOGNIZE partition
 */
final class RangeNeighbours(
    read: Int => Iterator[InternalRow],
    first: Int,
    end: Int,
    ranges: Int,
    ordering: Ordering[InternalRow],
    sameKey: (UnsafeRow, UnsafeRow) => Boolean) {

  private var rowsRead = 0L

  /** Rows of the neighbouring ranges read so far (each time a neighbour is scanned). */
  def neighbourRowsRead: Long = rowsRead

  /**
   * Up to `n` rows of `firstRow`'s partition just before this range, in order (none when the
   * partition starts in this range).
   */
  def rowsBefore(firstRow: UnsafeRow, n: Int): IndexedSeq[UnsafeRow] = {
    var found = IndexedSeq.empty[UnsafeRow]
    var j = first - 1
    var more = true
    while (more && j >= 0 && found.length < n) {
      val (picked, all) = extreme(j, n - found.length, ordering)
      // Largest first: the rows of the partition are a prefix, in descending order.
      val same = picked.takeWhile(sameKey(_, firstRow))
      found = same.reverse ++ found
      more = same.length == all
      j -= 1
    }
    found
  }

  /**
   * Every row of `firstRow`'s partition before this range, in order: each range before is
   * read whole and its rows of the partition sorted on their own, one range at a time. For
   * when a few rows before are not enough ([[RangeEntry]]): it costs a read of all of them.
   */
  def rowsFromStart(firstRow: UnsafeRow): Iterator[UnsafeRow] =
    (0 until first).iterator.flatMap { j =>
      val same = new ArrayBuffer[UnsafeRow]
      val it = read(j)
      while (it.hasNext) {
        val row = it.next().asInstanceOf[UnsafeRow]
        rowsRead += 1
        if (sameKey(row, firstRow)) same += row.copy()
      }
      same.sorted(ordering.on[UnsafeRow](identity)).iterator
    }

  /**
   * The rows of `last`'s partition after this range, in order, read in growing batches as
   * the caller asks for more (most ranges need only the first few to finish their matches).
   */
  def rowsAfter(last: UnsafeRow): Iterator[UnsafeRow] = new Iterator[UnsafeRow] {
    private var batch = IndexedSeq.empty[UnsafeRow]
    private var at = 0
    private var handed = 0L
    private var batchRows = 1024
    private var complete = false

    override def hasNext: Boolean = {
      if (at >= batch.length && !complete) refill()
      at < batch.length
    }

    override def next(): UnsafeRow = {
      if (!hasNext) throw new NoSuchElementException
      val row = batch(at)
      at += 1
      handed += 1
      row
    }

    /** Reads the first `batchRows` rows after the range again, keeping those not yet handed. */
    private def refill(): Unit = {
      val wanted = handed + batchRows
      val rows = new ArrayBuffer[UnsafeRow]
      var j = end
      var more = true
      while (more && j < ranges && rows.length < wanted) {
        val (picked, all) = extreme(j, (wanted - rows.length).toInt, ordering.reverse)
        val same = picked.takeWhile(sameKey(_, last))
        rows ++= same
        more = same.length == all
        j += 1
      }
      complete = rows.length < wanted
      batch = rows.drop(handed.toInt).toIndexedSeq
      at = 0
      batchRows = math.min(batchRows.toLong * 8, Int.MaxValue / 2).toInt
    }
  }

  /**
   * The `n` greatest rows of range `j` under `order`, greatest first, and the number of
   * rows the range holds.
   */
  private def extreme(j: Int, n: Int, order: Ordering[InternalRow]): (IndexedSeq[UnsafeRow], Long) = {
    // Least at the head: a row enters when it beats the least kept.
    val kept = new PriorityQueue[UnsafeRow](math.max(n, 1), order)
    var all = 0L
    val it = read(j)
    while (it.hasNext) {
      val row = it.next().asInstanceOf[UnsafeRow]
      all += 1
      if (kept.size < n) kept.add(row.copy())
      else if (n > 0 && order.gt(row, kept.peek())) {
        kept.poll()
        kept.add(row.copy())
      }
    }
    rowsRead += all
    val out = new Array[UnsafeRow](kept.size)
    var i = out.length - 1
    while (!kept.isEmpty) { out(i) = kept.poll(); i -= 1 }
    (out.toIndexedSeq, all)
  }
}
