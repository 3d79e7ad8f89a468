package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, BasePredicate, ExprId, Expression, KnownNotNull, Literal, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, TaskPredicates}
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode}
import org.apache.spark.sql.types.DataType

/**
 * The one-pass evaluation of a unit's trees (see [[SharedTreeGraph.units]]: one
 * alternative, or several whose trees share nodes), compiled once per task: it moves a
 * [[TreeState]] forward event by event. An event enters every leaf whose variable it can
 * bind; each new partial match is buffered at its node (once, however many trees the node
 * is in) and combined with the sibling's buffer under each parent above it (only the part
 * of it the parent's window and the pattern order allow), and each combination that
 * passes the parent's condition is a new partial match of the parent, up to the roots. A
 * root's partial matches within its tree's window are the tree's matches, handed to its
 * `emit` through the unit's [[TreeChecks]]: none for trees that check only their nodes,
 * or the negations and Kleene closures of an alternative alone, whose rows the state keeps
 * after the nodes' buffers.
 *
 * With `keepsLeaves` (a group that may move to another tree of its alternative, see
 * `TreesPerKey`), every leaf keeps the rows it admitted within the window, even a leaf whose
 * parent never looks them up: another tree of the alternative is built from them
 * ([[TreeRebuild]]). Only a join's own sibling probes a buffer, so the extra rows change no
 * match.
 */
