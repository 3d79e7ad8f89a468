package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.execution.anymatch.NegationBand
import org.apache.spark.sql.matchrecognize.plans.{TreeLeafSpec, TreeNegationSpec, TreeNodeSpec}

/**
 * The negations of a one-pass tree, compiled once per task. Negation `j`'s rows are kept
 * like a leaf's (as partial matches binding leaf `leaves.size + closures.size + j` alone),
 * and a partial match of the node that binds its neighbours is checked against them when
 * it is created: every row between the neighbours has arrived by then, as the later
 * neighbour has. A trailing negation's rows may still come after the match, until the
 * window of its first row has passed; [[NegationAndClosureChecks]] holds such matches back until
 * then. A negation next to a Kleene closure (its bounds read the closure's first or last
 * chosen row) or whose condition reads one is checked on the complete match once the
 * closures have extended it, over the tree's leaves and the closures' output rows
 * (`closures`, the pseudo-leaves after the leaves). Where a row forbids a match is
 * [[NegationBand]]'s to say, as under the joins.
 */
private[tree] final class TreeNegations(
    specs: Seq[TreeNegationSpec],
    leaves: Seq[TreeLeafSpec],
    closures: Seq[TreeLeafSpec],
    rootLeaves: Seq[Int],
    nodeIndex: TreeNodeSpec => Int,
    input: Seq[Attribute],
    window: Long) {

  val count: Int = specs.size
  private val allLeaves = leaves ++ closures ++ specs.map(_.leaf)
  private val leafOf: Array[Int] = specs.indices.map(leaves.size + closures.size + _).toArray
  // The leaves whose columns a negation's bounds and condition read, in order.
  private val atLeaves: Array[Seq[Int]] = specs.map { n =>
    if (n.afterClosures) rootLeaves ++ closures.indices.map(leaves.size + _) else n.at.leafIndexes
  }.toArray
  private def schemaOf(j: Int): Seq[Attribute] = atLeaves(j).flatMap(allLeaves(_).columns.map(_.toAttribute))

  private val enters: Array[BasePredicate] = specs.map(n => TaskPredicates.compile(n.leaf.enter, input)).toArray
  private val projections: Array[UnsafeProjection] =
    specs.map(n => UnsafeProjection.create(n.leaf.columns, input)).toArray
  private val hasUpper: Array[Boolean] = specs.map(_.upper.isDefined).toArray
  private val bands: Array[NegationBand] =
    specs.indices.map(j => new NegationBand(specs(j).lower, specs(j).upper, schemaOf(j), window)).toArray
  private val atViews: Array[LeafRowsView] = atLeaves.map(at => new LeafRowsView(at, allLeaves, at.size))
  private val conditions: Array[BasePredicate] = specs.indices.map { j =>
    specs(j).condition.map(TaskPredicates.compile(_, schemaOf(j) ++ specs(j).leaf.columns.map(_.toAttribute))).orNull
  }.toArray
  private val conditionViews: Array[LeafRowsView] = specs.indices.map { j =>
    new LeafRowsView(atLeaves(j) :+ leafOf(j), allLeaves, atLeaves(j).size)
  }.toArray

  /** The negations checked on complete matches the closures have extended. */
  val afterClosures: Array[Int] = specs.indices.filter(specs(_).afterClosures).toArray
  def isAfterClosures(j: Int): Boolean = specs(j).afterClosures

  /** Per tree node, the negations (not trailing, not next to a closure) its new partial matches are checked for. */
  val checkedAt: Array[Array[Int]] = {
    val at = specs.indices.filter(j => hasUpper(j) && !specs(j).afterClosures).groupBy(j => nodeIndex(specs(j).at))
    Array.tabulate(specs.map(n => nodeIndex(n.at)).reduceOption(_ max _).getOrElse(-1) + 1)(i =>
      at.getOrElse(i, Nil).toArray)
  }
  def checksAt(node: Int): Array[Int] =
    if (node < checkedAt.length) checkedAt(node) else Array.emptyIntArray

  /** The trailing negations, checked on the matches (those next to a closure once extended). */
  val trailing: Array[Int] = specs.indices.filterNot(hasUpper(_)).toArray

  /** The trailing negations checked on a root match before the closures extend it. */
  val trailingOnRoot: Array[Int] = trailing.filterNot(specs(_).afterClosures)
  def isTrailing(j: Int): Boolean = !hasUpper(j)

  def enters(j: Int, event: InternalRow): Boolean = enters(j).eval(event)

  /** Negation `j`'s row for `event`, as a partial match of its own. */
  def rowOf(j: Int, event: InternalRow, lo: Long, hi: Long, order: Long): PartialMatch = {
    val rows = new Array[UnsafeRow](allLeaves.size)
    rows(leafOf(j)) = projections(j)(event).copy()
    new PartialMatch(rows, lo, hi, order, order)
  }

  /** Whether negation `j`'s row `d` lies where `m` forbids it and passes the condition. */
  def negates(j: Int, m: PartialMatch, d: PartialMatch): Boolean =
    bands(j).open(atViews(j).of(m.rows), m.lo) && forbidsWith(j, m, d)

  /** Whether any of negation `j`'s buffered rows forbids `m` (its band set once). */
  def negatedBy(j: Int, m: PartialMatch, rows: NodeBuffer): Boolean = {
    val band = bands(j)
    band.open(atViews(j).of(m.rows), m.lo) &&
    rows.exists(band.probeFrom, band.probeTo)(forbidsWith(j, m, _))
  }

  /** `d` lies in negation `j`'s band for `m` (set by `open`) and passes the condition. */
  private def forbidsWith(j: Int, m: PartialMatch, d: PartialMatch): Boolean =
    bands(j).forbids(d.firstOrder, d.hi) &&
      (conditions(j) == null || conditions(j).eval(conditionViews(j).of(m.rows, d.rows)))
}
