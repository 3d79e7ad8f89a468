package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.streaming.GroupState

/**
 * Where a streaming MATCH_RECOGNIZE function finds one key's state and the event time, and
 * asks to be called back: Spark's `flatMapGroupsWithState` ([[GroupStateAccess]]) or
 * `transformWithState` (see [[MatchRecognizeProcessor]]). The functions see only this, so
 * that both operators run the same matching.
 */
trait KeyStateAccess {

  /** The key, which names its entry among the states kept decoded ([[DecodedStates]]). */
  def key: Any

  /** The key's saved state, if it has one. */
  def load(): Option[Array[Byte]]

  def save(state: Array[Byte]): Unit

  /**
   * Where the key's state can keep entries beside its value ([[KeyEntries]]), if the
   * operator has them (`transformWithState`); [[remove]] drops them too.
   */
  def entries: Option[KeyEntries] = None

  /**
   * The key's saved state as `decode` reads it, or, when these are the very bytes last
   * saved with `save(bytes, decoded, query)` by the same `query`, that object, kept decoded
   * ([[DecodedStates]]). `query` names what decoding checks the bytes against (the query's
   * signature and plan), so that a changed query still has its state checked. The caller
   * owns what it gets either way.
   */
  final def loadDecoded[T <: AnyRef](query: AnyRef, decode: Array[Byte] => T): Option[T] =
    load().map(bytes => DecodedStates.shared.take[T](key, query, bytes).getOrElse(decode(bytes)))

  /**
   * Saves `bytes`, the encoding of `decoded` (with the key's [[entries]], if any), which the
   * caller leaves as it is from now on. `weight` is the encoded size of all the key holds.
   */
  final def save(bytes: Array[Byte], decoded: AnyRef, query: AnyRef, weight: Long): Unit = {
    save(bytes)
    DecodedStates.shared.put(key, query, bytes, decoded, weight)
  }

  /** The event-time watermark in milliseconds: no later row is at or before it. */
  def watermarkMs: Long

  /**
   * Rows up to this event time (microseconds) are released to the matcher in ORDER BY order;
   * later ones wait in the key's state. The watermark in micro-batches; in arrival order
   * (Real-Time Mode), the key's latest event time less the reordering wait, or the watermark
   * if later (see [[MatchRecognizeProcessor]]).
   */
  def releaseUpToMicros: Long

  /**
   * The key's rows dropped as late before this call: by arrival order (Real-Time Mode), or
   * when late rows are kept (see [[MatchRecognizeProcessor]]). Otherwise Spark drops rows
   * behind the watermark before the operator, and counts them itself.
   */
  def lateRows: Long = 0L

  /**
   * Asks to be called again once the watermark reaches `micros` (an event time), replacing
   * the previous request; `None` cancels it.
   */
  def wakeAt(micros: Option[Long]): Unit

  /**
   * Whether this call ends the key's partition: its state's time to live (in event time,
   * after its latest row) has passed. The function then decides what the end of a partition
   * decides and calls [[remove]] instead of [[save]].
   */
  def endsPartition: Boolean = false

  /** Drops the key's state and its call-back. */
  def remove(): Unit
}

/** A key's state in Spark's `flatMapGroupsWithState`: one value and an event-time timeout. */
final class GroupStateAccess(state: GroupState[Array[Byte]], override val key: Any) extends KeyStateAccess {

  override def load(): Option[Array[Byte]] = state.getOption

  override def save(bytes: Array[Byte]): Unit = state.update(bytes)

  override def watermarkMs: Long = state.getCurrentWatermarkMs()

  override def releaseUpToMicros: Long = Math.multiplyExact(watermarkMs, 1000L)

  override def remove(): Unit = {
    state.remove()
    DecodedStates.shared.remove(key)
  }

  // A timeout fires when the watermark passes its timestamp, which must not be behind the
  // watermark; without a new one set, the key is not called back.
  override def wakeAt(micros: Option[Long]): Unit = micros.foreach { at =>
    val ms = Math.floorDiv(at + 999L, 1000L)
    state.setTimeoutTimestamp(math.max(math.max(ms - 1, state.getCurrentWatermarkMs()), 1L))
  }
}
