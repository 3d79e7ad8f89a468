package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * The partial matches one tree node keeps for its sibling to combine with, in the order
 * they were created. Every partial match created by an event ends with that event, so
 * this is also the order of their last window position `hi`: a probe starts at the first
 * match whose `hi` can be in range (a binary search), and a purge drops a prefix.
 *
 * Serializable with the serial version the release writing format 4 computed, only so
 * that Java-serialized checkpoints of that format still read; format 5 is written by
 * `streaming.TreeKeyStateCodec`. Its fields must keep their names and types.
 */
@SerialVersionUID(1620636893094077186L)
final class NodeBuffer extends Serializable {
  private var items = new Array[PartialMatch](16)
  private var start = 0
  private var end = 0

  /**
   * Matches added so far: the buffered ones are the last `size` of them, so the match at
   * `iterator` position i was the (`appended` - `size` + i)-th added. A streaming state kept
   * per entry names each match by that number (see `streaming.TreeEntryCodec`).
   */
  private var appended = 0L

  /**
   * When set, every match a purge drops is appended here, in creation order: a streaming
   * state kept per entry deletes them from its store when it next saves.
   */
  @transient var purged: java.util.ArrayList[PartialMatch] = _

  def size: Long = (end - start).toLong

  /** How many matches were added so far. */
  def added: Long = appended

  /** The creation number of the oldest buffered match (`added` when none is). */
  def firstNumber: Long = appended - size

  /** The buffered match created `number`-th (from `firstNumber` until `added`). */
  def at(number: Long): PartialMatch = items(start + (number - firstNumber).toInt)

  /** Numbers the buffered matches from `first` on (a state restored from its entries). */
  def numberFrom(first: Long): Unit = appended = first + size

  /** Appends `m`, whose `hi` is not below any buffered match's. */
  def add(m: PartialMatch): Unit = {
    if (end == items.length) makeRoom()
    items(end) = m
    end += 1
    appended += 1
  }

  private def makeRoom(): Unit = {
    val live = end - start
    val grown = if (live * 2 > items.length) new Array[PartialMatch](items.length * 2) else items
    System.arraycopy(items, start, grown, 0, live)
    if (grown eq items) java.util.Arrays.fill(items.asInstanceOf[Array[AnyRef]], live, end, null)
    items = grown
    start = 0
    end = live
  }

  /** The first index at or after `start` whose match has `hi >= bound`. */
  private def firstWithHiAtLeast(bound: Long): Int = {
    var low = start
    var high = end
    while (low < high) {
      val mid = (low + high) >>> 1
      if (items(mid).hi < bound) low = mid + 1 else high = mid
    }
    low
  }

  /** Calls `f` on every match whose `lo` lies in [from, to], in creation order. */
  def probe(from: Long, to: Long)(f: PartialMatch => Unit): Unit =
    if (from <= to && end > start) {
      // lo <= hi: a match with lo >= from has hi >= from.
      var i = firstWithHiAtLeast(from)
      val stop = end
      while (i < stop) {
        val m = items(i)
        if (m.lo >= from && m.lo <= to) f(m)
        i += 1
      }
    }

  /** Whether some match whose `lo` lies in [from, to] satisfies `p` (stops at the first). */
  def exists(from: Long, to: Long)(p: PartialMatch => Boolean): Boolean =
    from <= to && end > start && {
      var i = firstWithHiAtLeast(from)
      var found = false
      while (!found && i < end) {
        val m = items(i)
        found = m.lo >= from && m.lo <= to && p(m)
        i += 1
      }
      found
    }

  /**
   * Drops every match whose last window position `hi` is below `position` (so is its
   * first); returns how many. A match that started before `position` and ended after it
   * stays until its end passes: probes skip it, as its start is out of their range.
   */
  def purgeBefore(position: Long): Long = {
    val cut = firstWithHiAtLeast(position)
    val removed = cut - start
    if (purged != null) { var i = start; while (i < cut) { purged.add(items(i)); i += 1 } }
    java.util.Arrays.fill(items.asInstanceOf[Array[AnyRef]], start, cut, null)
    start = cut
    if (start == end) { start = 0; end = 0 }
    removed.toLong
  }

  /** The last window position of the oldest buffered match (Long.MaxValue when empty). */
  def oldestHi: Long = if (end > start) items(start).hi else Long.MaxValue

  /** The buffered matches added after the first `count`, in creation order. */
  def addedAfter(count: Long): Iterator[PartialMatch] = {
    val skip = count - (appended - size)
    items.iterator.slice(if (skip <= 0) start else start + skip.toInt, end)
  }

  /** Every buffered match, in creation order. */
  def iterator: Iterator[PartialMatch] = items.iterator.slice(start, end)
}
