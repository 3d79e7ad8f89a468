package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeNodeSpec}

/**
 * The checks of an alternative with negations or Kleene closures, evaluated alone in a
 * graph of `nodeCount` nodes: negations are checked where their neighbours are bound (see
 * [[TreeNegations]]); the root's matches are extended by the closures (see
 * [[TreeKleenes]]), and kept when the conditions that read closures hold. Negation `j`'s
 * rows are buffered after the tree's nodes, at `nodeCount + j`, then closure `k`'s rows.
 */
private[tree] final class NegationAndClosureChecks(
    alternative: TreeAlternative,
    window: Long,
    nodeCount: Int,
    nodeIndex: TreeNodeSpec => Int,
    input: Seq[Attribute],
    maxBuffered: Long) extends TreeChecks {

  private val kleenes = new TreeKleenes(alternative.kleenes, alternative.leaves, alternative.root.leafIndexes,
    alternative.postCondition, input, window)
  private val negations = new TreeNegations(alternative.negations, alternative.leaves, kleenes.outputLeaves,
    alternative.root.leafIndexes, nodeIndex, input, window)
  private val kleeneBase = nodeCount + negations.count
  private val kleeneRows: TreeState => Int => NodeBuffer = state => k => state.buffers(kleeneBase + k)

  // A closure that ends the pattern may still get rows, and rows that would negate a match
  // may still come after it: then a root match is held until its window has passed.
  private val holdsAtRoot = kleenes.holdsMatches || negations.trailing.nonEmpty

  override def bufferCount: Int = negations.count + kleenes.count

  /** A match's columns: every leaf's, in leaf order, then every closure's. */
  override def outputView: Option[LeafRowsView] = Some(kleenes.outputView)

  override def checksAt(node: Int): Boolean = negations.checksAt(node).nonEmpty

  override def forbids(state: TreeState, node: Int, m: PartialMatch): Boolean =
    negatedByAny(state, negations.checksAt(node), m)

  override def add(state: TreeState, event: InternalRow, order: Long, lo: Long, hi: Long,
      describeKey: () => String): Unit = {
    var j = 0
    while (j < negations.count) {
      if (negations.enters(j, event)) {
        val d = negations.rowOf(j, event, lo, hi, order)
        if (negations.isTrailing(j) && !negations.isAfterClosures(j)) forbidHeld(state, j, d)
        state.created(nodeCount + j) += 1
        TreeGraphEvaluator.buffer(state, nodeCount + j, d, maxBuffered, describeKey)
      }
      j += 1
    }
    j = 0
    while (j < kleenes.count) {
      if (kleenes.enters(j, event)) {
        state.created(kleeneBase + j) += 1
        TreeGraphEvaluator.buffer(state, kleeneBase + j, kleenes.rowOf(j, event, lo, hi, order), maxBuffered,
          describeKey)
      }
      j += 1
    }
  }

  override def complete(state: TreeState, m: PartialMatch, emit: PartialMatch => Unit,
      describeKey: () => String): Unit =
    if (!negatedByAny(state, negations.trailingOnRoot, m)) {
      kleenes.extend(m, 0, kleenes.firstTrailing, kleeneRows(state), describeKey) { e =>
        if (holdsAtRoot) hold(state, e, describeKey) else emitIfKept(state, e, emit)
      }
    }

  override def close(state: TreeState, watermark: Long, emit: PartialMatch => Unit,
      describeKey: () => String): Unit = {
    // No row from here on can negate a held match whose window ends by `watermark`.
    release(state, watermark, emit, describeKey)
    var i = nodeCount
    while (i < state.buffers.length) {
      state.buffered -= state.buffers(i).purgeBefore(watermark - window + 1)
      i += 1
    }
  }

  override def finish(state: TreeState, emit: PartialMatch => Unit, describeKey: () => String): Unit =
    release(state, Long.MaxValue, emit, describeKey)

  override def nextChange(state: TreeState): Long = {
    var at = state.heldUntil
    var i = nodeCount
    while (i < state.buffers.length) {
      val hi = state.buffers(i).oldestHi
      if (hi != Long.MaxValue) at = math.min(at, hi + window)
      i += 1
    }
    at
  }

  /**
   * Emits the held matches whose window ends at or before `position`, extended by the
   * closures that end the pattern (all their rows have come).
   */
  private def release(state: TreeState, position: Long, emit: PartialMatch => Unit,
      describeKey: () => String): Unit =
    if (state.heldUntil <= position) {
      val kept = new java.util.ArrayList[PartialMatch]()
      var until = Long.MaxValue
      state.held.forEach { m =>
        val end = m.lo + window
        if (end <= position) {
          kleenes.extend(m, kleenes.firstTrailing, kleenes.count, kleeneRows(state), describeKey)(
            emitIfKept(state, _, emit))
        } else {
          kept.add(m)
          until = math.min(until, end)
        }
      }
      state.buffered -= state.held.size - kept.size
      state.held.clear()
      state.held.addAll(kept)
      state.heldUntil = until
    }

  /** Drops the held matches trailing negation `j`'s new row `d` negates. */
  private def forbidHeld(state: TreeState, j: Int, d: PartialMatch): Unit =
    if (!state.held.isEmpty) {
      val before = state.held.size
      state.held.removeIf(m => negations.negates(j, m, d))
      state.buffered -= before - state.held.size
    }

  private def hold(state: TreeState, m: PartialMatch, describeKey: () => String): Unit = {
    state.held.add(m)
    state.heldUntil = math.min(state.heldUntil, m.lo + window)
    TreeGraphEvaluator.countBuffered(state, maxBuffered, describeKey)
  }

  /**
   * A match the closures have extended: emitted when the conditions that read them hold and
   * no negation next to a closure forbids it.
   */
  private def emitIfKept(state: TreeState, m: PartialMatch, emit: PartialMatch => Unit): Unit =
    if (kleenes.passes(m) && !negatedByAny(state, negations.afterClosures, m)) {
      state.matches += 1
      emit(m)
    }

  /** Whether a buffered row of one of negations `checks` forbids `m`. */
  private def negatedByAny(state: TreeState, checks: Array[Int], m: PartialMatch): Boolean = {
    var i = 0
    var out = false
    while (!out && i < checks.length) {
      out = negations.negatedBy(checks(i), m, state.buffers(nodeCount + checks(i)))
      i += 1
    }
    out
  }
}
