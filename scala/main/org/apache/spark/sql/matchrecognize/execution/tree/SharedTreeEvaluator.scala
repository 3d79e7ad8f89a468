package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, Literal, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode}
import org.apache.spark.sql.types.DataType

/**
 * The trees of several patterns evaluated as one [[SharedTreeGraph]] in one pass: what
 * [[TreeEvaluator]] does for one tree, with each shared node's partial matches created,
 * buffered and purged once, and offered to the parent of every tree above it (each
 * combining under its own window). A node that is a tree's root hands its partial
 * matches within that tree's window to the tree's `emit`. Only trees that check nothing
 * besides their nodes (no negation, no closure): see `TreeAlternative.checksOnlyItsTree`.
 */
final class SharedTreeEvaluator(
    alternatives: Seq[TreeAlternative],
    windows: Seq[Long],
    input: Seq[Attribute],
    order: Expression,
    lo: Expression,
    hi: Expression,
    narrowByOrder: Boolean,
    maxBuffered: Long) {

  private val graph = new SharedTreeGraph(alternatives, windows)
  private val leaves = alternatives.head.leaves
  val nodeCount: Int = graph.size

  private def schemaOf(leafIndexes: Seq[Int]): Seq[Attribute] =
    leafIndexes.flatMap(i => leaves(i).columns.map(_.toAttribute))

  private val conditions: Array[BasePredicate] = graph.nodes.map {
    case j: TreeJoinNode if j.condition != Literal.TrueLiteral =>
      val p = Predicate.create(j.condition, schemaOf(j.left.leafIndexes) ++ schemaOf(j.right.leafIndexes))
      p.initialize(0)
      p
    case _ => null
  }.toArray
  private val views: Array[LeafRowsView] = graph.nodes.map {
    case j: TreeJoinNode => new LeafRowsView(j.leafIndexes, leaves, j.left.leafIndexes.size)
    case _ => null
  }.toArray
  private val leftLeaves = graph.nodes.map {
    case j: TreeJoinNode => j.left.leafIndexes.toArray
    case _ => Array.emptyIntArray
  }.toArray
  private val rightLeaves = graph.nodes.map {
    case j: TreeJoinNode => j.right.leafIndexes.toArray
    case _ => Array.emptyIntArray
  }.toArray
  private val orderOf: Array[Int] = graph.nodes.map {
    case j: TreeJoinNode => j.order
    case _ => 0
  }.toArray
  private val window: Array[Long] = graph.window.toArray

  /** Where a node's partial matches go: (parent, sibling, whether the node is its left child). */
  private final class Use(val parent: Int, val sibling: Int, val isLeft: Boolean) {
    private val o = orderOf(parent)
    // As in [[TreeEvaluator]]: the side the pattern puts first only waits in its buffer,
    // the side it puts last only probes.
    val buffers: Boolean = !(o == 1 && !isLeft) && !(o == -1 && isLeft)
    val probes: Boolean = !(o == 1 && isLeft) && !(o == -1 && !isLeft)
  }
  private val uses: Array[Array[Use]] = Array.tabulate(nodeCount) { i =>
    (0 until nodeCount).flatMap { p =>
      if (graph.left(p) == i) Some(new Use(p, graph.right(p), isLeft = true))
      else if (graph.right(p) == i) Some(new Use(p, graph.left(p), isLeft = false))
      else None
    }.toArray
  }
  private val buffersAt: Array[Boolean] = uses.map(_.exists(_.buffers))
  private val rootsAt: Array[Array[Int]] = Array.tabulate(nodeCount) { i =>
    graph.roots.indices.filter(graph.roots(_) == i).toArray
  }

  private val leafNode: Array[Int] = leaves.indices.map(graph.leafNode).toArray
  private val enter: Array[BasePredicate] = leaves.map { l =>
    val p = Predicate.create(l.enter, input)
    p.initialize(0)
    p
  }.toArray
  private val project: Array[UnsafeProjection] =
    leaves.map(l => UnsafeProjection.create(l.columns, input)).toArray
  private val positions = UnsafeProjection.create(Seq(order, lo, hi), input)
  private val outputViews: Array[LeafRowsView] = alternatives.map { a =>
    new LeafRowsView(a.root.leafIndexes, leaves, a.root.leafIndexes.size)
  }.toArray

  /** The metric name of each node. */
  def nodeNames: Seq[String] = graph.names()

  def newState(): TreeState = new TreeState(nodeCount)

  /** Alternative `t`'s match's columns (its leaves', in leaf order); valid until the next call. */
  def rowOf(t: Int, m: PartialMatch): InternalRow = outputViews(t).of(m.rows)

  /** The output row of alternative `t`'s matches: `of(key, lo, hi)` after `rowOf`. */
  private[tree] def outputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow =
    new MatchOutputRow(keyTypes, outputViews(t))

  /** Adds one event (not older than the last one); `emit(t)` gets each new match of tree `t`. */
  def add(state: TreeState, event: InternalRow, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    val p = positions(event)
    val o = p.getLong(0)
    val eventLo = p.getLong(1)
    val eventHi = p.getLong(2)
    if (eventHi > state.lastPosition) {
      var i = 0
      while (i < nodeCount) {
        if (buffersAt(i)) state.buffered -= state.buffers(i).purgeBefore(eventHi - window(i))
        i += 1
      }
      state.lastPosition = eventHi
    }
    var k = 0
    while (k < enter.length) {
      if (leafNode(k) >= 0 && enter(k).eval(event)) {
        val rows = new Array[UnsafeRow](leaves.length)
        rows(k) = project(k)(event).copy()
        insert(state, leafNode(k), new PartialMatch(rows, eventLo, eventHi, o, o), emit, describeKey)
      }
      k += 1
    }
  }

  /**
   * Every event up to window position `watermark` has been added: drops the partial
   * matches no later event can complete (each node by its own window). Nothing is held:
   * the trees check nothing besides their nodes.
   */
  def close(state: TreeState, watermark: Long): Unit = {
    var i = 0
    while (i < nodeCount) {
      if (buffersAt(i)) state.buffered -= state.buffers(i).purgeBefore(watermark - window(i) + 1)
      i += 1
    }
    state.lastPosition = math.max(state.lastPosition, watermark)
  }

  /** The earliest window position at which `close` would drop a partial match (Long.MaxValue: none). */
  def nextChange(state: TreeState): Long = {
    var at = Long.MaxValue
    var i = 0
    while (i < nodeCount) {
      val hi = state.buffers(i).oldestHi
      if (hi != Long.MaxValue) at = math.min(at, hi + window(i))
      i += 1
    }
    at
  }

  private def insert(state: TreeState, node: Int, m: PartialMatch, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    state.created(node) += 1
    val roots = rootsAt(node)
    var r = 0
    while (r < roots.length) {
      val t = roots(r)
      // Within the node's window (the longest of its trees), not always within this tree's.
      if (m.hi - m.lo <= windows(t)) {
        state.matches += 1
        emit(t)(m)
      }
      r += 1
    }
    if (buffersAt(node)) {
      val buffer = state.buffers(node)
      buffer.add(m)
      if (buffer.size > state.peak(node)) state.peak(node) = buffer.size
      state.buffered += 1
      if (state.buffered > maxBuffered) throw TreeEvaluator.tooManyBuffered(maxBuffered, describeKey())
    }
    val nodeUses = uses(node)
    var u = 0
    while (u < nodeUses.length) {
      val use = nodeUses(u)
      if (use.probes) probe(state, use, m, emit, describeKey)
      u += 1
    }
  }

  private def probe(state: TreeState, use: Use, m: PartialMatch, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    val up = use.parent
    val w = window(up)
    val from = m.hi - w
    var to = m.lo + w
    if (narrowByOrder && orderOf(up) != 0) to = math.min(to, m.firstOrder - 1)
    val condition = conditions(up)
    val view = views(up)
    val fromLeft = leftLeaves(up)
    val fromRight = rightLeaves(up)
    val left = use.isLeft
    state.buffers(use.sibling).probe(from, to) { q =>
      val l = if (left) m else q
      val r = if (left) q else m
      val spanLo = math.min(l.lo, r.lo)
      val spanHi = math.max(l.hi, r.hi)
      if (spanHi - spanLo <= w && (condition == null || condition.eval(view.of(l.rows, r.rows)))) {
        val rows = new Array[UnsafeRow](leaves.length)
        var i = 0
        while (i < fromLeft.length) { rows(fromLeft(i)) = l.rows(fromLeft(i)); i += 1 }
        i = 0
        while (i < fromRight.length) { rows(fromRight(i)) = r.rows(fromRight(i)); i += 1 }
        insert(state, up,
          new PartialMatch(rows, spanLo, spanHi,
            math.min(l.firstOrder, r.firstOrder), math.max(l.lastOrder, r.lastOrder)), emit, describeKey)
      }
    }
  }
}
