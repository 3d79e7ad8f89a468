package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.matchrecognize.plans.TreeAlternative
import org.apache.spark.sql.types.DataType

/**
 * The alternatives one operator evaluates in one pass, as units (see
 * [[SharedTreeGraph.units]]): an alternative alone runs its [[TreeEvaluator]], the
 * alternatives whose trees share nodes run one [[SharedTreeEvaluator]]. A group keeps one
 * [[TreeState]] per unit.
 */
final class TreeUnits(
    alternatives: Seq[TreeAlternative],
    input: Seq[Attribute],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long) {

  val units: Array[Seq[Int]] = SharedTreeGraph.units(alternatives).toArray
  private val windows = alternatives.map(_.window.getOrElse(window))
  private val trees: Array[TreeEvaluator] = units.map {
    case Seq(t) => TreeEvaluator.of(alternatives(t), input, order, lo, hi, window, narrowByOrder, maxBuffered)
    case _ => null
  }
  private val graphs: Array[SharedTreeEvaluator] = units.map {
    case Seq(_) => null
    case ts => new SharedTreeEvaluator(ts.map(alternatives), ts.map(windows), input, order, lo, hi,
        narrowByOrder, maxBuffered)
  }
  // Each alternative's unit, and its place in the unit.
  private val unitOf = new Array[Int](alternatives.length)
  private val placeOf = new Array[Int](alternatives.length)
  units.indices.foreach(u => units(u).zipWithIndex.foreach { case (t, i) => unitOf(t) = u; placeOf(t) = i })

  def newStates(): Array[TreeState] =
    units.indices.map(u => if (trees(u) != null) trees(u).newState() else graphs(u).newState()).toArray

  /** Whether `states` (say, from a checkpoint) are states of these units. */
  def fits(states: Array[TreeState]): Boolean =
    states.length == buffersPerUnit.length && states.indices.forall(u => states(u).buffers.length == buffersPerUnit(u))

  // Asked for every key's state a stream reads back: counted once.
  private lazy val buffersPerUnit: Array[Int] = newStates().map(_.buffers.length)

  /**
   * The emits of each unit, from the emits by alternative: `emits(t)` gets each new match
   * of alternative `t` (a [[PairSink]] of an alternative alone may get it as a pair).
   */
  def byUnit(emits: Array[PartialMatch => Unit]): Array[Array[PartialMatch => Unit]] =
    units.map(_.map(emits).toArray)

  /** Adds one event (not older than the last one) to every unit; `emits` is [[byUnit]]'s. */
  def add(states: Array[TreeState], event: InternalRow, emits: Array[Array[PartialMatch => Unit]],
      describeKey: () => String): Unit = {
    var u = 0
    while (u < units.length) {
      if (trees(u) != null) trees(u).add(states(u), event, emits(u)(0), describeKey)
      else graphs(u).add(states(u), event, emits(u), describeKey)
      u += 1
    }
  }

  /** Every event up to window position `watermark` has been added (see `TreeEvaluator.close`). */
  def close(states: Array[TreeState], watermark: Long, emits: Array[Array[PartialMatch => Unit]],
      describeKey: () => String): Unit =
    units.indices.foreach { u =>
      if (trees(u) != null) trees(u).close(states(u), watermark, emits(u)(0), describeKey)
      else graphs(u).close(states(u), watermark)
    }

  /** The earliest window position at which `close` would change a state (see `TreeEvaluator.nextChange`). */
  def nextChange(states: Array[TreeState]): Long =
    units.indices.map { u =>
      if (trees(u) != null) trees(u).nextChange(states(u)) else graphs(u).nextChange(states(u))
    }.min

  /** The group has no more events: emits every held match. */
  def finish(states: Array[TreeState], emits: Array[Array[PartialMatch => Unit]],
      describeKey: () => String): Unit =
    units.indices.foreach { u =>
      if (trees(u) != null) trees(u).finish(states(u), emits(u)(0), describeKey)
    }

  /** Alternative `t`'s match's columns; valid until the next call. */
  def rowOf(t: Int, m: PartialMatch): InternalRow = {
    val u = unitOf(t)
    if (trees(u) != null) trees(u).rowOf(m) else graphs(u).rowOf(placeOf(t), m)
  }

  /** The output row of alternative `t`'s matches: `of(key, lo, hi)` after `rowOf`. */
  private[tree] def outputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow = {
    val u = unitOf(t)
    if (trees(u) != null) trees(u).outputRow(keyTypes) else graphs(u).outputRow(placeOf(t), keyTypes)
  }

  /** The output row of alternative `t`'s matches emitted as pairs (only an alternative alone). */
  private[tree] def pairOutputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow = {
    val u = unitOf(t)
    if (trees(u) != null) trees(u).pairOutputRow(keyTypes) else null
  }

  private[tree] def pairRow(t: Int, l: PartialMatch, r: PartialMatch): Unit = trees(unitOf(t)).pairRow(l, r)
}
