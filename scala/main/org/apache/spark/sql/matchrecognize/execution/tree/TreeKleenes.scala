package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, GenericInternalRow, JoinedRow, Literal, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.matchrecognize.execution.{AggregateRunner, MatchRecognizeLimitException}
import org.apache.spark.sql.matchrecognize.plans.{KleeneOutput, TreeKleeneSpec, TreeLeafSpec}

/**
 * The Kleene closures of a one-pass tree, compiled once per task. A closure's rows are
 * buffered like a leaf's (each a partial match of its one row, `rows(0)`); a complete
 * match of the tree is extended by the closures in turn, by every subset of each one's
 * buffered rows that lies strictly between its neighbours, rises in ORDER BY position,
 * stays within the window and whose rows pass the row condition (which may read the row
 * chosen before), enumerated depth first. An extended match carries, after the tree's
 * leaves, one row per closure: its outputs (aggregates, values, the chosen rows) and its
 * first and last ORDER BY positions, read through [[outputView]] with the leaves' columns.
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
  private val rowSchemas: Array[Seq[Attribute]] = specs.map(_.leaf.columns.map(_.toAttribute)).toArray

  private def predicate(e: Expression, schema: Seq[Attribute]): BasePredicate = {
    val p = Predicate.create(e, schema)
    p.initialize(0)
    p
  }
  private val enters: Array[BasePredicate] = specs.map(k => predicate(k.leaf.enter, input)).toArray
  private val projections: Array[UnsafeProjection] =
    specs.map(k => UnsafeProjection.create(k.leaf.columns, input)).toArray
  private val bounds: Array[UnsafeProjection] = specs.indices.map { k =>
    UnsafeProjection.create(specs(k).lower.toSeq ++ specs(k).upper.toSeq, columnsOf(readable(k)))
  }.toArray
  private val conditions: Array[BasePredicate] = specs.indices.map { k =>
    specs(k).rowCondition.map(c =>
      predicate(c, columnsOf(readable(k)) ++ rowSchemas(k) ++ specs(k).previous.map(_._2))).orNull
  }.toArray
  private val post: BasePredicate =
    postCondition.map(predicate(_, columnsOf(rootLeaves ++ outputLeaf))).orNull

  private val previousOrdinals: Array[Array[Int]] = specs.indices.map { k =>
    specs(k).previous.map { case (cell, _) => rowSchemas(k).indexWhere(_.exprId == cell.exprId) }.toArray
  }.toArray
  private val previousRows = specs.map(k => new GenericInternalRow(k.previous.size)).toArray
  private val withRow = Array.fill(count)(new JoinedRow)
  private val withPrevious = Array.fill(count)(new JoinedRow)

  private val runners: Array[Array[AggregateRunner]] = specs.indices.map { k =>
    specs(k).outputs.map {
      case KleeneOutput.Aggregate(_, f) => AggregateRunner(f, rowSchemas(k))
      case _ => null
    }.toArray
  }.toArray
  private val valueOrdinals: Array[Array[Int]] = specs.indices.map { k =>
    specs(k).outputs.map {
      case KleeneOutput.Value(_, cell, _, _) => rowSchemas(k).indexWhere(_.exprId == cell.exprId)
      case _ => -1
    }.toArray
  }.toArray
  private val rowCellOrdinals: Array[Array[Seq[Int]]] = specs.indices.map { k =>
    specs(k).outputs.map {
      case KleeneOutput.Rows(_, cells) => cells.map(c => rowSchemas(k).indexWhere(_.exprId == c.exprId))
      case _ => Nil
    }.toArray
  }.toArray
  private val outputRows = specs.map(k => new GenericInternalRow(k.columns.size)).toArray
  private val writers: Array[UnsafeProjection] =
    specs.map(k => UnsafeProjection.create(k.columns.map(_.dataType).toArray)).toArray

  // Scratch per closure: the candidate rows of the match being extended, the rows chosen.
  private val candidates = Array.fill(count)(ArrayBuffer.empty[PartialMatch])
  private val chosen = Array.fill(count)(ArrayBuffer.empty[PartialMatch])

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
      val spec = specs(k)
      val b = bounds(k)(views(k).of(m.rows))
      val hasLower = spec.lower.isDefined
      // An unknown neighbour position admits no row, as under the joins.
      val after = if (!hasLower) Long.MinValue else if (b.isNullAt(0)) Long.MaxValue else b.getLong(0)
      val before =
        if (spec.upper.isEmpty) Long.MaxValue
        else {
          val i = if (hasLower) 1 else 0
          if (b.isNullAt(i)) Long.MinValue else b.getLong(i)
        }
      val end = m.lo + window
      val rows = candidates(k)
      rows.clear()
      // Buffered in arrival order, which is ORDER BY order.
      rowsOf(k).probe(m.hi - window, end) { r =>
        if (r.firstOrder > after && r.firstOrder < before && r.hi <= end) rows += r
      }
      val picked = chosen(k)
      picked.clear()
      var bindings = 0L
      def choose(start: Int, lo: Long, hi: Long): Unit = {
        if (picked.size >= spec.min && spec.max.forall(picked.size <= _)) {
          bindings += 1
          if (bindings > spec.maxBindings) throw tooManyBindings(spec, describeKey())
          step(k + 1, until, withChosen(k, m, lo, hi), rowsOf, describeKey, sink)
        }
        if (spec.max.forall(picked.size < _)) {
          var j = start
          while (j < rows.size) {
            val r = rows(j)
            val nextLo = math.min(lo, r.lo)
            val nextHi = math.max(hi, r.hi)
            if ((picked.isEmpty || r.firstOrder > picked.last.firstOrder) && nextHi - nextLo <= window &&
                accepts(k, m, r)) {
              picked += r
              choose(j + 1, nextLo, nextHi)
              picked.remove(picked.size - 1)
            }
            j += 1
          }
        }
      }
      choose(0, m.lo, m.hi)
    }

  private def accepts(k: Int, m: PartialMatch, r: PartialMatch): Boolean =
    conditions(k) == null || {
      val ordinals = previousOrdinals(k)
      if (ordinals.nonEmpty) {
        val picked = chosen(k)
        val previous = if (picked.isEmpty) null else picked.last.rows(0)
        val types = specs(k).previous
        var i = 0
        while (i < ordinals.length) {
          previousRows(k).update(i,
            if (previous == null) null else previous.get(ordinals(i), types(i)._1.dataType))
          i += 1
        }
      }
      conditions(k).eval(withPrevious(k)(withRow(k)(views(k).of(m.rows), r.rows(0)), previousRows(k)))
    }

  /** `m` with closure k's output row for the rows chosen now, spanning `lo`..`hi`. */
  private def withChosen(k: Int, m: PartialMatch, lo: Long, hi: Long): PartialMatch = {
    val spec = specs(k)
    val picked = chosen(k)
    val out = outputRows(k)
    var i = 0
    while (i < spec.outputs.length) {
      out.update(i,
        spec.outputs(i) match {
          case KleeneOutput.Aggregate(_, _) =>
            val runner = runners(k)(i)
            runner.reset()
            picked.foreach(p => runner.update(p.rows(0)))
            runner.result
          case KleeneOutput.Value(_, cell, fromFirst, n) =>
            val at = if (fromFirst) n else picked.size - 1 - n
            if (at < 0 || at >= picked.size) null
            else picked(at).rows(0).get(valueOrdinals(k)(i), cell.dataType)
          case KleeneOutput.Rows(_, cells) =>
            val ordinals = rowCellOrdinals(k)(i)
            new GenericArrayData(picked.map { p =>
              val row: UnsafeRow = p.rows(0)
              new GenericInternalRow(ordinals.zip(cells).map { case (o, c) => row.get(o, c.dataType) }.toArray[Any])
            }.toArray[Any])
        })
      i += 1
    }
    out.update(i, if (picked.isEmpty) null else picked.head.firstOrder)
    out.update(i + 1, if (picked.isEmpty) null else picked.last.firstOrder)
    val rows = m.rows.clone()
    rows(outputLeaf(k)) = writers(k)(out).copy()
    val first = if (picked.isEmpty) m.firstOrder else math.min(m.firstOrder, picked.head.firstOrder)
    val last = if (picked.isEmpty) m.lastOrder else math.max(m.lastOrder, picked.last.firstOrder)
    new PartialMatch(rows, lo, hi, first, last)
  }

  private def tooManyBindings(spec: TreeKleeneSpec, key: String): MatchRecognizeLimitException =
    new MatchRecognizeLimitException(
      s"the Kleene closure ${spec.description} produced more than ${spec.maxBindings} bindings " +
        s"for one match of the rest of the pattern in $key; raise " +
        "spark.sql.matchRecognize.maxKleeneBindings or make the pattern or its WITHIN window " +
        "more selective.")
}
