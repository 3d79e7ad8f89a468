package org.apache.spark.sql.matchrecognize.execution.automaton

import java.util.ArrayDeque

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.plans.RowsPerMatch

/**
 * Turns the matches of a partition into output rows: evaluates MEASURES (RUNNING at each
 * row for ALL ROWS PER MATCH, at the last row for ONE ROW PER MATCH, FINAL over the whole
 * match) and lays out the columns. Matches wait until the rows their measures may read
 * ahead (NEXT) have arrived; rows that end up in no match are written for WITH UNMATCHED
 * ROWS once the matcher has passed them.
 */
final class MatchOutputWriter(spec: MatcherSpec, buffer: RowBuffer, out: ArrayDeque[InternalRow]) {

  private val rowsPerMatch = spec.options.rowsPerMatch
  private val allRows = rowsPerMatch != RowsPerMatch.OneRow
  private val withUnmatched = rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched

  private val slots = new SlotEvaluator(spec.measureSlots, spec.rowAttributes, spec.labels, buffer)
  private val measureProjection = UnsafeProjection.create(spec.measureExpressions)
  private val outputProjection = UnsafeProjection.create(spec.outputExpressions)
  // The output columns with the measures computed in place, over (current row, slots): one
  // projection per output row instead of two. The input columns ONE ROW PER MATCH outputs
  // are the partition keys, equal on every row of the match.
  private val fusedProjection = {
    val width = spec.inputAttributes.length
    UnsafeProjection.create(spec.outputExpressions.map(_.transformUp { // not into the measures
      case b: BoundReference if b.ordinal >= width => spec.measureExpressions(b.ordinal - width)
    }))
  }
  private val nullInput = new GenericInternalRow(spec.inputAttributes.length)
  private val nullMeasures = new GenericInternalRow(spec.measureExpressions.length)
  private val joined = new JoinedRow
  private val joinedOut = new JoinedRow
  private val finalAggregates = new Array[Any](spec.measureSlots.length)
  private val runningAggregates = new Array[Any](spec.measureSlots.length)
  private val runningCounts = new Array[Long](spec.measureSlots.length)

  private val pending = new ArrayDeque[CompletedMatch]()

  /** Rows up to this position have been written or covered by a match. */
  private var frontier = -1L
  private var rowsOut = 0L

  def outputRows: Long = rowsOut

  // Split ranges: the rows from here on are the next range's, which writes them if unmatched.
  private var unmatchedEnd = Long.MaxValue

  // The last row a match written in this partition covers (-1: none yet).
  private var matchedTo = -1L

  // Split ranges where matches may overlap: the unmatched rows written from here on are
  // tagged with their offset from it (-1: none are), as an earlier range's match may cover
  // them ([[SplitReconciliation]] drops those).
  private var tagFrom = -1L
  private var tags: UnmatchedTags = _

  def reset(): Unit = {
    pending.clear()
    frontier = -1L
    unmatchedEnd = Long.MaxValue
    matchedTo = -1L
    tagFrom = -1L
  }

  /** The last row a match written in this partition covers (-1: none). */
  def coveredByMatches: Long = matchedTo

  /** Tags the unmatched rows of this partition from `pos` on with their offset from it. */
  def tagUnmatchedFrom(pos: Long): Unit = {
    if (tags == null) tags = new UnmatchedTags
    tagFrom = pos
  }

  /**
   * The offset of output row `index` (counted over the task, asked in order) when it is a
   * tagged unmatched row, else -1.
   */
  def unmatchedOffset(index: Long): Long = if (tags == null) -1L else tags.take(index)

  /** The rows from `pos` on belong to the next range of a split partition. */
  def stopUnmatchedAt(pos: Long): Unit = unmatchedEnd = pos

  /** The rows before `pos` are covered by a match of an earlier range of a split partition. */
  def coveredBefore(pos: Long): Unit = frontier = math.max(frontier, pos - 1)

  /** Resumes after a point where the rows up to `writtenUpTo` were written or covered. */
  def resume(writtenUpTo: Long): Unit = {
    pending.clear()
    frontier = writtenUpTo
  }

  /** Rows up to this position have been written or covered by a match. */
  def writtenUpTo: Long = frontier

  /** Decided matches not yet written (waiting for the rows their measures read ahead). */
  def waiting: Int = pending.size

  def add(m: CompletedMatch): Unit = pending.addLast(m)

  /** The oldest row this writer may still need. */
  def oldestNeeded: Long = {
    val fromPending = if (pending.isEmpty) Long.MaxValue else pending.peekFirst().start
    val fromUnmatched = if (withUnmatched) frontier + 1 else Long.MaxValue
    math.min(fromPending, fromUnmatched)
  }

  /**
   * Writes what can be written: matches whose look-ahead rows are available (all of them
   * when `partitionEnd` is known), and unmatched rows below `resolvedBelow`.
   */
  def flush(resolvedBelow: Long, partitionEnd: Option[Long]): Unit = {
    var more = true
    while (more) {
      if (!pending.isEmpty) {
        val m = pending.peekFirst()
        if (partitionEnd.isDefined || m.end + spec.measureLookAhead < buffer.end) {
          pending.removeFirst()
          writeWithUnmatched(m)
        } else more = false
      } else {
        if (withUnmatched) writeUnmatched(partitionEnd.getOrElse(resolvedBelow))
        more = false
      }
    }
  }

  /**
   * At the partition end, while the matcher is still deciding matches: writes the pending
   * ones (every row they may read has arrived) and the unmatched rows before them, so that
   * matches decided together are not all held at once.
   */
  def flushAtEnd(): Unit = {
    while (!pending.isEmpty) writeWithUnmatched(pending.removeFirst())
  }

