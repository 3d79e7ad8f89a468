package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * The matches a task has found but not yet handed out, first in first out: each a built
 * match, or a root match as its pair of partial matches (see [[PairSink]]), with the
 * number of its tree. Parallel arrays, so queueing a match allocates nothing.
 */
private[tree] final class PendingMatches {
  private var lefts = new Array[PartialMatch](64)
  private var rights = new Array[PartialMatch](64)
  private var trees = new Array[Int](64)
  private var start = 0
  private var end = 0

  def isEmpty: Boolean = start == end

  /** Queues match `m` of tree `t`. */
  def add(t: Int, m: PartialMatch): Unit = add(t, m, null)

  /** Queues the root match of tree `t` combining `left` and `right` (null: `left` is built). */
  def add(t: Int, left: PartialMatch, right: PartialMatch): Unit = {
    if (end == lefts.length) makeRoom()
    lefts(end) = left
    rights(end) = right
    trees(end) = t
    end += 1
  }

  private def makeRoom(): Unit = {
    val live = end - start
    val size = if (live * 2 > lefts.length) lefts.length * 2 else lefts.length
    val (l, r, t) = (new Array[PartialMatch](size), new Array[PartialMatch](size), new Array[Int](size))
    System.arraycopy(lefts, start, l, 0, live)
    System.arraycopy(rights, start, r, 0, live)
    System.arraycopy(trees, start, t, 0, live)
    lefts = l
    rights = r
    trees = t
    start = 0
    end = live
  }

  /** The oldest queued match: its tree, left (or built) part and right part (or null). */
  def tree: Int = trees(start)
  def left: PartialMatch = lefts(start)
  def right: PartialMatch = rights(start)

  /** Drops the oldest queued match. */
  def drop(): Unit = {
    lefts(start) = null
    rights(start) = null
    start += 1
    if (start == end) { start = 0; end = 0 }
  }
}