final class TreeGraphEvaluator(
    alternatives: Seq[TreeAlternative],
    windows: Seq[Long],
    input: Seq[Attribute],
    order: Expression,
    lo: Expression,
    hi: Expression,
    narrowByOrder: Boolean,
    private[tree] val maxBuffered: Long,
    val keepsLeaves: Boolean = false,
    indexFrom: Int = TreeGraphEvaluator.IndexFrom) {

  private val graph = new SharedTreeGraph(alternatives, windows)
  private val leaves = alternatives.head.leaves
  val nodeCount: Int = graph.size
  private val checks = TreeChecks.of(alternatives, windows, graph, input, maxBuffered)
  private val checkedAt: Array[Boolean] = Array.tabulate(nodeCount)(checks.checksAt)

  private def schemaOf(leafIndexes: Seq[Int]): Seq[Attribute] =
    leafIndexes.flatMap(i => leaves(i).columns.map(_.toAttribute))

  private val conditions: Array[BasePredicate] = graph.nodes.map {
    case j: TreeJoinNode if j.condition != Literal.TrueLiteral =>
      TaskPredicates.compile(j.condition, schemaOf(j.left.leafIndexes) ++ schemaOf(j.right.leafIndexes))
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

  // Whether a leaf column is an ORDER BY position (comparisons of two are not indexed).
  private val positionColumns: Set[ExprId] = leaves.flatMap(_.columns).collect {
    case a: Alias if stripNotNull(a.child).semanticEquals(stripNotNull(order)) => a.exprId
  }.toSet
  private def stripNotNull(e: Expression): Expression = e match {
    case KnownNotNull(c) => c
    case other => other
  }
  private var indexSlots = 0

  /** Where a node's partial matches go: (parent, sibling, whether the node is its left child). */
  private final class Use(val parent: Int, val sibling: Int, val isLeft: Boolean) {
    private val o = orderOf(parent)
    // The pattern order decides which side of a join can arrive later. Under `order` = 1
    // every left partial match is complete before the first row of any right one arrives
    // (the left rows come earlier in ORDER BY order): a left match only waits in its buffer
    // for right ones, and a right match only probes the left buffer, never buffered itself.
    // Likewise, mirrored, under -1; under 0 both sides buffer and probe.
    val buffers: Boolean = !(o == 1 && !isLeft) && !(o == -1 && isLeft)
    val probes: Boolean = !(o == 1 && isLeft) && !(o == -1 && !isLeft)

    /** The comparison by which a probe looks the sibling's matches up (null: it tests each). */
    val comparison: IndexedComparison = graph.nodes(parent) match {
      case j: TreeJoinNode if probes =>
        IndexedComparison.find(j.condition, j.left.leafIndexes, j.right.leafIndexes, bufferedIsLeft = !isLeft,
          leaves, a => positionColumns.contains(a.exprId)).orNull
      case _ => null
    }

    /** This use's index in a state's `indexes`. */
    val slot: Int = if (comparison == null) -1 else { indexSlots += 1; indexSlots - 1 }
  }
  private val uses: Array[Array[Use]] = Array.tabulate(nodeCount) { i =>
    (0 until nodeCount).flatMap { p =>
      if (graph.left(p) == i) Some(new Use(p, graph.right(p), isLeft = true))
      else if (graph.right(p) == i) Some(new Use(p, graph.left(p), isLeft = false))
      else None
    }.toArray
  }
  private val leafNode: Array[Int] = leaves.indices.map(graph.leafNode).toArray
  private val buffersAt: Array[Boolean] = Array.tabulate(nodeCount) { i =>
    uses(i).exists(_.buffers) || (keepsLeaves && leafNode.contains(i))
  }
  private val rootsAt: Array[Array[Int]] = Array.tabulate(nodeCount) { i =>
    graph.roots.indices.filter(graph.roots(_) == i).toArray
  }

  // A join that is only roots, whose matches nothing checks: a [[PairSink]] gets each as
  // the pair of partial matches it combines, never built.
  private val pairsAt: Array[Boolean] = Array.tabulate(nodeCount) { i =>
    (checks eq TreeChecks.NoChecks) && uses(i).isEmpty && rootsAt(i).nonEmpty && views(i) != null
  }

  private val enter: Array[BasePredicate] = leaves.map(l => TaskPredicates.compile(l.enter, input)).toArray
  private val project: Array[UnsafeProjection] =
    leaves.map(l => UnsafeProjection.create(l.columns, input)).toArray
  private val positions = UnsafeProjection.create(Seq(order, lo, hi), input)
  private val outputViews: Array[LeafRowsView] = checks.outputView.map(Array(_)).getOrElse {
    alternatives.map(a => new LeafRowsView(a.root.leafIndexes, leaves, a.root.leafIndexes.size)).toArray
  }
  // The columns of alternative t's root match from the pair it combines (null: never a pair).
  private val pairViews: Array[LeafRowsView] = alternatives.indices.map { t =>
    alternatives(t).root match {
      case j: TreeJoinNode if pairsAt(graph.roots(t)) =>
        new LeafRowsView(j.leafIndexes, leaves, j.left.leafIndexes.size)
      case _ => null
    }
  }.toArray

  def newState(): TreeState = new TreeState(nodeCount + checks.bufferCount)

  /** Alternative `t`'s match's columns (its leaves', then its closures'); valid until the next call. */
  def rowOf(t: Int, m: PartialMatch): InternalRow = outputViews(t).of(m.rows)

  /** The output row of alternative `t`'s matches: `of(key, lo, hi)` after `rowOf`. */
  private[tree] def outputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow =
    new MatchOutputRow(keyTypes, outputViews(t))

  /** The output row of alternative `t`'s matches a [[PairSink]] gets (null: none): `of(key, lo, hi)` after `pairRow`. */
  private[tree] def pairOutputRow(t: Int, keyTypes: Seq[DataType]): MatchOutputRow =
    if (pairViews(t) == null) null else new MatchOutputRow(keyTypes, pairViews(t))

  /** Points [[pairOutputRow]] of alternative `t` at the root match combining `left` and `right`. */
  private[tree] def pairRow(t: Int, left: PartialMatch, right: PartialMatch): Unit =
    pairViews(t).of(left.rows, right.rows)

  /**
   * Adds one event (an input row, not older than the state's last one): first closes the
   * window positions before it, then lets it enter its leaves. `emit(t)` gets each new
   * match of alternative `t`; `describeKey` names the group in the error of the buffer guard.
   */
  def add(state: TreeState, event: InternalRow, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    val p = positions(event)
    val o = p.getLong(0)
    val eventLo = p.getLong(1)
    val eventHi = p.getLong(2)
    if (eventHi > state.lastPosition) {
      close(state, eventHi - 1, emit, describeKey)
      state.lastPosition = eventHi
    }
    checks.add(state, event, o, eventLo, eventHi, describeKey)
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
   * Every event up to window position `watermark` has been added: emits the matches the
   * checks held that no later event can change, and drops the partial matches no later
   * event can complete (each node by its own window).
   */
  def close(state: TreeState, watermark: Long, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    checks.close(state, watermark, emit(0), describeKey)
    var i = 0
    while (i < nodeCount) {
      if (buffersAt(i)) state.buffered -= state.buffers(i).purgeBefore(watermark - window(i) + 1)
      i += 1
    }
    state.lastPosition = math.max(state.lastPosition, watermark)
  }

  /**
   * The earliest window position at which `close` would emit a held match or drop a
   * partial match (Long.MaxValue when it would change nothing): when a stream's key with
   * no new events must be looked at again.
   */
  def nextChange(state: TreeState): Long = {
    var at = checks.nextChange(state)
    var i = 0
    while (i < nodeCount) {
      val hi = state.buffers(i).oldestHi
      if (hi != Long.MaxValue) at = math.min(at, hi + window(i))
      i += 1
    }
    at
  }

  // Whether `replay` is entering another tree's leaf rows (no root completes a match).
  private var rebuilding = false

  /** The variable of each leaf, in this tree's leaf order. */
  private[tree] def leafVariables: Seq[String] = leaves.map(_.variable)

  /** The node of leaf `k` (-1: none). */
  private[tree] def nodeOfLeaf(k: Int): Int = leafNode(k)

  /**
   * Enters each row `m` of leaf `k` of `rows`, in their order, into `state` as `add` would
   * have when its event came, except that a match they complete at a root is not completed
   * (see [[TreeRebuild]]).
   */
  private[tree] def replay(state: TreeState, rows: Seq[(PartialMatch, Int)], emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    rebuilding = true
    try rows.foreach { case (m, k) => insert(state, leafNode(k), m, emit, describeKey) }
    finally rebuilding = false
  }

  /** The group has no more events: emits every match the checks hold. */
  def finish(state: TreeState, emit: Array[PartialMatch => Unit], describeKey: () => String): Unit =
    checks.finish(state, emit(0), describeKey)

  private def insert(state: TreeState, node: Int, m: PartialMatch, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    state.created(node) += 1
    if (checkedAt(node) && checks.forbids(state, node, m)) return
    // While rebuilding, a root's matches are the other tree's, written or held already.
    val roots = if (rebuilding) Array.emptyIntArray else rootsAt(node)
    var r = 0
    while (r < roots.length) {
      val t = roots(r)
      // Within the node's window (the longest of its trees), not always within this tree's;
      // and a root that is a leaf has no join to check the window: under WITHIN n ROWS a
      // row with more ORDER BY peers than n spans more than n rows.
      if (m.hi - m.lo <= windows(t)) checks.complete(state, m, emit(t), describeKey)
      r += 1
    }
    if (buffersAt(node)) TreeGraphEvaluator.buffer(state, node, m, maxBuffered, describeKey)
    val nodeUses = uses(node)
    var u = 0
    while (u < nodeUses.length) {
      val use = nodeUses(u)
      if (use.probes) probe(state, use, m, emit, describeKey)
      u += 1
    }
  }

  /** Whether every tree rooted at `node` takes its matches as pairs. */
  private def takesPairs(node: Int, emit: Array[PartialMatch => Unit]): Boolean = pairsAt(node) && {
    val roots = rootsAt(node)
    var i = 0
    while (i < roots.length && emit(roots(i)).isInstanceOf[PairSink]) i += 1
    i == roots.length
  }

  private def probe(state: TreeState, use: Use, m: PartialMatch, emit: Array[PartialMatch => Unit],
      describeKey: () => String): Unit = {
    val up = use.parent
    val w = window(up)
    // A partner shares the window with `m`: it starts at most `w` before m's end and at
    // most `w` after m's start. When ORDER BY positions are window positions, a partner
    // the pattern puts wholly before m also starts before m's first row.
    val from = m.hi - w
    var to = m.lo + w
    if (narrowByOrder && orderOf(up) != 0) to = math.min(to, m.firstOrder - 1)
    val condition = conditions(up)
    val view = views(up)
    val fromLeft = leftLeaves(up)
    val fromRight = rightLeaves(up)
    val left = use.isLeft
    val pairs = takesPairs(up, emit)
    val combine = (q: PartialMatch) => {
      val l = if (left) m else q
      val r = if (left) q else m
      val spanLo = math.min(l.lo, r.lo)
      val spanHi = math.max(l.hi, r.hi)
      if (spanHi - spanLo <= w && (condition == null || condition.eval(view.of(l.rows, r.rows)))) {
        if (pairs) { if (!rebuilding) pair(state, up, l, r, spanHi - spanLo, emit) }
        else {
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
    val sibling = state.buffers(use.sibling)
    val comparison = use.comparison
    val probeKind = if (comparison == null || sibling.size < indexFrom) IndexedComparison.Failed
    else comparison.ofProbing(m)
    if (probeKind == IndexedComparison.Failed) sibling.probe(from, to)(combine)
    else if (probeKind == IndexedComparison.Valued && from <= to) {
      // A null value passes no comparison: no partner then.
      val probe = comparison.value
      val index = indexOf(state, use)
      index.follow(sibling, comparison)
      index.lookup(comparison.code, probe)
      // The hits in creation order, as a scan of the buffer would meet them; combining may
      // add to the sibling's buffer only when it is this node's own (never: a node is not
      // its own sibling), so the numbers stay valid while they are read.
      val hits = index.hits
      var i = 0
      val n = index.hitCount
      while (i < n) {
        val q = sibling.at(hits(i))
        if (q.lo >= from && q.lo <= to) combine(q)
        i += 1
      }
    }
  }

  private def indexOf(state: TreeState, use: Use): NodeValueIndex = {
    if (state.indexes == null) state.indexes = new Array[NodeValueIndex](indexSlots)
    var index = state.indexes(use.slot)
    if (index == null) { index = new NodeValueIndex; state.indexes(use.slot) = index }
    index
  }

  /** What `insert` does with a root match nothing checks, handed over as its pair. */
  private def pair(state: TreeState, node: Int, l: PartialMatch, r: PartialMatch, span: Long,
      emit: Array[PartialMatch => Unit]): Unit = {
    state.created(node) += 1
    val roots = rootsAt(node)
    var i = 0
    while (i < roots.length) {
      val t = roots(i)
      if (span <= windows(t)) {
        state.matches += 1
        emit(t).asInstanceOf[PairSink].pair(l, r)
      }
      i += 1
    }
  }
}

object TreeGraphEvaluator {

  /**
   * The buffered partial matches from which a probe looks its partners up by value (when
   * its parent's condition compares one, see [[IndexedComparison]]) rather than testing
   * each: below it, a scan is as quick as keeping the index.
   */
  val IndexFrom = 32

  /** Buffers `m` at `node` of `state`, counted by the buffer guard. */
  private[tree] def buffer(state: TreeState, node: Int, m: PartialMatch, maxBuffered: Long,
      describeKey: () => String): Unit = {
    val buffer = state.buffers(node)
    buffer.add(m)
    if (buffer.size > state.peak(node)) state.peak(node) = buffer.size
    countBuffered(state, maxBuffered, describeKey)
  }

  /** Counts one more partial match buffered in `state`: fails past `maxBuffered`. */
  private[tree] def countBuffered(state: TreeState, maxBuffered: Long, describeKey: () => String): Unit = {
    state.buffered += 1
    if (state.buffered > maxBuffered) throw tooManyBuffered(maxBuffered, describeKey())
  }

  def tooManyBuffered(limit: Long, key: String): MatchRecognizeLimitException =
    new MatchRecognizeLimitException(
      s"SKIP TILL ANY MATCH buffered more than $limit partial matches for $key; raise " +
        "spark.sql.matchRecognize.maxBufferedPartialMatches, run the joins " +
        "(spark.sql.matchRecognize.cepExecution = joins), or narrow the pattern (WITHIN, " +
        "DEFINE conditions).")
}
