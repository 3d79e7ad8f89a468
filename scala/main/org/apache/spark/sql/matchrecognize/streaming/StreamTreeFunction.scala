package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, AttributeReference, BoundReference, Expression, GenericInternalRow, InterpretedOrdering, IsNotNull, JoinedRow, Literal, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.matchrecognize.compile.anymatch.{MatchNumbering, TreeStreamSpec}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeTask, TreeUnits}
import org.apache.spark.sql.types.{BooleanType, LongType}

/**
 * The function Spark's stateful operator calls for each PARTITION BY key of a SKIP TILL ANY
 * MATCH query over a stream, with the key's new rows of a micro-batch (or none, when the
 * watermark passed the time the key asked to be called back at). Rows wait in the key's
 * [[TreeKeyState]] until they are released (see [[EventTimeRelease]]); then, in physical order,
 * each gets its window columns ([[RunningWindowColumns]]) and enters every alternative's
 * one-pass tree (the trees of patterns planned together sharing the nodes they have alike,
 * see [[TreeUnits]]), exactly as the batch operator offers a key's rows. A match is written as
 * soon as it is complete, or, held by a trailing negation, once the watermark has closed its
 * window; the watermark also drops the partial matches no later row can complete.
 *
 * Matches leave as the struct of the plan's match columns (see
 * [[org.apache.spark.sql.matchrecognize.compile.anymatch.CepStreamPlan]]).
 */
