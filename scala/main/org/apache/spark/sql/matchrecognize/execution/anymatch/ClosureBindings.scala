package org.apache.spark.sql.matchrecognize.execution.anymatch

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BasePredicate, Expression, GenericInternalRow, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, TaskPredicates}

/**
 * The bindings of one Kleene closure `B{min,max}` under SKIP TILL ANY MATCH for one partial
 * match at a time, the same for the joins (`KleeneExec`) and the one-pass tree
 * (`TreeKleenes`): every subset of the B rows strictly between the closure's neighbours
 * (ORDER BY positions `lower`, `upper` over the match, absent at the pattern's ends) that
 * rises in ORDER BY position, has `min` to `max` rows, lies with the match within the window
 * and whose rows pass `rowCondition` (over the match, the row, then the `previous` cells of
 * the row chosen before it, NULL for the first). For each match: [[open]], [[offer]] the B
 * rows near it in any order, then [[foreachBinding]], depth first in ORDER BY order (`{}`,
 * `{b1}`, `{b1, b2}`, ..., `{b2}`); [[ClosureOutputs]] reads the binding in the callback.
 * `C` is how the execution buffers a B row. One task's scratch space for one closure: a
 * callback may enumerate another closure, never this one.
 *
 * @param closure the closure as the error names it, e.g. `B+`
 */
abstract class ClosureBindings[C <: AnyRef](
    closure: String,
    min: Int,
    max: Option[Int],
    lower: Option[Expression],
    upper: Option[Expression],
    window: Long,
    maxBindings: Long,
    rowCondition: Option[Expression],
    contextSchema: Seq[Attribute],
    rowSchema: Seq[Attribute],
    previous: Seq[(Attribute, Attribute)]) {

  /** A candidate's ORDER BY position, window span and columns (over `rowSchema`). */
  protected def orderOf(c: C): Long
  protected def loOf(c: C): Long
  protected def hiOf(c: C): Long
  protected def rowOf(c: C): InternalRow

  private val bounds = UnsafeProjection.create(lower.toIndexedSeq ++ upper.toIndexedSeq, contextSchema)
  private val condition: BasePredicate =
    rowCondition.map(c => TaskPredicates.compile(c, contextSchema ++ rowSchema ++ previous.map(_._2))).orNull
  private val previousOrdinals = previous.map { case (cell, _) =>
    rowSchema.indexWhere(_.exprId == cell.exprId)
  }.toArray
  private val previousTypes = previous.map(_._1.dataType).toArray
  private val previousRow = new GenericInternalRow(previous.size)
  private val withRow = new JoinedRow
  private val withPrevious = new JoinedRow

  // The open match, the band its rows must lie in, its candidates and the binding being built.
  private var context: InternalRow = _
  private var matchLo, matchHi, after, before = 0L
  private val candidates = ArrayBuffer.empty[C]
  private var ordered = true
  private val picked = ArrayBuffer.empty[C]

  /** Opens the match `context` spanning `lo`..`hi`; an unknown (NULL) neighbour position admits no row. */
  def open(context: InternalRow, lo: Long, hi: Long): Unit = {
    val b = bounds(context)
    val last = b.numFields - 1
    after = if (lower.isEmpty) Long.MinValue else if (b.isNullAt(0)) Long.MaxValue else b.getLong(0)
    before = if (upper.isEmpty) Long.MaxValue else if (b.isNullAt(last)) Long.MinValue else b.getLong(last)
    this.context = context
    matchLo = lo
    matchHi = hi
    candidates.clear()
    ordered = true
  }

  /** Offers a B row; kept if it lies between the neighbours and within the window of the match. */
  def offer(c: C): Unit = {
    val order = orderOf(c)
    if (order > after && order < before && loOf(c) >= matchHi - window && hiOf(c) <= matchLo + window) {
      if (candidates.nonEmpty && order < orderOf(candidates.last)) ordered = false
      candidates += c
    }
  }

  /**
   * Calls `f(lo, hi)` for every binding of the open match, with the span of the match and the
   * binding together. More than `maxBindings` fail the query, naming the match's group by `where`.
   */
  def foreachBinding(where: () => String)(f: (Long, Long) => Unit): Unit = {
    if (!ordered) { // a stable sort: ties keep the order offered
      val sorted = candidates.sortBy(orderOf)
      candidates.clear()
      candidates ++= sorted
    }
    picked.clear()
    var count = 0L
    def extend(start: Int, lo: Long, hi: Long): Unit = {
      if (picked.size >= min && max.forall(picked.size <= _)) {
        count += 1
        if (count > maxBindings) throw ClosureBindings.tooMany(closure, maxBindings, where())
        f(lo, hi)
      }
      if (max.forall(picked.size < _)) {
        var j = start
        while (j < candidates.size) {
          val c = candidates(j)
          val nextLo = math.min(lo, loOf(c))
          val nextHi = math.max(hi, hiOf(c))
          if ((picked.isEmpty || orderOf(c) > orderOf(picked.last)) && nextHi - nextLo <= window && accepts(c)) {
            picked += c
            extend(j + 1, nextLo, nextHi)
            picked.remove(picked.size - 1)
          }
          j += 1
        }
      }
    }
    extend(0, matchLo, matchHi)
  }

  private def accepts(c: C): Boolean = condition == null || {
    val last = if (picked.isEmpty) null else rowOf(picked.last)
    var i = 0
    while (i < previousOrdinals.length) {
      previousRow.update(i, if (last == null) null else last.get(previousOrdinals(i), previousTypes(i)))
      i += 1
    }
    condition.eval(withPrevious(withRow(context, rowOf(c)), previousRow))
  }

  /** The current binding: how many rows it chose, and each (in ORDER BY order) with its position. */
  def chosenCount: Int = picked.size
  def chosenRow(i: Int): InternalRow = rowOf(picked(i))
  def chosenOrder(i: Int): Long = orderOf(picked(i))
}

object ClosureBindings {

  /** The error past `spark.sql.matchRecognize.maxKleeneBindings`, under either execution. */
  def tooMany(closure: String, limit: Long, where: String): MatchRecognizeLimitException =
    new MatchRecognizeLimitException(
      s"the Kleene closure $closure produced more than $limit bindings for one match of the " +
        s"rest of the pattern in $where; raise spark.sql.matchRecognize.maxKleeneBindings or " +
        "make the pattern or its WITHIN window more selective.")
}
