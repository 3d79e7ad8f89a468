package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.matchrecognize.plans.TreeAlternative

/**
 * What a unit of the one-pass evaluation checks besides its tree nodes, at the points of
 * each event where [[TreeGraphEvaluator]] calls it: the partial matches a node creates,
 * the rows an event brings, the matches its roots complete, and the window positions the
 * events have passed. The checks keep their rows in the buffers of the unit's
 * [[TreeState]] after the graph's nodes, and may hold a match back until later rows can
 * no longer change it. Only an alternative evaluated alone has checks (see
 * `TreeAlternative.checksOnlyItsTree`); for the others it is [[TreeChecks.NoChecks]].
 */
private[tree] trait TreeChecks {

  /** The buffers the checks keep in a unit's state, numbered after the graph's nodes. */
  def bufferCount: Int

  /** The columns of the matches the checks emit, when they add to the root's (the closures'). */
  def outputView: Option[LeafRowsView]

  /** Whether the new partial matches of graph node `node` are checked. */
  def checksAt(node: Int): Boolean

  /** Whether a new partial match `m` of node `node` is forbidden: it is dropped. */
  def forbids(state: TreeState, node: Int, m: PartialMatch): Boolean

  /** Keeps the rows `event` (at ORDER BY position `order`, window positions `lo`..`hi`) brings the checks. */
  def add(state: TreeState, event: InternalRow, order: Long, lo: Long, hi: Long, describeKey: () => String): Unit

  /** A root match within its tree's window: gives `emit` the matches it completes, now or later. */
  def complete(state: TreeState, m: PartialMatch, emit: PartialMatch => Unit, describeKey: () => String): Unit

  /**
   * Every event up to window position `watermark` has come: emits the held matches no later
   * event can change and drops the rows no later match can use.
   */
  def close(state: TreeState, watermark: Long, emit: PartialMatch => Unit, describeKey: () => String): Unit

  /** The group has no more events: emits every held match. */
  def finish(state: TreeState, emit: PartialMatch => Unit, describeKey: () => String): Unit

  /** The earliest window position at which `close` would change the state (Long.MaxValue: none). */
  def nextChange(state: TreeState): Long
}

private[tree] object TreeChecks {

  /** No checks: every root match within its window is a match, emitted right away. */
  object NoChecks extends TreeChecks {
    override def bufferCount: Int = 0
    override def outputView: Option[LeafRowsView] = None
    override def checksAt(node: Int): Boolean = false
    override def forbids(state: TreeState, node: Int, m: PartialMatch): Boolean = false
    override def add(state: TreeState, event: InternalRow, order: Long, lo: Long, hi: Long,
        describeKey: () => String): Unit = ()
    override def complete(state: TreeState, m: PartialMatch, emit: PartialMatch => Unit,
        describeKey: () => String): Unit = {
      state.matches += 1
      emit(m)
    }
    override def close(state: TreeState, watermark: Long, emit: PartialMatch => Unit,
        describeKey: () => String): Unit = ()
    override def finish(state: TreeState, emit: PartialMatch => Unit, describeKey: () => String): Unit = ()
    override def nextChange(state: TreeState): Long = Long.MaxValue
  }

  /** The checks of the unit of `alternatives` (of `windows`) evaluated as `graph`. */
  def of(alternatives: Seq[TreeAlternative], windows: Seq[Long], graph: SharedTreeGraph,
      input: Seq[Attribute], maxBuffered: Long): TreeChecks =
    alternatives match {
      case Seq(a) if !a.checksOnlyItsTree =>
        new NegationAndClosureChecks(a, windows.head, graph.size, graph.indexOf, input, maxBuffered)
      case _ =>
        require(alternatives.forall(_.checksOnlyItsTree), "an alternative with checks is evaluated alone")
        NoChecks
    }

  /** The metric names of the buffers the checks of `a` keep, in their order: its negations', then its closures'. */
  def bufferNames(a: TreeAlternative): Seq[String] =
    a.negations.map("!" + _.leaf.variable) ++ a.kleenes.map(_.description)
}
