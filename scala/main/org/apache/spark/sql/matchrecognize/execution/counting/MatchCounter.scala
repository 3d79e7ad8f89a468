package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.sql.matchrecognize.plans.CountedSequence
import org.apache.spark.sql.matchrecognize.plans.CountedSequence.Pair

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
 * counts ([[PrefixAggregates]]): a prefix that binds a value's element to a row takes that
 * row's value, and a prefix extended further keeps it, so the aggregates of the complete
 * matches come out with their count, still without building one.
 *
 * When the DEFINE of element `j + 1` compares its row with element `j`'s (a pair, see
 * `CountedSequence.pairs`), the `ready` prefixes at `j` are also kept per key of their last
 * row ([[KeyedPrefixes]]), and a row of `j + 1` extends only those its probe matches.
 * When a variable's DEFINE compares its row with the match's first row, each open START
 * asks `relation` about the row before the row extends (or resets) its prefixes: the
 * START's row is one, so the question is one per START and row, as the counts are.
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
    closed: (AnyRef, Array[Long]) => Unit = null, relation: StartRelation = null) extends Serializable {
  import PrefixAggregates._

  private val n = sequence.length
  private val elements = sequence.elements.toArray
  private val closure = sequence.closure.toArray
  private val negated = sequence.negatedAfter.map(_.toArray).toArray
  private val valueElements = sequence.valueElements.toArray
  private val summed = sequence.summed.toArray
  private val valueFromFirst = Array.tabulate(valueElements.length)(sequence.fromFirstRow)
  private val ops = new PrefixAggregates(sequence.values)
  private val stride = ops.width
  private val pairs = Array.tabulate(n)(sequence.pair)
  private val anyPair = pairs.exists(_ != Pair.NONE)
  private val fromStart =
    Array.tabulate((sequence.elements ++ sequence.negatedAfter.flatten).max + 1)(sequence.fromStart.contains)
  private val anyFromStart = sequence.fromStart.nonEmpty
  require(!anyFromStart || relation != null, "a relation to the first row needs a StartRelation")
  // One START's block: all(j) and ready(j) aggregates for every element j.
  private val block = 2 * n * stride

  // Open STARTs, oldest first, from `head`: window position and a block each.
  private var startLo = new Array[Long](16)
  private var counts = new Array[Long](16 * block)
  // With `closed`: each START's own matches and tag.
  private var own: Array[Long] = if (closed == null) null else new Array[Long](16 * stride)
  private var tags: Array[AnyRef] = if (closed == null) null else new Array[AnyRef](16)
  // With pairs: each START's keyed prefixes at element j, at START * n + j.
  private var keyed: Array[KeyedPrefixes] = if (anyPair) new Array[KeyedPrefixes](16 * n) else null
  // With relations to the first row: each START's row, as handed over.
  private var startRows: Array[AnyRef] = if (anyFromStart) new Array[AnyRef](16) else null
  private var head = 0
  private var size = 0

  private val total = new Array[Long](stride)

  // What one group adds to each open START's block, and which `ready` aggregates it resets.
  private var delta = new Array[Long](16 * block)
  private val killed = new Array[Boolean](n)
  // With relations to the first row: which live START's ready prefixes at j a row resets.
  private var killedFor: Array[Boolean] = if (anyFromStart) new Array[Boolean](16 * n) else null
  // With pairs: what one group adds to each open START's keyed prefixes, at live START * n + j.
  private var keyedDelta: Array[KeyedPrefixes] = if (anyPair) new Array[KeyedPrefixes](16 * n) else null
  // The prefixes one row makes at one element.
  private val step = new Array[Long](stride)

  /** The matches completed so far. */
  def matches: Long = total(COUNT)

  /** The aggregates of the matches completed so far (see [[PrefixAggregates]]). */
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
   * row r, read only when `present(r)(t)` (not null); with pairs, `keys(r)(j)` row r's key as
   * element j's row and `probes(r)(j)` its probe as element `j + 1`'s (null: none); with
   * relations to the first row, `rowsOf(r)` the row as the `StartRelation` reads it.
   */
  def addGroup(rows: Int, flags: Array[Array[Boolean]], lo: Array[Long], hi: Array[Long],
      starts: Array[Boolean], startTags: Array[AnyRef] = null, values: Array[Array[Long]] = null,
      present: Array[Array[Boolean]] = null, keys: Array[Array[PairKey]] = null,
      probes: Array[Array[PairKey]] = null, rowsOf: Array[AnyRef] = null): Unit = {
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
    if (anyPair) clearKeyedDelta(live)
    if (anyFromStart) {
      if (killedFor.length < live * n) killedFor = new Array[Boolean](math.max(live * n, 2 * killedFor.length))
      java.util.Arrays.fill(killedFor, 0, live * n, false)
    }
    var r = 0
    while (r < rows) {
      val f = flags(r)
      val v = if (values == null) null else values(r)
      val p = if (present == null) null else present(r)
      val key = if (keys == null) null else keys(r)
      val probe = if (probes == null) null else probes(r)
      val row = if (rowsOf == null) null else rowsOf(r)
      var s = 0
      while (s < live) {
        if (hi(r) - startLo(head + s) <= window) extend(f, v, p, key, probe, row, head + s, s)
        s += 1
      }
      var j = 0
      while (j < n - 1) {
        negated(j).foreach { d =>
          if (f(d)) {
            if (!fromStart(d)) killed(j) = true
            else {
              var s = 0
              while (s < live) {
                if (relation.holds(startRows(head + s), row, d)) killedFor(s * n + j) = true
                s += 1
              }
            }
          }
        }
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
        val reset = killed(j) || anyFromStart && killedFor(s * n + j)
        ops.combine(counts, all(base, j), delta, all(s * block, j))
        if (reset) java.util.Arrays.fill(counts, ready(base, j), ready(base, j) + stride, 0L)
        ops.combine(counts, ready(base, j), delta, ready(s * block, j))
        if (pairs(j) != Pair.NONE) {
          val added = keyedDelta(s * n + j)
          if (reset || added != null && !added.isEmpty) {
            val kept = keyedAt(head + s, j)
            if (reset) kept.clear()
            if (added != null) kept.addAll(added)
          }
        }
        j += 1
      }
      s += 1
    }
    r = 0
    while (r < rows) {
      if (starts(r) && flags(r)(elements(0))) {
        openStart(lo(r), hi(r), if (startTags == null) null else startTags(r),
          if (values == null) null else values(r), if (present == null) null else present(r),
          if (keys == null) null else keys(r)(0), if (rowsOf == null) null else rowsOf(r))
      }
      r += 1
    }
  }

  /** What row `f` adds to the block of START `start` (live START `s`), into the deltas. */
  private def extend(f: Array[Boolean], v: Array[Long], p: Array[Boolean], key: Array[PairKey],
      probe: Array[PairKey], row: AnyRef, start: Int, s: Int): Unit = {
    val base = start * block
    val out = s * block
    var j = 0
    while (j < n) {
      val e = elements(j)
      if (f(e) && (!fromStart(e) || relation.holds(startRows(start), row, e))) {
        java.util.Arrays.fill(step, 0L)
        if (j > 0) {
          if (pairs(j - 1) == Pair.NONE) ops.combine(step, 0, counts, ready(base, j - 1))
          else if (probe(j - 1) != null && keyed(start * n + j - 1) != null) {
            keyed(start * n + j - 1).matching(probe(j - 1), pairs(j - 1), step)
          }
        }
        // A closure's first chosen row binds only the prefixes it opens the closure for; its
        // last (and a single row) binds every prefix it ends.
        bind(j, v, p, fromFirst = true)
        if (closure(j)) ops.combine(step, 0, counts, all(base, j))
        if (step(COUNT) != 0) {
          bind(j, v, p, fromFirst = false)
          ops.combine(delta, all(out, j), step, 0)
          ops.combine(delta, ready(out, j), step, 0)
          if (pairs(j) != Pair.NONE && key(j) != null) keyedDeltaAt(s, j).add(key(j), step, 0)
          if (j == n - 1) {
            ops.combine(total, 0, step, 0)
            if (own != null) ops.combine(own, start * stride, step, 0)
          }
        }
      }
      j += 1
    }
  }

  private def keyedAt(start: Int, j: Int): KeyedPrefixes = {
    if (keyed(start * n + j) == null) keyed(start * n + j) = new KeyedPrefixes(ops)
    keyed(start * n + j)
  }

  private def keyedDeltaAt(s: Int, j: Int): KeyedPrefixes = {
    if (keyedDelta(s * n + j) == null) keyedDelta(s * n + j) = new KeyedPrefixes(ops)
    keyedDelta(s * n + j)
  }

  private def clearKeyedDelta(live: Int): Unit = {
    if (keyedDelta.length < live * n) {
      keyedDelta = java.util.Arrays.copyOf(keyedDelta, math.max(live * n, 2 * keyedDelta.length))
    }
    var i = 0
    while (i < live * n) {
      if (keyedDelta(i) != null) keyedDelta(i).clear()
      i += 1
    }
  }

  /**
   * The prefixes in `step` bind element j to this row: its values (those read from the
   * element's first row, or the others) are theirs.
   */
  private def bind(j: Int, v: Array[Long], p: Array[Boolean], fromFirst: Boolean): Unit = {
    var t = 0
    while (t < valueElements.length) {
      if (valueElements(t) == j && valueFromFirst(t) == fromFirst) {
        val at = 1 + t * VALUE
        if (p(t)) {
          step(at + SUM) = if (summed(t)) ops.sumOf(step(COUNT), v(t)) else 0L
          step(at + PRESENT) = step(COUNT)
          step(at + LEAST) = v(t)
          step(at + GREATEST) = v(t)
        } else java.util.Arrays.fill(step, at, at + VALUE, 0L)
      }
      t += 1
    }
  }

  /** A new START: one prefix, the row itself, which is a match when the pattern is one row. */
  private def openStart(lo: Long, hi: Long, tag: AnyRef, v: Array[Long], p: Array[Boolean],
      key: PairKey, row: AnyRef): Unit = {
    if (size == startLo.length) grow()
    startLo(size) = lo
    if (anyFromStart) startRows(size) = row
    java.util.Arrays.fill(step, 0L)
    step(COUNT) = 1L
    bind(0, v, p, fromFirst = true)
    bind(0, v, p, fromFirst = false)
    if (own != null) {
      java.util.Arrays.fill(own, size * stride, (size + 1) * stride, 0L)
      tags(size) = tag
    }
    val base = size * block
    java.util.Arrays.fill(counts, base, base + block, 0L)
    System.arraycopy(step, 0, counts, all(base, 0), stride)
    System.arraycopy(step, 0, counts, ready(base, 0), stride)
    if (anyPair) {
      java.util.Arrays.fill(keyed.asInstanceOf[Array[AnyRef]], size * n, (size + 1) * n, null)
      if (pairs(0) != Pair.NONE && key != null) keyedAt(size, 0).add(key, step, 0)
    }
    size += 1
    if (n == 1 && hi - lo <= window) {
      ops.combine(total, 0, step, 0)
      if (own != null) ops.combine(own, (size - 1) * stride, step, 0)
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
    if (anyPair) java.util.Arrays.fill(keyed.asInstanceOf[Array[AnyRef]], start * n, (start + 1) * n, null)
    if (anyFromStart) startRows(start) = null
    head += 1
  }

  /** No more rows: every open START is closed. */
  def finish(): Unit = while (head < size) close(head)

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
    if (anyFromStart) {
      val movedRows = new Array[AnyRef](capacity)
      System.arraycopy(startRows, head, movedRows, 0, live)
      startRows = movedRows
    }
    if (anyPair) {
      val movedKeyed = new Array[KeyedPrefixes](capacity * n)
      System.arraycopy(keyed, head * n, movedKeyed, 0, live * n)
      keyed = movedKeyed
    }
    head = 0
    size = live
  }
}
