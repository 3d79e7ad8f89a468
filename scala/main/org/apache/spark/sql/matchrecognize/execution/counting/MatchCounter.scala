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
 * The sequence's values ride along with each count as aggregates over the prefixes it
 * counts ([[MatchCounter.Aggregates]]): a prefix that binds a value's element to a row
 * takes that row's value, and a prefix extended further keeps it, so the aggregates of the
 * complete matches come out with their count, still without building one.
 *
 * Windows are in the operator's window positions: a match's rows span `lo` of its first
 * row to `hi` of its last, at most `window` apart. A count or sum past the range of BIGINT
 * fails with an error instead of wrapping.
 *
 * With `closed`, each START also aggregates its own matches, and once its window has passed
 * (or `finish` is called) `closed` gets the tag it was opened with and those aggregates,
 * when it has matches: matches grouped by something of their first row.
 */
final class MatchCounter(sequence: CountedSequence, window: Long,
    closed: (AnyRef, Array[Long]) => Unit = null) extends Serializable {
  import MatchCounter.Aggregates._

  private val n = sequence.length
  private val elements = sequence.elements.toArray
  private val closure = sequence.closure.toArray
  private val negated = sequence.negatedAfter.map(_.toArray).toArray
  private val valueElements = sequence.valueElements.toArray
  private val summed = sequence.summed.toArray
  private val stride = width(sequence.values)
  // One START's block: all(j) and ready(j) aggregates for every element j.
  private val block = 2 * n * stride

  // Open STARTs, oldest first, from `head`: window position and a block each.
  private var startLo = new Array[Long](16)
  private var counts = new Array[Long](16 * block)
  // With `closed`: each START's own matches and tag.
  private var own: Array[Long] = if (closed == null) null else new Array[Long](16 * stride)
  private var tags: Array[AnyRef] = if (closed == null) null else new Array[AnyRef](16)
  private var head = 0
  private var size = 0

  private val total = new Array[Long](stride)

  // What one group adds to each open START's block, and which `ready` aggregates it resets.
  private var delta = new Array[Long](16 * block)
  private val killed = new Array[Boolean](n)
  // The prefixes one row makes at one element.
  private val step = new Array[Long](stride)

  /** The matches completed so far. */
  def matches: Long = total(COUNT)

  /** The aggregates of the matches completed so far (see [[MatchCounter.Aggregates]]). */
  def aggregates: Array[Long] = total.clone()

  /** The STARTs whose window is still open. */
  def openStarts: Int = size - head

  private def all(base: Int, j: Int): Int = base + 2 * j * stride
  private def ready(base: Int, j: Int): Int = base + (2 * j + 1) * stride

  /**
   * Adds the first `rows` rows of one group of ORDER BY peers: `flags(r)(v)` whether row r
   * passes variable v's own conditions, `lo(r)`/`hi(r)` its window positions (not below the
   * previous group's), `starts(r)` whether it may be a match's first row here (a time slice
   * counts only the matches whose first row it owns); with values, `values(r)(t)` value t on
   * row r, read only when `present(r)(t)` (not null).
   */
  def addGroup(rows: Int, flags: Array[Array[Boolean]], lo: Array[Long], hi: Array[Long],
      starts: Array[Boolean], startTags: Array[AnyRef] = null, values: Array[Array[Long]] = null,
      present: Array[Array[Boolean]] = null): Unit = {
    if (rows == 0) return
    // Later rows lie no earlier than this group's earliest: a START out of its window stays out.
    var earliest = hi(0)
    var i = 1
    while (i < rows) { earliest = math.min(earliest, hi(i)); i += 1 }
    while (head < size && earliest - startLo(head) > window) close(head)
    val live = size - head
    if (delta.length < live * block) delta = new Array[Long](math.max(live * block, 2 * delta.length))
    java.util.Arrays.fill(delta, 0, live * block, 0L)
    java.util.Arrays.fill(killed, false)
    var r = 0
    while (r < rows) {
      val f = flags(r)
      val v = if (values == null) null else values(r)
      val p = if (present == null) null else present(r)
      var s = 0
      while (s < live) {
        if (hi(r) - startLo(head + s) <= window) extend(f, v, p, head + s, s * block)
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
      val base = (head + s) * block
      var j = 0
      while (j < n) {
        combine(counts, all(base, j), delta, all(s * block, j))
        if (killed(j)) java.util.Arrays.fill(counts, ready(base, j), ready(base, j) + stride, 0L)
        combine(counts, ready(base, j), delta, ready(s * block, j))
        j += 1
      }
      s += 1
    }
    r = 0
    while (r < rows) {
      if (starts(r) && flags(r)(elements(0))) {
        openStart(lo(r), hi(r), if (startTags == null) null else startTags(r),
          if (values == null) null else values(r), if (present == null) null else present(r))
      }
      r += 1
    }
  }

  /** What row `f` adds to the block of START `start`, into `delta` at `out`. */
  private def extend(f: Array[Boolean], v: Array[Long], p: Array[Boolean], start: Int, out: Int): Unit = {
    val base = start * block
    var j = 0
    while (j < n) {
      if (f(elements(j))) {
        java.util.Arrays.fill(step, 0L)
        if (closure(j)) combine(step, 0, counts, all(base, j))
        if (j > 0) combine(step, 0, counts, ready(base, j - 1))
        if (step(COUNT) != 0) {
          bind(j, v, p)
          combine(delta, all(out, j), step, 0)
          combine(delta, ready(out, j), step, 0)
          if (j == n - 1) {
            combine(total, 0, step, 0)
            if (own != null) combine(own, start * stride, step, 0)
          }
        }
      }
      j += 1
    }
  }

  /** The prefixes in `step` bind element j to this row: its values are theirs. */
  private def bind(j: Int, v: Array[Long], p: Array[Boolean]): Unit = {
    var t = 0
    while (t < valueElements.length) {
      if (valueElements(t) == j) {
        val at = 1 + t * VALUE
        if (p(t)) {
          step(at + SUM) = if (summed(t)) multiply(step(COUNT), v(t)) else 0L
          step(at + PRESENT) = step(COUNT)
          step(at + LEAST) = v(t)
          step(at + GREATEST) = v(t)
        } else java.util.Arrays.fill(step, at, at + VALUE, 0L)
      }
      t += 1
    }
  }

  /** Adds the aggregates at `src(s)` to those at `dst(d)`. */
  private def combine(dst: Array[Long], d: Int, src: Array[Long], s: Int): Unit = {
    dst(d + COUNT) = add(dst(d + COUNT), src(s + COUNT))
    var t = 0
    while (t < valueElements.length) {
      val to = d + 1 + t * VALUE
      val from = s + 1 + t * VALUE
      if (src(from + PRESENT) != 0) {
        if (dst(to + PRESENT) == 0) {
          dst(to + LEAST) = src(from + LEAST)
          dst(to + GREATEST) = src(from + GREATEST)
        } else {
          dst(to + LEAST) = math.min(dst(to + LEAST), src(from + LEAST))
          dst(to + GREATEST) = math.max(dst(to + GREATEST), src(from + GREATEST))
        }
        dst(to + SUM) = addSum(dst(to + SUM), src(from + SUM))
        dst(to + PRESENT) = add(dst(to + PRESENT), src(from + PRESENT))
      }
      t += 1
    }
  }

  /** A new START: one prefix, the row itself, which is a match when the pattern is one row. */
  private def openStart(lo: Long, hi: Long, tag: AnyRef, v: Array[Long], p: Array[Boolean]): Unit = {
    if (size == startLo.length) grow()
    startLo(size) = lo
    java.util.Arrays.fill(step, 0L)
    step(COUNT) = 1L
    bind(0, v, p)
    if (own != null) {
      java.util.Arrays.fill(own, size * stride, (size + 1) * stride, 0L)
      tags(size) = tag
    }
    val base = size * block
    java.util.Arrays.fill(counts, base, base + block, 0L)
    System.arraycopy(step, 0, counts, all(base, 0), stride)
    System.arraycopy(step, 0, counts, ready(base, 0), stride)
    size += 1
    if (n == 1 && hi - lo <= window) {
      combine(total, 0, step, 0)
      if (own != null) combine(own, (size - 1) * stride, step, 0)
    }
  }

  /** The oldest open START's window has passed: hands its matches to `closed`. */
  private def close(start: Int): Unit = {
    if (own != null) {
      if (own(start * stride + COUNT) > 0) {
        closed(tags(start), java.util.Arrays.copyOfRange(own, start * stride, (start + 1) * stride))
      }
      tags(start) = null
    }
    head += 1
  }

  /** No more rows: every open START is closed. */
  def finish(): Unit = while (head < size) close(head)

  private def add(a: Long, b: Long): Long =
    try Math.addExact(a, b)
    catch {
      case _: ArithmeticException => throw MatchCounter.tooMany()
    }

  private def addSum(a: Long, b: Long): Long =
    try Math.addExact(a, b)
    catch {
      case _: ArithmeticException => throw MatchCounter.sumTooLarge()
    }

  private def multiply(a: Long, b: Long): Long =
    try Math.multiplyExact(a, b)
    catch {
      case _: ArithmeticException => throw MatchCounter.sumTooLarge()
    }

  private def grow(): Unit = {
    val live = size - head
    val capacity = if (live * 2 > startLo.length) startLo.length * 2 else startLo.length
    val moved = new Array[Long](capacity)
    System.arraycopy(startLo, head, moved, 0, live)
    val movedCounts = new Array[Long](capacity * block)
    System.arraycopy(counts, head * block, movedCounts, 0, live * block)
    startLo = moved
    counts = movedCounts
    if (own != null) {
      val movedOwn = new Array[Long](capacity * stride)
      System.arraycopy(own, head * stride, movedOwn, 0, live * stride)
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

  /**
   * The layout of a count with its values' aggregates: the count at `COUNT`, then for value
   * t, at `1 + t * VALUE`: the sum of the value over the counted prefixes (0 unless
   * summed), how many of them have it (not null), and, when that is above 0, its least and
   * greatest.
   */
  object Aggregates {
    val COUNT = 0
    val VALUE = 4
    val SUM = 0
    val PRESENT = 1
    val LEAST = 2
    val GREATEST = 3

    def width(values: Int): Int = 1 + values * VALUE
  }

  def tooMany(): MatchRecognizeLimitException = new MatchRecognizeLimitException(
    "SKIP TILL ANY MATCH counted more matches (or partial matches) for one partition key " +
      "than a BIGINT holds " +
      "(9,223,372,036,854,775,807); narrow the pattern (WITHIN, DEFINE conditions).")

  def sumTooLarge(): MatchRecognizeLimitException = new MatchRecognizeLimitException(
    "SKIP TILL ANY MATCH summed a measure over the matches of one partition key past what a " +
      "BIGINT holds (9,223,372,036,854,775,807); narrow the pattern (WITHIN, DEFINE " +
      "conditions) or aggregate a smaller value.")
}