  /** Writes the unmatched rows before `m`, then `m`. */
  private def writeWithUnmatched(m: CompletedMatch): Unit = {
    if (withUnmatched) writeUnmatched(m.start)
    write(m)
    val last = if (m.isEmpty) m.start else m.end
    frontier = math.max(frontier, last)
    matchedTo = math.max(matchedTo, last)
  }

  /** Unmatched rows from the frontier up to (excluding) `until`. */
  private def writeUnmatched(until: Long): Unit = {
    var p = frontier + 1
    val end = math.min(until, unmatchedEnd)
    while (p < end) {
      if (tagFrom >= 0) tags.add(rowsOut, p - tagFrom)
      emit(buffer.get(p), nullMeasures)
      p += 1
    }
    frontier = math.max(frontier, until - 1)
  }

  private def write(m: CompletedMatch): Unit = {
    if (!allRows) {
      m.setCurrent(m.end)
      if (m.isEmpty) emit(buffer.get(m.start), measures(nullInput, slots.fill(m, m)))
      else emitMeasured(buffer.get(m.end), slots.fill(m, m))
    } else if (m.isEmpty) {
      if (rowsPerMatch != RowsPerMatch.AllRowsOmitEmpty) {
        m.setCurrent(m.start - 1)
        emit(buffer.get(m.start), measures(nullInput, slots.fill(m, m)))
      }
    } else {
      writeAllRows(m)
    }
  }

  private def writeAllRows(m: CompletedMatch): Unit = {
    val kinds = slots.slotKinds
    val vars = slots.slotVars
    val runners = slots.aggregateRunners
    val counts = slots.slotCountsRows
    // FINAL aggregates: one pass over the whole match.
    var i = 0
    while (i < kinds.length) {
      kinds(i) match {
        case _: AggregateSlot if counts(i) =>
          m.setCurrent(m.end)
          finalAggregates(i) = m.countRows(vars(i))
          runningCounts(i) = 0L
        case _: AggregateSlot =>
          val r = runners(i)
          r.reset()
          m.setCurrent(m.end)
          m.foreachRow(vars(i))((p, l) => r.update(slots.rowOf(p, l, m.matchNumber)))
          finalAggregates(i) = r.result
          r.reset() // the RUNNING pass below reuses the runner
        case _ =>
      }
      i += 1
    }
    val whole = wholeMatch(m)
    var off = 0
    while (off < m.length) {
      val pos = m.start + off
      val label = m.labels(off)
      m.setCurrent(pos)
      i = 0
      while (i < kinds.length) {
        kinds(i) match {
          case s: AggregateSlot =>
            val counted = vars(i) == null || (label >= 0 && MatchView.inSet(vars(i), label))
            runningAggregates(i) =
              if (s.isFinal) finalAggregates(i)
              else if (counts(i)) {
                if (counted) runningCounts(i) += 1
                runningCounts(i)
              } else {
                if (counted) runners(i).update(slots.rowOf(pos, label, m.matchNumber))
                runners(i).result
              }
          case _ =>
        }
        i += 1
      }
      if (!m.excluded(off) && label >= 0) {
        emitMeasured(buffer.get(pos), slots.fillNavigationsAndNumber(m, whole, runningAggregates))
      }
      off += 1
    }
  }

  /** FINAL reads go through a second view of the same match, with the last row current. */
  private def wholeMatch(m: CompletedMatch): MatchView = new MatchView {
    def start: Long = m.start
    def current: Long = m.end
    def matchNumber: Long = m.matchNumber
    private def atEnd[T](f: => T): T = {
      val saved = m.current
      m.setCurrent(m.end)
      try f
      finally m.setCurrent(saved)
    }
    def lastOf(vars: Array[Int], n: Int): Long = atEnd(m.lastOf(vars, n))
    def firstOf(vars: Array[Int], n: Int): Long = atEnd(m.firstOf(vars, n))
    def labelAt(pos: Long): Int = m.labelAt(pos)
    def foreachRow(vars: Array[Int])(f: (Long, Int) => Unit): Unit = atEnd(m.foreachRow(vars)(f))
  }

  private def measures(current: InternalRow, slotRow: InternalRow): InternalRow =
    measureProjection(joined(current, slotRow))

  private def emit(input: InternalRow, measureRow: InternalRow): Unit = {
    out.addLast(outputProjection(joinedOut(input, measureRow)).copy())
    rowsOut += 1
  }

  /** The output row of a match's row `current`, its measures computed from `slotRow`. */
  private def emitMeasured(current: InternalRow, slotRow: InternalRow): Unit = {
    out.addLast(fusedProjection(joined(current, slotRow)).copy())
    rowsOut += 1
  }
}

/** Output row indices of tagged unmatched rows and their offsets, oldest first. */
private final class UnmatchedTags {
  private var indices = new Array[Long](16)
  private var offsets = new Array[Long](16)
  private var head = 0
  private var size = 0

  def add(index: Long, offset: Long): Unit = {
    if (size == indices.length) {
      val live = size - head
      if (head < live) { // more than half in use: grow
        indices = java.util.Arrays.copyOf(indices, indices.length * 2)
        offsets = java.util.Arrays.copyOf(offsets, offsets.length * 2)
      }
      System.arraycopy(indices, head, indices, 0, live)
      System.arraycopy(offsets, head, offsets, 0, live)
      head = 0
      size = live
    }
    indices(size) = index
    offsets(size) = offset
    size += 1
  }

  /** The offset of row `index` if it is the oldest tagged row (then forgotten), else -1. */
  def take(index: Long): Long =
    if (head < size && indices(head) == index) {
      val o = offsets(head)
      head += 1
      if (head == size) { head = 0; size = 0 }
      o
    } else -1L
}
