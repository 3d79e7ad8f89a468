package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.CountedSequence

/**
 * Counts the matches of a SKIP TILL ANY MATCH [[CountedSequence]] over one partition key's
 * rows in ORDER BY order without building any of them: a count per pattern prefix, kept per
 * START row (the first row of a match) while its window is open, as in A-Seq (the online
 * aggregation Sharon builds on). Each row adds to the prefix counts of every open START
 * what it extends; a row of the last element adds the matches it completes to the total.
 * Work per row is the open STARTs times the pattern's length; memory the open STARTs.
 *
 * Rows come in groups of ORDER BY peers (`addGroup`): variables bind rows of strictly
 * increasing ORDER BY position, so a row extends only the prefixes that ended before its
 * group, and a negated row lies between two rows only when strictly after the one and
 * strictly before the other. A Kleene closure doubles: a closure row extends every prefix
 * ending in the closure and every prefix ending just before it. Two counts per element:
 * `all`, the prefixes ending at it (what its own closure extends), and `ready`, those no
 * negated row has followed since (what the next element extends).
 *
 * Windows are in the operator's window positions: a match's rows span `lo` of its first
 * row to `hi` of its last, at most `window` apart. A count past the range of BIGINT fails
 * with an error instead of wrapping.
 *
 * With `closed`, each START also counts its own matches, and once its window has passed
 * (or `finish` is called) `closed` gets the tag it was opened with and that count, when
 * above 0: matches grouped by something of their first row.
 */
