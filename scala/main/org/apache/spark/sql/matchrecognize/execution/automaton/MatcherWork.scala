package org.apache.spark.sql.matchrecognize.execution.automaton

/**
 * Bounds the automaton's work on one partition, as [[MatcherMemory]] bounds its bytes, so
 * that a pattern whose work grows faster than its rows fails with an error naming the
 * limit instead of running for hours. A step is a partial match offered a row, an
 * instruction followed in a closure, a row folded into running aggregates, a word of a
 * state key built, or a row of a partial match read again (by an aggregate that cannot be
 * kept running, or a navigation that walks the match).
 *
 * Steps are counted from the partition's first row and compared with `perRow` times the
 * rows offered so far (at least [[MatcherWork.GraceRows]] of them), so that a burst of work
 * on a few rows passes and only an average above the limit fails. Patterns whose partial
 * matches merge take a few steps per row and live partial match; those that cannot merge
 * (one open attempt per start row) take steps in proportion to the rows so far at every
 * row, and meet the limit after about `2 * perRow / steps per attempt` rows.
 *
 * @param perRow steps allowed per row; 0 turns the limit off
 */
final class MatcherWork(val perRow: Long) {

  /** Steps taken in the current partition. */
  var steps = 0L

  /** Rows offered in the current partition. */
  var rows = 0L

  private var budget = budgetFor(0L)

  private def budgetFor(rows: Long): Long =
    if (perRow <= 0) Long.MaxValue
    else {
      val r = math.max(rows, MatcherWork.GraceRows)
      if (perRow > Long.MaxValue / r) Long.MaxValue else perRow * r
    }

  def add(n: Long): Unit = steps += n

  /** One more row of the partition is offered. */
  def row(): Unit = {
    rows += 1
    if (rows > MatcherWork.GraceRows) budget = budgetFor(rows)
  }

  /** Over the budget? */
  def over: Boolean = steps > budget

  /** A new partition. */
  def reset(): Unit = {
    steps = 0L
    rows = 0L
    budget = budgetFor(0L)
  }
}

object MatcherWork {

  /** The budget of a partition's first rows: a short partition may take this many rows' worth. */
  val GraceRows = 1000L
}
