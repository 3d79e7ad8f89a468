package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, AttributeReference, Expression, GenericInternalRow, JoinedRow, MutableProjection, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/**
 * The aggregates DEFINE conditions read (always RUNNING there), kept per partial match
 * instead of recomputed over its rows: each thread carries the aggregation buffers of all of
 * them as one immutable [[UnsafeRow]], and mapping a row to a variable folds the row into
 * the buffers of the aggregates over that variable (Spark's own update expressions, in row
 * order, so the values are exactly those of a fold over the rows). A condition reads the
 * buffers with the tested row folded in tentatively.
 *
 * The buffers are also what the matcher's state key reads of the aggregates: two threads
 * whose buffers are equal byte for byte compute the same aggregate values for every future
 * row, whatever rows led to them (`sum(X.w)` tells threads apart by the sum alone, not by
 * which rows were summed).
 *
 * Only declarative aggregates (sum, count, avg, min, max, ...) are kept this way; the
 * others (collect_list, percentile, ...) are folded over the rows at each test, as before.
 *
 * @param slots the aggregate slots kept, each once (equal slots of several DEFINEs share one)
 */
private[execution] final class RunningAggregates(
    val slots: Array[AggregateSlot],
    rowAttributes: Seq[Attribute],
    labelNames: IndexedSeq[String],
    buffer: RowBuffer) {

  private val labelCount = labelNames.length
  private val functions = slots.map(_.function.asInstanceOf[DeclarativeAggregate])

  // Fresh buffer attributes per slot, so that equal functions of different slots (`sum(x)`
  // over A and over B) never bind to each other's buffers.
  private val bufferAttributes: Array[Seq[AttributeReference]] =
    functions.map(_.aggBufferAttributes.map(_.newInstance()))
  private val allBuffers: Seq[Attribute] = bufferAttributes.toIndexedSeq.flatten

  private def rebind(i: Int, e: Expression): Expression = {
    val fresh = AttributeMap(functions(i).aggBufferAttributes.zip(bufferAttributes(i)))
    e.transform { case a: AttributeReference if fresh.contains(a) => fresh(a) }
  }

  /** Does slot `i` fold in a row mapped to `label` (-1: a row skipped by SKIP TILL NEXT MATCH)? */
  private def counts(i: Int, label: Int): Boolean = slots(i).vars match {
    case None => true // the universal variable: every row of the match, skipped ones too
    case Some(vs) => label >= 0 && vs.contains(label)
  }

  // Index `label` for the variables, `labelCount` for a skipped row.
  private def index(label: Int): Int = if (label < 0) labelCount else label

  private val touching: Array[Boolean] =
    Array.tabulate(labelCount + 1)(l => slots.indices.exists(counts(_, if (l == labelCount) -1 else l)))

  // Per label: the buffers after folding in a row of that label (others unchanged).
  private val updates: Array[UnsafeProjection] = Array.tabulate(labelCount + 1) { l =>
    val label = if (l == labelCount) -1 else l
    val exprs = slots.indices.flatMap { i =>
      if (counts(i, label)) functions(i).updateExpressions.map(rebind(i, _))
      else bufferAttributes(i)
    }
    if (touching(l)) UnsafeProjection.create(exprs, allBuffers ++ rowAttributes) else null
  }

  private val evaluate: MutableProjection = MutableProjection.create(
    slots.indices.map(i => rebind(i, functions(i).evaluateExpression)), allBuffers)

  /** The buffers of a match with no rows. */
  val initial: UnsafeRow = UnsafeProjection.create(functions.toIndexedSeq.flatMap(_.initialValues))
    .apply(InternalRow.empty).copy()

  /** Does a row of `label` change the buffers? */
  def touches(label: Int): Boolean = touching(index(label))

  /** The position of `slot` among the values [[values]] and [[tentative]] return, or -1. */
  def indexOf(slot: AggregateSlot): Int = slots.indexOf(slot)

  /** The values of the aggregates over the rows folded into `state`. */
  def values(state: UnsafeRow): InternalRow = evaluate(state)

  /** The values with the row at `pos`, mapped to `label`, folded into `state` as well. */
  def tentative(state: UnsafeRow, pos: Long, label: Int, matchNumber: Long): InternalRow =
    if (!touches(label)) evaluate(state) else evaluate(fold(state, pos, label, matchNumber))

  /** `state` with the row at `pos`, mapped to `label`, folded in: a new row. */
  def update(state: UnsafeRow, pos: Long, label: Int, matchNumber: Long): UnsafeRow =
    if (!touches(label)) state
    else if ((state eq lastState) && pos == lastPos && label == lastLabel &&
        matchNumber == lastNumber) lastResult.copy()
    else fold(state, pos, label, matchNumber).copy()

  // The last fold, still in its projection's output row: a condition that held is usually
  // followed by the update of the same thread with the same row.
  private var lastState: UnsafeRow = _
  private var lastPos = -1L
  private var lastLabel = 0
  private var lastNumber = 0L
  private var lastResult: UnsafeRow = _

  private val labelStrings = labelNames.map(UTF8String.fromString)
  private val patternRow = new GenericInternalRow(SlotBinder.PatternColumns)
  private val rowJoin = new JoinedRow
  private val stateJoin = new JoinedRow

  private def fold(state: UnsafeRow, pos: Long, label: Int, matchNumber: Long): UnsafeRow = {
    patternRow.update(0, if (label >= 0) labelStrings(label) else null)
    patternRow.setLong(1, matchNumber)
    val result = updates(index(label))(stateJoin(state, rowJoin(buffer.get(pos), patternRow)))
    lastState = state
    lastPos = pos
    lastLabel = label
    lastNumber = matchNumber
    lastResult = result
    result
  }

  /** Bytes a state takes on the heap (the row object and its array). */
  def bytes(state: UnsafeRow): Long = 48L + state.getSizeInBytes

  /**
   * Appends the words of `state` to a state key: rows of the same schema are equal values
   * when their bytes are equal (the writers zero the unused bits).
   */
  private[execution] def addWords(state: UnsafeRow, into: LongBuffer): Unit = {
    val base = state.getBaseObject
    val offset = state.getBaseOffset
    var i = 0
    while (i < state.getSizeInBytes) {
      into.add(Platform.getLong(base, offset + i))
      i += 8
    }
  }
}

private[execution] object RunningAggregates {

  /** The running aggregates of `spec`'s DEFINE conditions that can be kept per thread, or null. */
  def of(spec: MatcherSpec, buffer: RowBuffer): RunningAggregates = {
    val slots = spec.defines.flatten.flatMap(_.slots).collect {
      case a: AggregateSlot if !a.isFinal && a.function.isInstanceOf[DeclarativeAggregate] => a
    }.distinct.toArray
    if (slots.isEmpty) null
    else new RunningAggregates(slots, spec.rowAttributes, spec.labels, buffer)
  }
}
