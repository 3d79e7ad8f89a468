package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A reusable [[MatchView]] over a thread, optionally with one more row tentatively mapped
 * (the row whose DEFINE condition is being tested, right after the thread's rows).
 */
private final class MutableThreadView(history: HistoryStore, running: RunningAggregates,
    work: MatcherWork) extends MatchView {
  private var startPos = 0L
  private var chunk: HistoryChunk = _
  private var length = 0
  private var lastByLabel: Array[Long] = _
  private var firstByLabel: Array[Long] = _
  private var tracked = false
  private var number = 0L
  private var tentativeLabel = -1
  private var scratch = new Array[Int](16)
  private var aggregates: UnsafeRow = _
  private var aggregateValues: InternalRow = _

  def reset(start: Long, chunk: HistoryChunk, length: Int, lastByLabel: Array[Long],
      firstByLabel: Array[Long], tracked: Boolean, matchNumber: Long, label: Int,
      aggregates: UnsafeRow): Unit = {
    this.aggregates = aggregates
    this.aggregateValues = null
    this.startPos = start
    this.chunk = chunk
    this.length = length
    this.lastByLabel = lastByLabel
    this.firstByLabel = firstByLabel
    this.tracked = tracked
    this.number = matchNumber
    this.tentativeLabel = label
  }

  private def tentativePos: Long = startPos + length
  private def rows: Int = if (tentativeLabel >= 0) length + 1 else length
  private def labelOfEntry(i: Int): Int =
    if (i == length) tentativeLabel else history.labelOf(history.codeAt(chunk, i))

  def start: Long = startPos
  def current: Long = startPos + rows - 1
  def matchNumber: Long = number

  def lastOf(vars: Array[Int], n: Int): Long = {
    if (vars == null) {
      val p = current - n
      return if (rows > 0 && p >= startPos) p else -1L
    }
    var k = n
    if (tentativeLabel >= 0 && MatchView.inSet(vars, tentativeLabel)) {
      if (k == 0) return tentativePos
      k -= 1
    }
    // Stored rows, newest first; with one tracked variable, from its last row on.
    var i = length - 1
    if (tracked && vars.length == 1) {
      val p = lastByLabel(vars(0))
      if (p < 0) return -1L
      i = (p - startPos).toInt
    }
    var c = chunk
    while (i >= 0) {
      work.steps += 1
      while (c.offset > i) c = c.prev
      val l = history.labelOf(history.codeAt(c, i))
      if (l >= 0 && MatchView.inSet(vars, l)) {
        if (k == 0) return startPos + i
        k -= 1
      }
      i -= 1
    }
    -1L
  }

  def firstOf(vars: Array[Int], n: Int): Long = {
    if (vars == null) {
      val p = startPos + n
      return if (rows > 0 && p <= current) p else -1L
    }
    if (n == 0 && tracked) {
      var best = Long.MaxValue
      var i = 0
      while (i < vars.length) {
        val l = vars(i)
        val p = if (firstByLabel(l) >= 0) firstByLabel(l)
        else if (l == tentativeLabel) tentativePos
        else -1L
        if (p >= 0 && p < best) best = p
        i += 1
      }
      return if (best == Long.MaxValue) -1L else best
    }
    var found = -1L
    var k = n
    foreachRow(vars) { (p, _) =>
      if (found < 0) { if (k == 0) found = p else k -= 1 }
    }
    found
  }

  def labelAt(pos: Long): Int =
    if (pos < startPos || pos > current) -1 else labelOfEntry((pos - startPos).toInt)

  override def runningAggregates: InternalRow = {
    if (aggregateValues == null && aggregates != null) {
      work.steps += 1
      aggregateValues =
        if (tentativeLabel >= 0) running.tentative(aggregates, tentativePos, tentativeLabel, number)
        else running.values(aggregates)
    }
    aggregateValues
  }

  def foreachRow(vars: Array[Int])(f: (Long, Int) => Unit): Unit = {
    if (scratch.length < length) scratch = new Array[Int](math.max(length, scratch.length * 2))
    work.steps += length
    history.decode(chunk, length, scratch)
    var i = 0
    while (i < rows) {
      val l = if (i == length) tentativeLabel else history.labelOf(scratch(i))
      if (vars == null || (l >= 0 && MatchView.inSet(vars, l))) f(startPos + i, l)
      i += 1
    }
  }
}
