package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, GenericInternalRow, Literal, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.execution.anymatch.{ClosureBindings, ClosureOutputs}
import org.apache.spark.sql.matchrecognize.plans.{TreeKleeneSpec, TreeLeafSpec}

/**
 * The Kleene closures of a one-pass tree, compiled once per task. A closure's rows are
 * buffered like a leaf's (each a partial match of its one row, `rows(0)`); a complete
 * match of the tree is extended by the closures in turn, by every binding of each one
 * over its buffered rows near the match ([[ClosureBindings]], as under the joins). An
 * extended match carries, after the tree's leaves, one row per closure: what
 * [[ClosureOutputs]] writes of the binding (its outputs, then its first and last ORDER BY
 * positions), read through [[outputView]] with the leaves' columns.
 */
private[tree] final class TreeKleenes(
    specs: Seq[TreeKleeneSpec],
    leaves: Seq[TreeLeafSpec],
    rootLeaves: Seq[Int],
    postCondition: Option[Expression],
    input: Seq[Attribute],
    window: Long) {

  val count: Int = specs.size

  /** The first closure with no upper neighbour (`count` when none): applied once the window has passed. */
  val firstTrailing: Int = specs.indexWhere(_.upper.isEmpty) match {
    case -1 => count
    case i => i
  }
  require(specs.drop(firstTrailing).forall(_.upper.isEmpty), "closures without an upper neighbour come last")

  /** Whether a complete match waits for the window of its first row to pass. */
  def holdsMatches: Boolean = firstTrailing < count

  // Closure k's output row is a pseudo-leaf after the tree's leaves: rows(leaves.size + k).
  private val allLeaves: Seq[TreeLeafSpec] =
    leaves ++ specs.map(k => TreeLeafSpec(k.leaf.variable, Literal(true), k.columns))
  private val outputLeaf: Array[Int] = specs.indices.map(leaves.size + _).toArray

  /** The closures' output rows as pseudo-leaves, in closure order (leaf `leaves.size + k`). */
  def outputLeaves: Seq[TreeLeafSpec] = allLeaves.drop(leaves.size)
  private val width = allLeaves.size
  private def columnsOf(leafOrder: Seq[Int]): Seq[Attribute] =
    leafOrder.flatMap(i => allLeaves(i).columns.map(_.toAttribute))

  /** A complete match's columns: the tree's leaves', then every closure's. */
  val outputView: LeafRowsView = {
    val order = rootLeaves ++ outputLeaf
    new LeafRowsView(order, allLeaves, order.size)
  }

  // Closure k reads the tree's leaves and the closures applied before it.
  private val readable: Array[Seq[Int]] = specs.indices.map(k => rootLeaves ++ outputLeaf.take(k)).toArray
  private val views: Array[LeafRowsView] =
    readable.map(order => new LeafRowsView(order, allLeaves, order.size))

  private val enters: Array[BasePredicate] = specs.map(k => TaskPredicates.compile(k.leaf.enter, input)).toArray
  private val projections: Array[UnsafeProjection] =
    specs.map(k => UnsafeProjection.create(k.leaf.columns, input)).toArray
  private val post: BasePredicate =
    postCondition.map(TaskPredicates.compile(_, columnsOf(rootLeaves ++ outputLeaf))).orNull

  // Per closure: its bindings for the match being extended, and what they write.
  private val bindings: Array[ClosureBindings[PartialMatch]] = specs.indices.map { k =>
    val spec = specs(k)
    new ClosureBindings[PartialMatch](spec.description, spec.min, spec.max, spec.lower, spec.upper, window,
      spec.maxBindings, spec.rowCondition, columnsOf(readable(k)), spec.leaf.columns.map(_.toAttribute),
      spec.previous) {
      override protected def orderOf(c: PartialMatch): Long = c.firstOrder
      override protected def loOf(c: PartialMatch): Long = c.lo
      override protected def hiOf(c: PartialMatch): Long = c.hi
      override protected def rowOf(c: PartialMatch): InternalRow = c.rows(0)
    }
  }.toArray
  private val outputs: Array[ClosureOutputs] =
    specs.map(k => new ClosureOutputs(k.outputs, k.leaf.columns.map(_.toAttribute))).toArray
  private val outputRows = specs.map(k => new GenericInternalRow(k.columns.size)).toArray
  private val writers: Array[UnsafeProjection] =
    specs.map(k => UnsafeProjection.create(k.columns.map(_.dataType).toArray)).toArray

  def enters(k: Int, event: InternalRow): Boolean = enters(k).eval(event)

  /** Closure `k`'s row for `event`, as a partial match of its own. */
  def rowOf(k: Int, event: InternalRow, lo: Long, hi: Long, order: Long): PartialMatch =
    new PartialMatch(Array(projections(k)(event).copy()), lo, hi, order, order)

  /** Whether an extended match passes the conditions that read closures. */
  def passes(m: PartialMatch): Boolean = post == null || post.eval(outputView.of(m.rows))

  /**
   * Extends `m` by closures `from` until `until` (each binding of one, by the next), giving
   * every extended match to `sink`; `rowsOf(k)` are closure k's buffered rows.
   */
  def extend(m: PartialMatch, from: Int, until: Int, rowsOf: Int => NodeBuffer,
      describeKey: () => String)(sink: PartialMatch => Unit): Unit =
    if (from == until) sink(m)
    else {
      val widened =
        if (m.rows.length == width) m
        else new PartialMatch(java.util.Arrays.copyOf(m.rows, width), m.lo, m.hi, m.firstOrder, m.lastOrder)
      step(from, until, widened, rowsOf, describeKey, sink)
    }

  private def step(k: Int, until: Int, m: PartialMatch, rowsOf: Int => NodeBuffer,
      describeKey: () => String, sink: PartialMatch => Unit): Unit =
    if (k == until) sink(m)
    else {
      val closure = bindings(k)
      closure.open(views(k).of(m.rows), m.lo, m.hi)
      // Buffered in arrival order, which is ORDER BY order.
      rowsOf(k).probe(m.hi - window, m.lo + window)(closure.offer)
      closure.foreachBinding(describeKey) { (lo, hi) =>
        step(k + 1, until, withChosen(k, m, lo, hi), rowsOf, describeKey, sink)
      }
    }

  /** `m` with closure k's output row for its current binding, spanning `lo`..`hi`. */
  private def withChosen(k: Int, m: PartialMatch, lo: Long, hi: Long): PartialMatch = {
    val closure = bindings(k)
    outputs(k).write(closure, outputRows(k))
    val rows = m.rows.clone()
    rows(outputLeaf(k)) = writers(k)(outputRows(k)).copy()
    val n = closure.chosenCount
    val first = if (n == 0) m.firstOrder else math.min(m.firstOrder, closure.chosenOrder(0))
    val last = if (n == 0) m.lastOrder else math.max(m.lastOrder, closure.chosenOrder(n - 1))
    new PartialMatch(rows, lo, hi, first, last)
  }
}
