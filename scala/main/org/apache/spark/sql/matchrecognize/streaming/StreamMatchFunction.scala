package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, GenericInternalRow, InterpretedOrdering, JoinedRow, SortOrder}
import org.apache.spark.sql.matchrecognize.execution.automaton.MatcherSpec
import org.apache.spark.sql.types.{BooleanType, LongType}

/**
 * The function Spark's stateful operator calls for each PARTITION BY key with the key's new
 * rows of a micro-batch (or none, when the watermark passed the time the key asked to be
 * called back at). It keeps the rows not yet released (see [[EventTimeRelease]]), releases
 * the others in ORDER BY order to the [[ResumableMatcher]], and returns the output rows
 * decided now; the key's [[KeyState]] lives in Spark's state store (and, while the key keeps
 * its automaton, in memory, see [[ResumableMatcher]]).
 *
 * Output rows leave as the struct of the node's columns followed by the columns of
 * [[StreamMatchFunction.statistics]]; each call also writes one statistics row.
 */
final class StreamMatchFunction(
    spec: MatcherSpec,
    input: Seq[Attribute],
    ordering: Seq[SortOrder],
    eventTime: Attribute,
    keys: Seq[Attribute],
    description: String,
    signature: QuerySignature)
  extends KeyedStreamFunction(input, eventTime, keys, description) {

  @transient private lazy val rowOrdering = new InterpretedOrdering(ordering, input)
  // One matcher per task (each task deserializes its own copy of this function), reset for
  // each key; `currentKey` names the key in its errors.
  @transient private var currentKey: InternalRow = _
  // What decoding checks a state against: the signature and the input's width; and what a
  // kept automaton was compiled from, so that only the same query continues it.
  @transient private lazy val query = (signature, input.length, spec.toString.intern())
  @transient private lazy val matcher =
    new ResumableMatcher(spec, TaskContext.getPartitionId(), () => describe(currentKey))

  // Rows kept in entries of what each call released in `transformWithState` ([[KeyRowEntries]]).
  override def keepsEntries: Boolean = true

  override def process(key: InternalRow, values: Iterator[Any], state: KeyStateAccess): Iterator[Any] = {
    stateBudget
    val saved = KeyState.load(state, query, input.length, signature)
      .getOrElse(DecodedKeyState.empty)
    val arrived = arrivals(values)
    val watermarkMicros = EventTimeRelease.watermarkMicros(state)
    val (ready, waiting) =
      EventTimeRelease.release(saved.state.waiting.iterator, arrived, timeOrdinal, state)
    currentKey = key
    // A key whose time to live has passed has no row waiting: the watermark passed them all.
    val ending = state.endsPartition && waiting.isEmpty
    val advanced = matcher.advance(saved.state, saved.kept, ready.sorted(rowOrdering).iterator,
      timeOrdinal, watermarkMicros, ending)
    if (ending) state.remove()
    else {
      KeyState.save(state, saved, advanced.state.copy(waiting = waiting), advanced.kept, query, signature)
      // Called back once the watermark reaches the earliest waiting row, or closes the
      // WITHIN window of the open matches.
      EventTimeRelease.wakeAt(state,
        waiting.iterator.map(_.getLong(timeOrdinal)) ++ advanced.windowsCloseAt.iterator)
    }
    val width = spec.outputExpressions.length
    val isRow = new GenericInternalRow(Array[Any](false, 0L, 0L, 0L))
    val statistics = new GenericInternalRow(width + 4)
    statistics.setBoolean(width, true)
    statistics.setLong(width + 1, advanced.matchesWritten)
    statistics.setLong(width + 2, advanced.peakPartialMatches)
    statistics.setLong(width + 3, state.lateRows)
    advanced.output.iterator.map(row => new JoinedRow(row, isRow): Any) ++ Iterator.single(statistics)
  }
}

object StreamMatchFunction {

  /**
   * The columns after the output columns of every row the function writes: whether the
   * row is a call's statistics instead of output, the matches the call wrote, the most
   * partial matches the key's automaton had alive at once during the call, and the rows
   * dropped as late before it ([[KeyStateAccess.lateRows]]). The plan sums them into the
   * query progress's observed metrics and drops them.
   */
  def statistics(): Seq[Attribute] = Seq(
    AttributeReference("#statistics", BooleanType, nullable = false)(),
    AttributeReference("#matches", LongType, nullable = false)(),
    AttributeReference("#partial", LongType, nullable = false)(),
    AttributeReference("#late", LongType, nullable = false)())
}