final class MatchCounter(sequence: CountedSequence, window: Long,
    closed: (AnyRef, Long) => Unit = null) extends Serializable {
  private val n = sequence.length
  private val elements = sequence.elements.toArray
  private val closure = sequence.closure.toArray
  private val negated = sequence.negatedAfter.map(_.toArray).toArray

  // Open STARTs, oldest first, from `head`: window position and 2n counts each
  // (all(j) at 2j, ready(j) at 2j + 1).
  private var startLo = new Array[Long](16)
  private var counts = new Array[Long](16 * 2 * n)
  // With `closed`: each START's matches and tag.
  private var own: Array[Long] = if (closed == null) null else new Array[Long](16)
  private var tags: Array[AnyRef] = if (closed == null) null else new Array[AnyRef](16)
  private var head = 0
  private var size = 0

  private var total = 0L

  // What one group adds to each open START's counts, and which `ready` counts it resets.
  private var delta = new Array[Long](16 * 2 * n)
  private val killed = new Array[Boolean](n)

  /** The matches completed so far. */
  def matches: Long = total

  /** The STARTs whose window is still open. */
  def openStarts: Int = size - head

  /**
   * Adds the first `rows` rows of one group of ORDER BY peers: `flags(r)(v)` whether row r
   * passes variable v's own conditions, `lo(r)`/`hi(r)` its window positions (not below the
   * previous group's), `starts(r)` whether it may be a match's first row here (a time slice
   * counts only the matches whose first row it owns).
   */
  def addGroup(rows: Int, flags: Array[Array[Boolean]], lo: Array[Long], hi: Array[Long],
      starts: Array[Boolean], startTags: Array[AnyRef] = null): Unit = {
    if (rows == 0) return
    // Later rows lie no earlier than this group's earliest: a START out of its window stays out.
    var earliest = hi(0)
    var i = 1
    while (i < rows) { earliest = math.min(earliest, hi(i)); i += 1 }
    while (head < size && earliest - startLo(head) > window) close(head)
    val live = size - head
    if (delta.length < live * 2 * n) delta = new Array[Long](math.max(live * 2 * n, 2 * delta.length))
    java.util.Arrays.fill(delta, 0, live * 2 * n, 0L)
    java.util.Arrays.fill(killed, false)
    var r = 0
    while (r < rows) {
      val f = flags(r)
      var s = 0
      while (s < live) {
        if (hi(r) - startLo(head + s) <= window) extend(f, head + s, s * 2 * n)
        s += 1
      }
      var j = 0
      while (j < n - 1) {
        if (!killed(j) && negated(j).exists(f(_))) killed(j) = true
        j += 1
      }
      r += 1
    }
    // Kill first: a negated row of this group lies after the prefixes that ended before it,
    // not after the ones ending at its peers.
    var s = 0
    while (s < live) {
      val base = (head + s) * 2 * n
      var j = 0
      while (j < n) {
        val all = base + 2 * j
        counts(all) = add(counts(all), delta(s * 2 * n + 2 * j))
        val ready = all + 1
        counts(ready) = add(if (killed(j)) 0L else counts(ready), delta(s * 2 * n + 2 * j + 1))
        j += 1
      }
      s += 1
    }
    r = 0
    while (r < rows) {
      if (starts(r) && flags(r)(elements(0))) {
        openStart(lo(r), hi(r), if (startTags == null) null else startTags(r))
      }
      r += 1
    }
  }

  /** What row `f` adds to the counts of START `start`, into `delta` at `out`. */
  private def extend(f: Array[Boolean], start: Int, out: Int): Unit = {
    val base = start * 2 * n
    var j = 0
    while (j < n) {
      if (f(elements(j))) {
        val fromOwn = if (closure(j)) counts(base + 2 * j) else 0L
        val fromBefore = if (j > 0) counts(base + 2 * (j - 1) + 1) else 0L
        val added = add(fromOwn, fromBefore)
        if (added != 0) {
          delta(out + 2 * j) = add(delta(out + 2 * j), added)
          delta(out + 2 * j + 1) = add(delta(out + 2 * j + 1), added)
          if (j == n - 1) {
            total = addTotal(added)
            if (own != null) own(start) = add(own(start), added)
          }
        }
      }
      j += 1
    }
  }

  /** A new START: one prefix, the row itself, which is a match when the pattern is one row. */
  private def openStart(lo: Long, hi: Long, tag: AnyRef): Unit = {
    if (size == startLo.length) grow()
    startLo(size) = lo
    if (own != null) {
      own(size) = 0L
      tags(size) = tag
    }
    val base = size * 2 * n
    java.util.Arrays.fill(counts, base, base + 2 * n, 0L)
    counts(base) = 1L
    counts(base + 1) = 1L
    size += 1
    if (n == 1 && hi - lo <= window) {
      total = addTotal(1L)
      if (own != null) own(size - 1) = 1L
    }
  }

  /** The oldest open START's window has passed: hands its matches to `closed`. */
  private def close(start: Int): Unit = {
    if (own != null) {
      if (own(start) > 0) closed(tags(start), own(start))
      tags(start) = null
    }
    head += 1
  }

  /** No more rows: every open START is closed. */
  def finish(): Unit = while (head < size) close(head)

  private def addTotal(added: Long): Long = add(total, added)

  private def add(a: Long, b: Long): Long =
    try Math.addExact(a, b)
    catch {
      case _: ArithmeticException => throw MatchCounter.tooMany()
    }

  private def grow(): Unit = {
    val live = size - head
    val capacity = if (live * 2 > startLo.length) startLo.length * 2 else startLo.length
    val moved = new Array[Long](capacity)
    System.arraycopy(startLo, head, moved, 0, live)
    val movedCounts = new Array[Long](capacity * 2 * n)
    System.arraycopy(counts, head * 2 * n, movedCounts, 0, live * 2 * n)
    startLo = moved
    counts = movedCounts
    if (own != null) {
      val movedOwn = new Array[Long](capacity)
      System.arraycopy(own, head, movedOwn, 0, live)
      val movedTags = new Array[AnyRef](capacity)
      System.arraycopy(tags, head, movedTags, 0, live)
      own = movedOwn
      tags = movedTags
    }
    head = 0
    size = live
  }
}

object MatchCounter {
  def tooMany(): MatchRecognizeLimitException = new MatchRecognizeLimitException(
    "SKIP TILL ANY MATCH counted more matches (or partial matches) for one partition key " +
      "than a BIGINT holds " +
      "(9,223,372,036,854,775,807); narrow the pattern (WITHIN, DEFINE conditions).")
}
