package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * A group moving from one tree of its alternative to another (see `TreesPerKey`) as ZStream
 * switches plans: the next tree is built from the rows the leaves of the tree left kept
 * (both evaluated with `keepsLeaves`), and the tree left is dropped at once.
 *
 * The checks' rows (negations, closures) and the matches held for a trailing negation are
 * the alternative's, whatever its tree: they move as they are, but a tree numbers its
 * leaves in its own order, so a match's rows are renumbered. The leaves' rows enter the next
 * tree's leaves again in the order their events came and combine into its partial matches
 * as they would have, had it read the events itself; a match they complete at a root is not
 * completed again (the tree left wrote it, or holds it). From the next event on, the next
 * tree writes every match the tree left would have, and the tree left none.
 */
private[tree] object TreeRebuild {

  /**
   * Builds `to`, an empty state of `next`, from `from`, a state of `left`, and empties `from`
   * (see `TreeState.clear`). `emit` is `next`'s. Returns the leaf rows read.
   */
  def apply(left: TreeGraphEvaluator, from: TreeState, next: TreeGraphEvaluator, to: TreeState,
      emit: Array[PartialMatch => Unit], describeKey: () => String): Long = {
    require(left.keepsLeaves && next.keepsLeaves && from.buffers.length == to.buffers.length,
      "a tree is rebuilt from another tree of its alternative that kept its leaves")
    // Each of `left`'s leaves' number in `next`.
    val leafHere = left.leafVariables.map(next.leafVariables.indexOf(_)).toArray
    require(leafHere.sorted.sameElements(next.leafVariables.indices), "the trees bind the same variables, each once")
    def renumbered(m: PartialMatch): PartialMatch = {
      val rows = java.util.Arrays.copyOf(m.rows, m.rows.length)
      var k = 0
      while (k < leafHere.length) { rows(leafHere(k)) = m.rows(k); k += 1 }
      new PartialMatch(rows, m.lo, m.hi, m.firstOrder, m.lastOrder)
    }
    // Negations' and closures' rows bind only the places after the leaves.
    var i = next.nodeCount
    while (i < to.buffers.length) {
      from.buffers(i).iterator.foreach(m => TreeGraphEvaluator.buffer(to, i, m, next.maxBuffered, describeKey))
      i += 1
    }
    from.held.forEach { m =>
      to.held.add(renumbered(m))
      TreeGraphEvaluator.countBuffered(to, next.maxBuffered, describeKey)
    }
    to.heldUntil = from.heldUntil
    to.lastPosition = from.lastPosition
    // Events come in ORDER BY order: sorting the leaves' rows by it (stably, a leaf's rows
    // being in event order) replays the events' order. Rows of one event entering two
    // leaves never combine (a join asks for distinct ORDER BY positions).
    val rows = leafHere.indices.flatMap { k =>
      val n = left.nodeOfLeaf(k)
      if (n < 0 || next.nodeOfLeaf(leafHere(k)) < 0) Iterator.empty
      else from.buffers(n).iterator.map(m => (renumbered(m), leafHere(k)))
    }.sortBy { case (m, k) => (m.firstOrder, k) }
    next.replay(to, rows, emit, describeKey)
    from.clear()
    from.indexes = null
    rows.length.toLong
  }
}
