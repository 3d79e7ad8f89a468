package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.matchrecognize.plans.CountedSequence.Pair

/**
 * The partial matches of one [[NodeBuffer]] in order of the value an [[IndexedComparison]]
 * reads from them, so that a probe reads the few whose value can pass the comparison
 * instead of testing every one: a row that extends 10^5 buffered partial matches under
 * `B.v < A.v - c` looks up a range instead of evaluating the condition 10^5 times.
 *
 * Matches are named by their creation number in the buffer (`NodeBuffer.at`). The index
 * follows its buffer lazily: `follow` adds the matches created since it last looked and
 * forgets those the buffer has purged (always the oldest, so they leave in the order they
 * came). It lives beside the buffer in a [[TreeState]] and is rebuilt from the buffer when
 * the state is read back, never stored.
 */
private[tree] final class NodeValueIndex {
  import IndexedComparison.{Failed, Valued}

  // The creation numbers under each value, oldest first.
  private val byValue = new java.util.TreeMap[java.lang.Long, NumberRun]()
  // The numbers whose value failed to evaluate: every lookup returns them.
  private val failed = new NumberRun
  // Per tracked number (first until next), what its value read returned and the value.
  private var kinds = new Array[Byte](16)
  private var values = new Array[Long](16)
  private var first = 0L
  private var next = 0L

  /** The numbers the last `lookup` found, ascending: `hits(0)` until `hits(hitCount - 1)`. */
  var hits: Array[Long] = new Array[Long](16)
  var hitCount: Int = 0

  /** Brings the index up to `buffer`'s matches, reading new ones' values with `comparison`. */
  def follow(buffer: NodeBuffer, comparison: IndexedComparison): Unit = {
    val bufferFirst = buffer.firstNumber
    // Renumbered (a state read back) or wholly purged since the last look: start afresh.
    if (buffer.added < next || next < bufferFirst || bufferFirst < first) clear(bufferFirst)
    while (first < bufferFirst) forgetFirst()
    while (next < buffer.added) {
      track(comparison.ofBuffered(buffer.at(next)), comparison.value)
      next += 1
    }
  }

  /**
   * Finds the tracked matches whose value relates to `probe` as `code` says (their value
   * below, at most, equal to, at least or above it), and those whose value failed, into
   * `hits` in creation order.
   */
  def lookup(code: Int, probe: Long): Unit = {
    hitCount = 0
    val p = java.lang.Long.valueOf(probe)
    code match {
      case Pair.EQUAL => val run = byValue.get(p); if (run != null) take(run)
      case Pair.BELOW => byValue.headMap(p, false).values.forEach(take)
      case Pair.AT_MOST => byValue.headMap(p, true).values.forEach(take)
      case Pair.ABOVE => byValue.tailMap(p, false).values.forEach(take)
      case Pair.AT_LEAST => byValue.tailMap(p, true).values.forEach(take)
    }
    take(failed)
    java.util.Arrays.sort(hits, 0, hitCount)
  }

  private def take(run: NumberRun): Unit = {
    if (hitCount + run.size > hits.length) {
      hits = java.util.Arrays.copyOf(hits, math.max(hits.length * 2, hitCount + run.size))
    }
    run.copyTo(hits, hitCount)
    hitCount += run.size
  }

  private def clear(from: Long): Unit = {
    byValue.clear()
    failed.clear()
    first = from
    next = from
  }

  private def slot(number: Long): Int = (number & (kinds.length - 1)).toInt

  private def track(kind: Int, value: Long): Unit = {
    if (next - first == kinds.length) grow()
    val s = slot(next)
    kinds(s) = kind.toByte
    values(s) = value
    if (kind == Valued) {
      val key = java.lang.Long.valueOf(value)
      var run = byValue.get(key)
      if (run == null) { run = new NumberRun; byValue.put(key, run) }
      run.add(next)
    } else if (kind == Failed) failed.add(next)
  }

  private def forgetFirst(): Unit = {
    val s = slot(first)
    if (kinds(s) == Valued) {
      val key = java.lang.Long.valueOf(values(s))
      val run = byValue.get(key)
      run.dropFirst()
      if (run.size == 0) byValue.remove(key)
    } else if (kinds(s) == Failed) failed.dropFirst()
    first += 1
  }

  // Doubles the ring of kinds and values; slots keep being the number modulo its size.
  private def grow(): Unit = {
    val (oldKinds, oldValues) = (kinds, values)
    kinds = new Array[Byte](oldKinds.length * 2)
    values = new Array[Long](oldValues.length * 2)
    var n = first
    while (n < next) {
      val from = (n & (oldKinds.length - 1)).toInt
      kinds(slot(n)) = oldKinds(from)
      values(slot(n)) = oldValues(from)
      n += 1
    }
  }
}

/** Creation numbers in ascending order, added at the end and dropped from the front. */
private[tree] final class NumberRun {
  private var numbers = new Array[Long](2)
  private var start = 0
  private var end = 0

  def size: Int = end - start

  def add(n: Long): Unit = {
    if (end == numbers.length) {
      val live = end - start
      val grown = if (live * 2 > numbers.length) new Array[Long](numbers.length * 2) else numbers
      System.arraycopy(numbers, start, grown, 0, live)
      numbers = grown
      start = 0
      end = live
    }
    numbers(end) = n
    end += 1
  }

  def dropFirst(): Unit = {
    start += 1
    if (start == end) { start = 0; end = 0 }
  }

  def clear(): Unit = { start = 0; end = 0 }

  def copyTo(dst: Array[Long], at: Int): Unit = System.arraycopy(numbers, start, dst, at, end - start)
}
