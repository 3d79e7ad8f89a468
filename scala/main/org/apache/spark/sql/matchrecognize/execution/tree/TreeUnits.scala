package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.matchrecognize.plans.TreeAlternative
import org.apache.spark.sql.types.DataType

/**
 * What a task needs to run the one-pass trees of SKIP TILL ANY MATCH alternatives over the
 * rows of `input`, delivered group by group in ORDER BY order: the batch operator's tasks
 * (see [[TreeMatchExec]]) and a stream's keys build their [[TreeUnits]] from it.
 *
 * @param alternatives the alternatives evaluated in one pass (their subqueries' values in place)
 * @param input the attributes of the rows the trees read
 * @param order a row's ORDER BY position
 * @param lo a row's first window position
 * @param hi a row's last window position
 * @param window the window of the alternatives that have none of their own
 * @param narrowByOrder whether ORDER BY positions are window positions: a join then looks for a
 *   partner the pattern puts before a partial match only among those starting before its first row
 * @param maxBuffered the most partial matches a group may buffer at once (past it the query fails)
 */
final case class TreeTask(
    alternatives: Seq[TreeAlternative],
    input: Seq[Attribute],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long)

/**
 * The alternatives a task evaluates in one pass, as units (see
 * [[SharedTreeGraph.units]]: an alternative alone, or alternatives whose trees share
 * nodes), each run by its [[TreeGraphEvaluator]]. A group keeps one [[TreeState]] per unit.
 * With `keepsLeaves` (trees per key: one alternative, one unit), the leaves keep their rows so
 * that another tree of the alternative can be built from them ([[TreeRebuild]]).
 */
final class TreeUnits(task: TreeTask, keepsLeaves: Boolean = false) {
  import task._

  val units: Array[Seq[Int]] = SharedTreeGraph.units(alternatives).toArray
  private val windows = alternatives.map(_.window.getOrElse(window))
  private val graphs: Array[TreeGraphEvaluator] = units.map { ts =>
    new TreeGraphEvaluator(ts.map(alternatives), ts.map(windows), input, order, lo, hi, narrowByOrder, maxBuffered,
      keepsLeaves)
  }
  // Each alternative's unit, and its place in the unit.
  private val unitOf = new Array[Int](alternatives.length)
  private val placeOf = new Array[Int](alternatives.length)
  units.indices.foreach(u => units(u).zipWithIndex.foreach { case (t, i) => unitOf(t) = u; placeOf(t) = i })

  def newStates(): Array[TreeState] = graphs.map(_.newState())

  /** Whether `states` (say, from a checkpoint) are states of these units. */
  def fits(states: Array[TreeState]): Boolean =
    states.length == buffersPerUnit.length && states.indices.forall(u => states(u).buffers.length == buffersPerUnit(u))

  // Asked for every key's state a stream reads back: counted once.
  private lazy val buffersPerUnit: Array[Int] = newStates().map(_.buffers.length)

  /**
   * The emits of each unit, from the emits by alternative: `emits(t)` gets each new match
   * of alternative `t` (a [[PairSink]] may get it as a pair).
   */
  def byUnit(emits: Array[PartialMatch => Unit]): Array[Array[PartialMatch => Unit]] =
    units.map(_.map(emits).toArray)

  /** Adds one event (not older than the last one) to every unit; `emits` is [[byUnit]]'s. */
  def add(states: Array[TreeState], event: InternalRow, emits: Array[Array[PartialMatch => Unit]],
      describeKey: () => String): Unit = {
    var u = 0
    while (u < units.length) {
      graphs(u).add(states(u), event, emits(u), describeKey)
      u += 1
    }
  }

  /** Every event up to window position `watermark` has been added (see `TreeGraphEvaluator.close`). */
  def close(states: Array[TreeState], watermark: Long, emits: Array[Array[PartialMatch => Unit]],
      describeKey: () => String): Unit =
    units.indices.foreach(u => graphs(u).close(states(u), watermark, emits(u), describeKey))

  /** The earliest window position at which `close` would change a state (see `TreeGraphEvaluator.nextChange`). */
  def nextChange(states: Array[TreeState]): Long =
    units.indices.map(u => graphs(u).nextChange(states(u))).min

  /**
   * Builds `to` (new states of these units) from `from`, the states of `other`: the same one
   * alternative evaluated as another tree (see [[TreeRebuild]]); `from` is emptied. Returns
   * the leaf rows read.
   */
  def rebuildFrom(other: TreeUnits, from: Array[TreeState], to: Array[TreeState],
      emits: Array[Array[PartialMatch => Unit]], describeKey: () => String): Long = {
    require(units.length == 1 && other.units.length == 1, "trees of one alternative are rebuilt")
    TreeRebuild(other.graphs(0), from(0), graphs(0), to(0), emits(0), describeKey)
  }

  /** The group has no more events: emits every held match. */
  def finish(states: Array[TreeState], emits: Array[Array[PartialMatch => Unit]],
      describeKey: () => String): Unit =
    units.indices.foreach(u => graphs(u).finish(states(u), emits(u), describeKey))

  /** Alternative `t`'s match's columns; valid until the next call. */
  def rowOf(t: Int, m: PartialMatch): InternalRow = graphs(unitOf(t)).rowOf(placeOf(t), m)

  /** The output row of alternative `t`'s matches: `of(key, lo, hi)` after `rowOf`. */
  private[tree] def outputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow =
    graphs(unitOf(t)).outputRow(placeOf(t), keyTypes)

  /** The output row of alternative `t`'s matches emitted as pairs (null: they never are). */
  private[tree] def pairOutputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow =
    graphs(unitOf(t)).pairOutputRow(placeOf(t), keyTypes)

  private[tree] def pairRow(t: Int, l: PartialMatch, r: PartialMatch): Unit =
    graphs(unitOf(t)).pairRow(placeOf(t), l, r)
}

object TreeUnits {

  /**
   * Per unit, the names of the buffers of its state for the metrics, in their numbering:
   * the graph's nodes (an alternative alone: its tree's nodes in post order), then the
   * buffers of its checks (negations, closures). With several alternatives, each name starts
   * with the alternatives it belongs to.
   */
  def bufferNames(alternatives: Seq[TreeAlternative], window: Long): Seq[Seq[String]] =
    SharedTreeGraph.units(alternatives).map { unit =>
      val graph = new SharedTreeGraph(unit.map(alternatives), unit.map(alternatives(_).window.getOrElse(window)))
      val named = graph.alternativesOf.zip(graph.descriptions) ++
        unit.indices.flatMap(t => TreeChecks.bufferNames(alternatives(unit(t))).map(Seq(t) -> _))
      named.map { case (users, what) =>
        if (alternatives.size == 1) what else s"[${users.map(unit(_) + 1).mkString(",")}] $what"
      }
    }
}
