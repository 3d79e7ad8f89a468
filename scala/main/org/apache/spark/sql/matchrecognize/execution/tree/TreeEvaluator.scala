package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, Literal, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.types.DataType
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode, TreeKleeneSpec, TreeLeafNode, TreeLeafSpec, TreeNegationSpec, TreeNodeSpec}

/**
 * The code of a one-pass tree, compiled once per task: it moves a [[TreeState]] forward
 * event by event. An event enters every leaf whose variable it can bind; each new partial
 * match is buffered at its node and combined with the sibling node's buffer (only the
 * part of it the window and the pattern order allow), and each combination that passes
 * the parent's condition is a new partial match of the parent, up to the root, whose
 * partial matches are the matches. Negations are checked where their neighbours are bound
 * (see [[TreeNegations]]); the root's matches are extended by the Kleene closures (see
 * [[TreeKleenes]]), and kept when the conditions that read closures hold.
 *
 * Nodes are numbered in post order (children before parents; the root is last); negation
 * `j`'s rows are buffered after them, at `nodeCount + j`, then closure `k`'s rows.
 */
final class TreeEvaluator(
    leaves: Seq[TreeLeafSpec],
    root: TreeNodeSpec,
    negationSpecs: Seq[TreeNegationSpec],
    input: Seq[Attribute],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long,
    kleeneSpecs: Seq[TreeKleeneSpec] = Nil,
    postCondition: Option[Expression] = None) {

  private val nodes: IndexedSeq[TreeNodeSpec] = {
    val out = mutable.ArrayBuffer.empty[TreeNodeSpec]
    def walk(n: TreeNodeSpec): Unit = {
      n match {
        case j: TreeJoinNode => walk(j.left); walk(j.right)
        case _ =>
      }
      out += n
    }
    walk(root)
    out.toIndexedSeq
  }
  private def indexOf(n: TreeNodeSpec): Int = nodes.indexWhere(_ eq n)

  val nodeCount: Int = nodes.length
  private val rootIndex = nodeCount - 1
  private val parent = Array.fill(nodeCount)(-1)
  private val sibling = Array.fill(nodeCount)(-1)
  private val isLeft = new Array[Boolean](nodeCount)
  nodes.zipWithIndex.foreach {
    case (j: TreeJoinNode, i) =>
      val (l, r) = (indexOf(j.left), indexOf(j.right))
      parent(l) = i; parent(r) = i
      sibling(l) = r; sibling(r) = l
      isLeft(l) = true
    case _ =>
  }

  /** The columns of a node's partial matches: its leaves' columns in leaf order. */
  def schemaOf(n: TreeNodeSpec): Seq[Attribute] =
    n.leafIndexes.flatMap(i => leaves(i).columns.map(_.toAttribute))

  private val conditions: Array[BasePredicate] = nodes.map {
    case j: TreeJoinNode if j.condition != Literal.TrueLiteral =>
      val p = Predicate.create(j.condition, schemaOf(j.left) ++ schemaOf(j.right))
      p.initialize(0)
      p
    case _ => null
  }.toArray
  private val views: Array[LeafRowsView] = nodes.map {
    case j: TreeJoinNode => new LeafRowsView(j.leafIndexes, leaves, j.left.leafIndexes.size)
    case n => new LeafRowsView(n.leafIndexes, leaves, n.leafIndexes.size)
  }.toArray
  private val rightLeaves: Array[Array[Int]] = nodes.map {
    case j: TreeJoinNode => j.right.leafIndexes.toArray
    case _ => Array.emptyIntArray
  }.toArray
  private val leftLeaves: Array[Array[Int]] = nodes.map {
    case j: TreeJoinNode => j.left.leafIndexes.toArray
    case _ => Array.emptyIntArray
  }.toArray
  private val orderOf: Array[Int] = nodes.map {
    case j: TreeJoinNode => j.order
    case _ => 0
  }.toArray

  // The pattern order decides which side of a join can arrive later. Under `order` = 1
  // every left partial match is complete before the first row of any right one arrives
  // (the left rows come earlier in ORDER BY order): a left match only waits in its buffer
  // for right ones, and a right match only probes the left buffer, never buffered itself.
  // Likewise, mirrored, under -1; under 0 both sides buffer and probe.
  private val buffersAt: Array[Boolean] = nodes.indices.map { i =>
    i != rootIndex && {
      val o = orderOf(parent(i))
      !(o == 1 && !isLeft(i)) && !(o == -1 && isLeft(i))
    }
  }.toArray
  private val probesAt: Array[Boolean] = nodes.indices.map { i =>
    i != rootIndex && {
      val o = orderOf(parent(i))
      !(o == 1 && isLeft(i)) && !(o == -1 && !isLeft(i))
    }
  }.toArray

  private val leafNode: Array[Int] = leaves.indices.map { k =>
    nodes.indexWhere { case TreeLeafNode(i) => i == k; case _ => false }
  }.toArray
  private val enter: Array[BasePredicate] = leaves.map { l =>
    val p = Predicate.create(l.enter, input)
    p.initialize(0)
    p
  }.toArray
  private val project: Array[UnsafeProjection] =
    leaves.map(l => UnsafeProjection.create(l.columns, input)).toArray
  private val positions = UnsafeProjection.create(Seq(order, lo, hi), input)

  private val kleenes = new TreeKleenes(kleeneSpecs, leaves, root.leafIndexes, postCondition, input, window)
  private val negations = new TreeNegations(negationSpecs, leaves, kleenes.outputLeaves, root.leafIndexes,
    n => nodes.indexWhere(_ == n), input, window)
  private val kleeneBase = nodeCount + negations.count
  private val kleeneRows: TreeState => Int => NodeBuffer = state => k => state.buffers(kleeneBase + k)

  // A closure that ends the pattern may still get rows, and rows that would negate a match
  // may still come after it: then a root match is held until its window has passed.
  private val holdsAtRoot = kleenes.holdsMatches || negations.trailing.nonEmpty

  def newState(): TreeState = new TreeState(kleeneBase + kleenes.count)

  /**
   * A match's columns (every leaf's, in leaf order, then every closure's); valid until the
   * next call.
   */
  def rowOf(m: PartialMatch): InternalRow = kleenes.outputView.of(m.rows)

  /** The output row of this tree's matches under a key of `keyTypes`: `of(key, lo, hi)` after `rowOf`. */
  private[tree] def outputRow(keyTypes: Seq[DataType]): MatchOutputRow =
    new MatchOutputRow(keyTypes, kleenes.outputView)

  // Without negations and closures nothing checks a root match after its join: a
  // [[PairSink]] gets it as the pair of partial matches it combines, never built.
  private val pairView: LeafRowsView = root match {
    case j: TreeJoinNode if negations.count == 0 && kleenes.count == 0 && postCondition.isEmpty =>
      new LeafRowsView(j.leafIndexes, leaves, j.left.leafIndexes.size)
    case _ => null
  }

  /** The output row of the root matches a [[PairSink]] gets: `of(key, lo, hi)` after `pairRow`. */
  private[tree] def pairOutputRow(keyTypes: Seq[DataType]): MatchOutputRow =
    if (pairView == null) null else new MatchOutputRow(keyTypes, pairView)

  /** Points [[pairOutputRow]] at the root match combining `left` and `right`. */
  private[tree] def pairRow(left: PartialMatch, right: PartialMatch): Unit = pairView.of(left.rows, right.rows)

  /**
   * Adds one event (an input row, not older than the state's last one): first drops what
   * it puts out of the window, then lets it enter its leaves. `emit` gets each new match.
   * `describeKey` names the group in the error of the buffer guard.
   */
  def add(state: TreeState, event: InternalRow, emit: PartialMatch => Unit,
      describeKey: () => String): Unit = {
    val p = positions(event)
    val o = p.getLong(0)
    val eventLo = p.getLong(1)
    val eventHi = p.getLong(2)
    if (eventHi > state.lastPosition) {
      // No row from here on can negate a held match whose window ends before it.
      release(state, eventHi - 1, emit, describeKey)
      purge(state, eventHi - window)
      state.lastPosition = eventHi
    }
    var j = 0
    while (j < negations.count) {
      if (negations.enters(j, event)) {
        val d = negations.rowOf(j, event, eventLo, eventHi, o)
        if (negations.isTrailing(j) && !negations.isAfterClosures(j)) forbidHeld(state, j, d)
        state.created(nodeCount + j) += 1
        buffer(state, nodeCount + j, d, describeKey)
      }
      j += 1
    }
    j = 0
    while (j < kleenes.count) {
      if (kleenes.enters(j, event)) {
        state.created(kleeneBase + j) += 1
        buffer(state, kleeneBase + j, kleenes.rowOf(j, event, eventLo, eventHi, o), describeKey)
      }
      j += 1
    }
    var k = 0
    while (k < enter.length) {
      if (enter(k).eval(event)) {
        val rows = new Array[UnsafeRow](leaves.length)
        rows(k) = project(k)(event).copy()
        insert(state, leafNode(k), new PartialMatch(rows, eventLo, eventHi, o, o), emit, describeKey)
      }
      k += 1
    }
  }

  /**
   * Every event up to window position `watermark` has been added: emits the held matches
   * no later event can negate and drops the partial matches no later event can complete.
   */
  def close(state: TreeState, watermark: Long, emit: PartialMatch => Unit,
      describeKey: () => String): Unit = {
    release(state, watermark, emit, describeKey)
    purge(state, watermark - window + 1)
    state.lastPosition = math.max(state.lastPosition, watermark)
  }

  /**
   * The earliest window position at which `close` would emit a held match or drop a
   * partial match (Long.MaxValue when it would change nothing): when a stream's key with
   * no new events must be looked at again.
   */
  def nextChange(state: TreeState): Long = {
    var at = state.heldUntil
    var i = 0
    while (i < state.buffers.length) {
      val hi = state.buffers(i).oldestHi
      if (hi != Long.MaxValue) at = math.min(at, hi + window)
      i += 1
    }
    at
  }

  /** The group has no more events: emits every held match. */
  def finish(state: TreeState, emit: PartialMatch => Unit, describeKey: () => String): Unit =
    release(state, Long.MaxValue, emit, describeKey)

  private def purge(state: TreeState, before: Long): Unit = {
    var i = 0
    while (i < state.buffers.length) {
      if (i != rootIndex) state.buffered -= state.buffers(i).purgeBefore(before)
      i += 1
    }
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
            complete(state, _, emit))
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
    countBuffered(state, describeKey)
  }

  /**
   * A match the closures have extended: emitted when the conditions that read them hold and
   * no negation next to a closure forbids it.
   */
  private def complete(state: TreeState, m: PartialMatch, emit: PartialMatch => Unit): Unit =
    if (kleenes.passes(m) && !negatedAfterClosures(state, m)) {
      state.matches += 1
      emit(m)
    }

  private def negatedAfterClosures(state: TreeState, m: PartialMatch): Boolean =
    negatedByAny(state, negations.afterClosures, m)

  private def buffer(state: TreeState, node: Int, m: PartialMatch, describeKey: () => String): Unit = {
    val buffer = state.buffers(node)
    buffer.add(m)
    if (buffer.size > state.peak(node)) state.peak(node) = buffer.size
    countBuffered(state, describeKey)
  }

  private def countBuffered(state: TreeState, describeKey: () => String): Unit = {
    state.buffered += 1
    if (state.buffered > maxBuffered) throw TreeEvaluator.tooManyBuffered(maxBuffered, describeKey())
  }

  private def negated(state: TreeState, node: Int, m: PartialMatch): Boolean =
    negatedByAny(state, negations.checksAt(node), m)

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

  private def insert(state: TreeState, node: Int, m: PartialMatch, emit: PartialMatch => Unit,
      describeKey: () => String): Unit = {
    state.created(node) += 1
    if (negated(state, node, m)) return
    if (node == rootIndex) {
      // A root that is a leaf has no join to check the window: under WITHIN n ROWS a row
      // with more ORDER BY peers than n spans more than n rows.
      if (m.hi - m.lo > window) return
      if (!negatedByAny(state, negations.trailingOnRoot, m)) {
        kleenes.extend(m, 0, kleenes.firstTrailing, kleeneRows(state), describeKey) { e =>
          if (holdsAtRoot) hold(state, e, describeKey) else complete(state, e, emit)
        }
      }
      return
    }
    if (buffersAt(node)) buffer(state, node, m, describeKey)
    if (!probesAt(node)) return

    val up = parent(node)
    val left = isLeft(node)
    // A partner shares the window with `m`: it starts at most `window` before m's end and
    // at most `window` after m's start. When ORDER BY positions are window positions, a
    // partner the pattern puts wholly before m also starts before m's first row.
    val from = m.hi - window
    var to = m.lo + window
    if (narrowByOrder && orderOf(up) != 0) to = math.min(to, m.firstOrder - 1)
    val condition = conditions(up)
    val view = views(up)
    val fromLeft = leftLeaves(up)
    val fromRight = rightLeaves(up)
    val pairs = emit match {
      case p: PairSink if up == rootIndex && pairView != null => p
      case _ => null
    }
    state.buffers(sibling(node)).probe(from, to) { q =>
      val l = if (left) m else q
      val r = if (left) q else m
      val spanLo = math.min(l.lo, r.lo)
      val spanHi = math.max(l.hi, r.hi)
      if (spanHi - spanLo <= window &&
          (condition == null || condition.eval(view.of(l.rows, r.rows)))) {
        if (pairs != null) {
          state.created(up) += 1
          state.matches += 1
          pairs.pair(l, r)
        } else {
          val rows = new Array[UnsafeRow](leaves.length)
          var i = 0
          while (i < fromLeft.length) { rows(fromLeft(i)) = l.rows(fromLeft(i)); i += 1 }
          i = 0
          while (i < fromRight.length) { rows(fromRight(i)) = r.rows(fromRight(i)); i += 1 }
          val combined = new PartialMatch(rows, spanLo, spanHi,
            math.min(l.firstOrder, r.firstOrder), math.max(l.lastOrder, r.lastOrder))
          insert(state, up, combined, emit, describeKey)
        }
      }
    }
  }
}

object TreeEvaluator {

  /** The evaluator of one alternative over `input` rows. */
  def of(a: TreeAlternative, input: Seq[Attribute], order: Expression, lo: Expression,
      hi: Expression, window: Long, narrowByOrder: Boolean, maxBuffered: Long): TreeEvaluator =
    new TreeEvaluator(a.leaves, a.root, a.negations, input, order, lo, hi, a.window.getOrElse(window),
      narrowByOrder, maxBuffered, a.kleenes, a.postCondition)

  def tooManyBuffered(limit: Long, key: String): MatchRecognizeLimitException =
    new MatchRecognizeLimitException(
      s"SKIP TILL ANY MATCH buffered more than $limit partial matches for $key; raise " +
        "spark.sql.matchRecognize.maxBufferedPartialMatches, run the joins " +
        "(spark.sql.matchRecognize.cepExecution = joins), or narrow the pattern (WITHIN, " +
        "DEFINE conditions).")
}
