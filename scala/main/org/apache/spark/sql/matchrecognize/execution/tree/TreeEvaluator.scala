package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, JoinedRow, Literal, Predicate, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.{GenerateUnsafeRowJoiner, UnsafeRowJoiner}
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException
import org.apache.spark.sql.matchrecognize.plans.{TreeJoinNode, TreeLeafNode, TreeLeafSpec, TreeNodeSpec}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.types.StructType

/**
 * The code of a one-pass tree, compiled once per task: it moves a [[TreeState]] forward
 * event by event. An event enters every leaf whose variable it can bind; each new partial
 * match is buffered at its node and combined with the sibling node's buffer (only the
 * part of it the window and the pattern order allow), and each combination that passes
 * the parent's condition is a new partial match of the parent, up to the root, whose
 * partial matches are the matches.
 *
 * Nodes are numbered in post order (children before parents; the root is last).
 */
final class TreeEvaluator(
    leaves: Seq[TreeLeafSpec],
    root: TreeNodeSpec,
    input: Seq[Attribute],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long) {

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

  private def struct(attrs: Seq[Attribute]): StructType = DataTypeUtils.fromAttributes(attrs)

  private val conditions: Array[BasePredicate] = nodes.map {
    case j: TreeJoinNode if j.condition != Literal.TrueLiteral =>
      val p = Predicate.create(j.condition, schemaOf(j.left) ++ schemaOf(j.right))
      p.initialize(0)
      p
    case _ => null
  }.toArray
  private val joiners: Array[UnsafeRowJoiner] = nodes.map {
    case j: TreeJoinNode => GenerateUnsafeRowJoiner.create(struct(schemaOf(j.left)), struct(schemaOf(j.right)))
    case _ => null
  }.toArray
  private val orderOf: Array[Int] = nodes.map {
    case j: TreeJoinNode if narrowByOrder => j.order
    case _ => 0
  }.toArray
  private val joined = Array.fill(nodeCount)(new JoinedRow)

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

  def newState(): TreeState = new TreeState(nodeCount)

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
      purge(state, eventHi - window)
      state.lastPosition = eventHi
    }
    var k = 0
    while (k < enter.length) {
      if (enter(k).eval(event)) {
        val m = new PartialMatch(project(k)(event).copy(), eventLo, eventHi, o, o)
        insert(state, leafNode(k), m, emit, describeKey)
      }
      k += 1
    }
  }

  /**
   * Every event up to window position `watermark` has been added: drops the partial
   * matches no later event can complete.
   */
  def close(state: TreeState, watermark: Long): Unit = {
    purge(state, watermark - window + 1)
    state.lastPosition = math.max(state.lastPosition, watermark)
  }

  private def purge(state: TreeState, before: Long): Unit = {
    var i = 0
    while (i < rootIndex) {
      state.buffered -= state.buffers(i).purgeBefore(before)
      i += 1
    }
  }

  private def insert(state: TreeState, node: Int, m: PartialMatch, emit: PartialMatch => Unit,
      describeKey: () => String): Unit = {
    state.created(node) += 1
    if (node == rootIndex) {
      state.matches += 1
      emit(m)
      return
    }
    val buffer = state.buffers(node)
    buffer.add(m)
    state.buffered += 1
    if (buffer.size > state.peak(node)) state.peak(node) = buffer.size
    if (state.buffered > maxBuffered) throw TreeEvaluator.tooManyBuffered(maxBuffered, describeKey())

    val up = parent(node)
    val left = isLeft(node)
    // A partner shares the window with `m`: it starts at most `window` before m's end and
    // at most `window` after m's start. The pattern order narrows that further when ORDER
    // BY positions are window positions (a partner wholly after m starts after m's last
    // row; one wholly before m starts before m's first row).
    var from = m.hi - window
    var to = m.lo + window
    val after = orderOf(up) * (if (left) 1 else -1)
    if (after > 0) from = math.max(from, m.lastOrder + 1)
    else if (after < 0) to = math.min(to, m.firstOrder - 1)
    val condition = conditions(up)
    val joiner = joiners(up)
    val pair = joined(up)
    state.buffers(sibling(node)).probe(from, to) { q =>
      val l = if (left) m else q
      val r = if (left) q else m
      val spanLo = math.min(l.lo, r.lo)
      val spanHi = math.max(l.hi, r.hi)
      if (spanHi - spanLo <= window &&
          (condition == null || condition.eval(pair.apply(l.row, r.row)))) {
        val combined = new PartialMatch(joiner.join(l.row, r.row).copy(), spanLo, spanHi,
          math.min(l.firstOrder, r.firstOrder), math.max(l.lastOrder, r.lastOrder))
        insert(state, up, combined, emit, describeKey)
      }
    }
  }

  /** Per node, its description for metrics and EXPLAIN. */
  def describe(i: Int): String = nodes(i) match {
    case TreeLeafNode(k) => leaves(k).variable
    case j: TreeJoinNode => j.description
  }
}

object TreeEvaluator {
  def tooManyBuffered(limit: Long, key: String): MatchRecognizeLimitException =
    new MatchRecognizeLimitException(
      s"SKIP TILL ANY MATCH buffered more than $limit partial matches for $key; raise " +
        "spark.sql.matchRecognize.maxBufferedPartialMatches or narrow the pattern (WITHIN, " +
        "DEFINE conditions).")
}
