package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow

/**
 * What pattern expressions can ask about a match (complete or in progress): where its
 * rows are, which variable each row is mapped to, and which row is "current" (the row being
 * matched in DEFINE, the row being output in ALL ROWS PER MATCH, the last row otherwise).
 * Positions are positions in the partition; -1 means "no such row".
 */
trait MatchView {
  def start: Long

  /** The current row; `start - 1` for an empty match. */
  def current: Long
  def matchNumber: Long

  /** The `n`-th row of `vars` (null = all rows) counted back from the current row. */
  def lastOf(vars: Array[Int], n: Int): Long

  /** The `n`-th row of `vars` counted from the first row of the match (up to current). */
  def firstOf(vars: Array[Int], n: Int): Long

  /** The label of the row at `pos` if it is a row of the match up to current, else -1. */
  def labelAt(pos: Long): Int

  /** Calls `f(pos, label)` for each row of `vars` from the start up to current, in order. */
  def foreachRow(vars: Array[Int])(f: (Long, Int) => Unit): Unit

  /**
   * The values of the DEFINE aggregates kept running ([[RunningAggregates]]) over the rows
   * up to current, in their order there; null when the view does not keep them.
   */
  def runningAggregates: InternalRow = null

  /** The number of rows of `vars` from the start up to current. */
  def countRows(vars: Array[Int]): Long = {
    var n = 0L
    foreachRow(vars)((_, _) => n += 1)
    n
  }
}

object MatchView {
  def inSet(vars: Array[Int], label: Int): Boolean = {
    if (vars == null) return true
    var i = 0
    while (i < vars.length) {
      if (vars(i) == label) return true
      i += 1
    }
    false
  }
}

/**
 * A complete match as arrays, with a movable current row: ALL ROWS PER MATCH moves it over
 * the rows of the match; ONE ROW PER MATCH leaves it on the last row.
 *
 * @param labels   label per row from `start` (-1 for skipped rows)
 * @param excluded per row: inside `{- -}`, not output by ALL ROWS PER MATCH
 */
final class CompletedMatch(
    val start: Long,
    val labels: Array[Int],
    val excluded: Array[Boolean],
    val matchNumber: Long,
    labelCount: Int) extends MatchView {

  val length: Int = labels.length
  def end: Long = start + length - 1
  def isEmpty: Boolean = length == 0

  private var cur: Long = end
  def current: Long = cur
  def setCurrent(pos: Long): Unit = cur = pos

  /** For each label, the offsets (from start) of its rows, ascending; built on first use. */
  private val byLabelCache = new Array[Array[Int]](labelCount)

  private def byLabel(l: Int): Array[Int] = {
    var arr = byLabelCache(l)
    if (arr == null) {
      var n = 0
      var i = 0
      while (i < labels.length) { if (labels(i) == l) n += 1; i += 1 }
      arr = new Array[Int](n)
      n = 0
      i = 0
      while (i < labels.length) { if (labels(i) == l) { arr(n) = i; n += 1 }; i += 1 }
      byLabelCache(l) = arr
    }
    arr
  }

  /** Number of rows of label `l` at offsets <= `off`. */
  private def countUpTo(l: Int, off: Int): Int = {
    val arr = byLabel(l)
    var lo = 0
    var hi = arr.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (arr(mid) <= off) lo = mid + 1 else hi = mid
    }
    lo
  }

  def lastOf(vars: Array[Int], n: Int): Long = {
    if (length == 0 || cur < start) return -1
    val curOff = (cur - start).toInt
    if (vars == null) return if (curOff - n >= 0) cur - n else -1
    if (vars.length == 1) {
      val c = countUpTo(vars(0), curOff)
      return if (n < c) start + byLabel(vars(0))(c - 1 - n) else -1
    }
    var off = curOff
    var k = n
    while (off >= 0) {
      if (labels(off) >= 0 && MatchView.inSet(vars, labels(off))) {
        if (k == 0) return start + off
        k -= 1
      }
      off -= 1
    }
    -1
  }

  def firstOf(vars: Array[Int], n: Int): Long = {
    if (length == 0 || cur < start) return -1
    val curOff = (cur - start).toInt
    if (vars == null) return if (n <= curOff) start + n else -1
    if (vars.length == 1) {
      val arr = byLabel(vars(0))
      return if (n < arr.length && arr(n) <= curOff) start + arr(n) else -1
    }
    var off = 0
    var k = n
    while (off <= curOff) {
      if (labels(off) >= 0 && MatchView.inSet(vars, labels(off))) {
        if (k == 0) return start + off
        k -= 1
      }
      off += 1
    }
    -1
  }

  /** Labels of the whole match are visible, whatever the current row (SQL:2016 for MEASURES). */
  def labelAt(pos: Long): Int =
    if (pos < start || pos > end) -1 else labels((pos - start).toInt)

  def foreachRow(vars: Array[Int])(f: (Long, Int) => Unit): Unit = {
    var off = 0
    val last = (cur - start).toInt
    while (off <= last) {
      val l = labels(off)
      if (vars == null || (l >= 0 && MatchView.inSet(vars, l))) f(start + off, l)
      off += 1
    }
  }

  override def countRows(vars: Array[Int]): Long = {
    if (cur < start) 0L
    else if (vars == null) cur - start + 1
    else {
      val curOff = (cur - start).toInt
      var n = 0L
      var i = 0
      while (i < vars.length) { n += countUpTo(vars(i), curOff); i += 1 }
      n
    }
  }

  /** The first or last row of `vars` in the whole match, for AFTER MATCH SKIP TO. */
  def boundaryOf(vars: Array[Int], first: Boolean): Long = {
    val saved = cur
    cur = end
    val p = if (first) firstOf(vars, 0) else lastOf(vars, 0)
    cur = saved
    p
  }
}
