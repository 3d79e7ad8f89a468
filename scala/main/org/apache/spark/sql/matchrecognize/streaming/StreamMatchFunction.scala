package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, GenericInternalRow, InterpretedOrdering, JoinedRow, SortOrder}
import org.apache.spark.sql.catalyst.plans.logical.LogicalGroupState
import org.apache.spark.sql.matchrecognize.execution.automaton.MatcherSpec
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.{BooleanType, LongType}

/**
 * The function Spark's `flatMapGroupsWithState` operator calls for each PARTITION BY key
 * with the key's new rows of a micro-batch (or none, when the watermark passed the time the
 * key asked to be called back at). It keeps the rows the watermark has not passed, releases
 * the others in ORDER BY order to the [[ResumableMatcher]], and returns the output rows
 * decided now; the key's [[KeyState]] lives in Spark's state store.
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
  @transient private lazy val matcher =
    new ResumableMatcher(spec, TaskContext.getPartitionId(), () => describe(currentKey))

  override def apply(key: Any, values: Iterator[Any], group: LogicalGroupState[Any]): Iterator[Any] = {
    val state = group.asInstanceOf[GroupState[Array[Byte]]]
    val saved = if (state.exists) KeyState.decode(state.get, input.length, signature) else KeyState.empty
    val arrived = arrivals(values)
    val watermarkMicros = EventTimeRelease.watermarkMicros(state)
    val (ready, waiting) =
      EventTimeRelease.release(saved.waiting.iterator, arrived, timeOrdinal, watermarkMicros)
    val keyRow = key.asInstanceOf[InternalRow]
    currentKey = keyRow
    val advanced = matcher.advance(saved, ready.sorted(rowOrdering).iterator, timeOrdinal,
      watermarkMicros)
    state.update(KeyState.encode(advanced.state.copy(waiting = waiting), signature))
    // Called back once the watermark reaches the earliest waiting row, or closes the WITHIN
    // window of the open matches.
    EventTimeRelease.wakeAt(state,
      waiting.iterator.map(_.getLong(timeOrdinal)) ++ advanced.windowsCloseAt.iterator)
    val width = spec.outputExpressions.length
    val isRow = new GenericInternalRow(Array[Any](false, 0L, 0L))
    val statistics = new GenericInternalRow(width + 3)
    statistics.setBoolean(width, true)
    statistics.setLong(width + 1, advanced.matchesWritten)
    statistics.setLong(width + 2, advanced.peakPartialMatches)
    advanced.output.iterator.map(row => new JoinedRow(row, isRow): Any) ++ Iterator.single(statistics)
  }
}

object StreamMatchFunction {

  /**
   * The columns after the output columns of every row the function writes: whether the
   * row is a call's statistics instead of output, the matches the call wrote and the most
   * partial matches the key's automaton had alive at once during the call. The plan sums
   * them into the query progress's observed metrics and drops them.
   */
  def statistics(): Seq[Attribute] = Seq(
    AttributeReference("#statistics", BooleanType, nullable = false)(),
    AttributeReference("#matches", LongType, nullable = false)(),
    AttributeReference("#partial", LongType, nullable = false)())
}