final class StreamTreeFunction(
    spec: TreeStreamSpec,
    input: Seq[Attribute],
    eventTime: Attribute,
    partitionBy: Seq[Attribute],
    description: String,
    signature: QuerySignature)
  extends KeyedStreamFunction(input, eventTime, partitionBy, description) {

  import spec._

  @transient private lazy val rowOrdering = new InterpretedOrdering(physicalOrder, input)
  @transient private lazy val windows = new RunningWindowColumns(windowColumns, input, orderKeys)
  @transient private lazy val prepared: Seq[Attribute] = input ++ windows.attributes
  @transient private lazy val keysPresent = TaskPredicates.compile(
    orderKeys.map(IsNotNull(_): Expression).reduceOption(And).getOrElse(Literal(true)), prepared)
  // Alternatives alone, or sharing tree nodes (patterns planned together): one state per unit.
  @transient private lazy val units =
    new TreeUnits(TreeTask(alternatives, prepared, order, lo, hi, window, narrowByOrder, maxBuffered))
  // A match row ends with the columns of `StreamTreeFunction.statistics` (false: a match).
  @transient private lazy val writers: Array[UnsafeProjection] = alternatives.map(a =>
    UnsafeProjection.create(a.columns ++ Seq(Literal(false), Literal(0L), Literal(0L), Literal(0L)),
      a.schema(partitionBy))).toArray
  @transient private lazy val width = alternatives.head.columns.length
  @transient private lazy val out = new java.util.ArrayList[InternalRow]()
  @transient private lazy val unnumbered = new java.util.ArrayList[UnsafeRow]()
  @transient private lazy val keyed = new JoinedRow
  @transient private lazy val spanned = new JoinedRow
  @transient private lazy val span = new GenericInternalRow(2)
  @transient private lazy val noKey = new GenericInternalRow(0)
  @transient private var currentKey: InternalRow = _
  // Alternatives that can bind the same rows: a binding is written once, told by the ids of
  // its rows. A duplicate comes by the time the window of the first one's first row has
  // passed (when a held match of another alternative is released), not later.
  @transient private lazy val idsOf: UnsafeProjection =
    if (distinctBy.isEmpty) null
    else UnsafeProjection.create(distinctBy.map(i =>
        BoundReference(i, alternatives.head.columns(i).dataType, nullable = true)))
  @transient private lazy val written = new java.util.HashMap[UnsafeRow, java.lang.Long]()
  @transient private lazy val emits: Array[Array[PartialMatch => Unit]] = units.byUnit(alternatives.indices.map {
    t => (m: PartialMatch) =>
      {
        span.setLong(0, m.lo)
        span.setLong(1, m.hi)
        val row = writers(t)(keyed(currentKey, spanned(units.rowOf(t, m), span))).copy()
        val first = idsOf == null || written.putIfAbsent(idsOf(row).copy(), m.lo + window) == null
        if (first) { if (numbering.isEmpty) out.add(row) else unnumbered.add(row) }
        ()
      }
  }.toArray)
  // The batch query's order of matches for MATCH_NUMBER(): by the variables' positions.
  @transient private lazy val byPositions: Ordering[UnsafeRow] = new Ordering[UnsafeRow] {
    private val order = numbering.map(_.order.toArray).getOrElse(Array.emptyIntArray)
    private val arrays = numbering.map(_.arrays.toArray).getOrElse(Array.emptyBooleanArray)
    override def compare(a: UnsafeRow, b: UnsafeRow): Int = {
      var c = 0
      var i = 0
      while (c == 0 && i < order.length) {
        val k = order(i)
        c = if (a.isNullAt(k)) { if (b.isNullAt(k)) 0 else 1 } // NULLs last
        else if (b.isNullAt(k)) -1
        else if (arrays(i)) comparePositions(a.getArray(k), b.getArray(k))
        else java.lang.Long.compare(a.getLong(k), b.getLong(k))
        i += 1
      }
      c
    }
    // A closure's rows' positions (structs of one long), row by row; a prefix first.
    private def comparePositions(x: ArrayData, y: ArrayData): Int = {
      var c = 0
      var j = 0
      while (c == 0 && j < x.numElements() && j < y.numElements()) {
        c = java.lang.Long.compare(x.getStruct(j, 1).getLong(0), y.getStruct(j, 1).getLong(0))
        j += 1
      }
      if (c != 0) c else Integer.compare(x.numElements(), y.numElements())
    }
  }
  @transient private lazy val describeCurrent: () => String = () => describeKey()
  // What decoding checks a state against: the signature, and the trees (in the description).
  @transient private lazy val query = (signature, description)

  // Each alternative's (or shared) tree state names its partial matches' entries.
  override def keepsEntries: Boolean = TreeEntryCodec.fits(units.newStates())

  override def process(key: InternalRow, values: Iterator[Any], state: KeyStateAccess): Iterator[Any] = {
    stateBudget
    val saved = TreeKeyState.load(state, query, units.fits, signature)
      .getOrElse(new TreeKeyState(Array.empty, windows.start(), units.newStates()))
    val arrived = arrivals(values)
    val watermark = EventTimeRelease.watermarkMicros(state)
    val (ready, waiting) =
      EventTimeRelease.release(saved.waiting.iterator, arrived, timeOrdinal, state)
    currentKey = if (partitionBy.isEmpty) noKey else key
    out.clear()
    unnumbered.clear()
    unnumbered.addAll(java.util.Arrays.asList(saved.unnumbered: _*))
    written.clear()
    saved.written.indices.foreach(i => written.put(saved.written(i), saved.writtenUntil(i)))
    val createdBefore = saved.trees.iterator.map(_.created.sum).sum
    // A key whose time to live has passed has no row waiting: the watermark passed them all.
    val ending = state.endsPartition && waiting.isEmpty
    windows.foreach(saved.window, ready.sorted(rowOrdering), ending) { row =>
      if (keysPresent.eval(row)) units.add(saved.trees, row, emits, describeCurrent)
    }
    // Every row up to the watermark is in (but those held back for NEXT, which wait for
    // the rows after them): windows that ended by then are closed. (Under WITHIN n ROWS a
    // window closes only with later rows.)
    if (!rowsWindow) {
      val pending = saved.window.pending
      val in = if (pending.isEmpty) watermark else math.min(watermark, pending.head.getLong(timeOrdinal) - 1)
      units.close(saved.trees, in, emits, describeCurrent)
    }
    // The end of the key's partition: what the batch query writes at a partition's end.
    if (ending) units.finish(saved.trees, emits, describeCurrent)
    numbering.foreach(number(saved, _, ending))
    if (ending) state.remove()
    else {
      if (idsOf != null) keepWritten(saved)
      saved.waiting = waiting.toArray
      TreeKeyState.save(state, saved, query, signature)
      val changes = if (rowsWindow) Iterator.empty
      else Iterator(units.nextChange(saved.trees)).filter(_ != Long.MaxValue) ++
      numbering.iterator.flatMap(n => saved.unnumbered.iterator.map(_.getLong(n.firstLo) + window + 1))
      EventTimeRelease.wakeAt(state, waiting.iterator.map(_.getLong(timeOrdinal)) ++ changes)
    }
    // The call's statistics, as one more row (see `StreamTreeFunction.statistics`).
    val statistics = new GenericInternalRow(width + 4)
    statistics.setBoolean(width, true)
    statistics.setLong(width + 1, saved.trees.iterator.map(_.created.sum).sum - createdBefore)
    statistics.setLong(width + 2, saved.trees.iterator.map(_.buffered).sum)
    statistics.setLong(width + 3, state.lateRows)
    out.add(statistics)
    val rows = new Array[InternalRow](out.size)
    out.toArray(rows).iterator
  }

  /**
   * Numbers the written matches no later match can sort before (see [[MatchNumbering]]):
   * those whose first variable's window position the key's events have passed by more than
   * the window, or `all` at the key's end. The others wait in the key's state.
   */
  private def number(saved: TreeKeyState, n: MatchNumbering, all: Boolean): Unit = {
    val reached = saved.trees(0).lastPosition
    val (ready, later) = unnumbered.toArray(new Array[UnsafeRow](0))
      .partition(row => all || row.getLong(n.firstLo) + window < reached)
    ready.sorted(byPositions).foreach { row =>
      saved.numbered += 1
      row.setLong(n.number, saved.numbered)
      out.add(row)
    }
    saved.unnumbered = later
  }

  /** Keeps the ids of the bindings written whose duplicates may still come. */
  private def keepWritten(saved: TreeKeyState): Unit = {
    val reached = saved.trees.iterator.map(_.lastPosition).min
    val kept = new java.util.ArrayList[java.util.Map.Entry[UnsafeRow, java.lang.Long]]()
    written.entrySet().forEach(e => if (e.getValue >= reached) kept.add(e))
    saved.written = Array.tabulate(kept.size)(i => kept.get(i).getKey)
    saved.writtenUntil = Array.tabulate(kept.size)(i => kept.get(i).getValue.longValue)
  }

  private def describeKey(): String =
    if (partitionBy.isEmpty) "the input (no PARTITION BY)" else describe(currentKey)
}

object StreamTreeFunction {

  /**
   * The columns after the match columns of every row the function writes: whether the row
   * is a call's statistics instead of a match, the partial matches the call created, those
   * its key buffers after it, and the rows dropped as late before it
   * ([[KeyStateAccess.lateRows]]). Each call writes one statistics row; the plan sums them
   * into the query progress's observed metrics and drops them.
   */
  def statistics(): Seq[Attribute] = Seq(
    AttributeReference("#statistics", BooleanType, nullable = false)(),
    AttributeReference("#created", LongType, nullable = false)(),
    AttributeReference("#buffered", LongType, nullable = false)(),
    AttributeReference("#late", LongType, nullable = false)())
}
