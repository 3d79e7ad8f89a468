package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BasePredicate, GenericInternalRow, JoinedRow, Predicate}
import org.apache.spark.sql.matchrecognize.execution.RowBuffer

/**
 * The DEFINE conditions of the pattern variables, compiled for one task. A condition that
 * reads only the tested row and its neighbours is evaluated once per row and shared by all
 * threads; otherwise the matcher's view of the thread (with the row tentatively mapped to
 * the variable) supplies its slots. Conjuncts of the first kind are checked before the
 * others (DEFINE C AS C.kind = 'x' AND C.price > A.price tests the cheap part first).
 */
private[execution] final class LabelConditions(
    spec: MatcherSpec,
    buffer: RowBuffer,
    partitionIndex: Int,
    running: RunningAggregates = null) {

  private val conditions: Array[Condition] = spec.defines.zipWithIndex.map {
    case (d, label) => d.map(new Condition(_, label)).orNull
  }.toArray
  private val filters: Array[Condition] = spec.defines.zipWithIndex.map {
    case (d, label) => d.flatMap(_.rowFilter).map(new Condition(_, label)).orNull
  }.toArray

  // Results of the conditions that depend on the row only, valid for the row at `cachedAt`.
  private val cached = new Array[Boolean](conditions.length * 2)
  private val cachedAt = Array.fill(conditions.length * 2)(-1L)

  /** Forgets cached results (positions start again at 0 in the next partition). */
  def reset(): Unit = java.util.Arrays.fill(cachedAt, -1L)

  /**
   * Does the DEFINE condition of `label` hold for the row at `pos`, seen from the view
   * `views` gives? The view is asked for only when the condition reads the match (most
   * conditions are answered from the row or the per-row cache), and without a closure
   * allocated per call: this runs for every thread at every row.
   */
  def holds(label: Int, pos: Long, input: InternalRow, views: ViewSource): Boolean = {
    val condition = conditions(label)
    if (condition == null) return true
    val filter = filters(label)
    if (filter != null && !filter.holds(label * 2 + 1, pos, input, views)) false
    else condition.holds(label * 2, pos, input, views)
  }

  /**
   * Could the DEFINE condition of `label` hold for the row at `pos`, whatever the match
   * before it? The condition when it reads only rows, else its conjuncts that do, else yes.
   */
  def mayHold(label: Int, pos: Long, input: InternalRow): Boolean = {
    val condition = conditions(label)
    if (condition == null) true
    else if (condition.readsRowsOnly) condition.holds(label * 2, pos, input, null)
    else {
      val filter = filters(label)
      filter == null || !filter.readsRowsOnly || filter.holds(label * 2 + 1, pos, input, null)
    }
  }

  private final class Condition(d: DefineSpec, label: Int) {
    private val rowOnly = d.historyFree && !d.usesMatchNumber
    private val neighbourPredicate: BasePredicate = d.neighbourCondition.map(create).orNull
    private val neighbours: NeighbourRows =
      if (neighbourPredicate == null) null
      else new NeighbourRows(d.neighbours.toArray, spec.inputAttributes.length, buffer)
    private val predicate: BasePredicate = if (neighbourPredicate != null) null else create(d.condition)
    private val slots: SlotEvaluator =
      if (d.slots.isEmpty || neighbourPredicate != null) null
      else new SlotEvaluator(d.slots, spec.rowAttributes, spec.labels, buffer, running)
    private val joined = new JoinedRow

    /** Whether the condition reads the tested row and its neighbours only (no view of the match). */
    val readsRowsOnly: Boolean = d.readsRowsOnly

    private def create(e: org.apache.spark.sql.catalyst.expressions.Expression): BasePredicate = {
      val p = Predicate.create(e, Nil)
      p.initialize(partitionIndex)
      p
    }

    def holds(cacheSlot: Int, pos: Long, input: InternalRow, views: ViewSource): Boolean = {
      if (rowOnly && cachedAt(cacheSlot) == pos) return cached(cacheSlot)
      val result =
        if (neighbourPredicate != null) neighbourPredicate.eval(neighbours.at(pos, input))
        else if (slots == null) predicate.eval(input)
        else {
          val v = views.view(label, pos)
          predicate.eval(joined(input, slots.fill(v, v)))
        }
      if (rowOnly) { cached(cacheSlot) = result; cachedAt(cacheSlot) = pos }
      result
    }
  }
}

/**
 * Supplies the view of the match a DEFINE condition of `label` reads, with the row at `pos`
 * tentatively mapped to it.
 */
private[execution] trait ViewSource {
  def view(label: Int, pos: Long): MatchView
}

/**
 * The tested row and its neighbours at fixed distances, side by side in one row (a chain
 * of JoinedRows); a neighbour outside the partition reads as all NULLs.
 */
private[execution] final class NeighbourRows(offsets: Array[Int], width: Int, buffer: RowBuffer) {
  private val nulls = new GenericInternalRow(width)
  private val joins = Array.fill(math.max(0, offsets.length - 1))(new JoinedRow)

  def at(pos: Long, current: InternalRow): InternalRow = {
    var row: InternalRow = current
    var i = 1
    while (i < offsets.length) {
      val neighbour = buffer.get(pos + offsets(i))
      row = joins(i - 1)(row, if (neighbour == null) nulls else neighbour)
      i += 1
    }
    row
  }
}
