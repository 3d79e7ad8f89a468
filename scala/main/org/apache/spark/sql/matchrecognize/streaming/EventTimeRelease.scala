package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * The event-time bookkeeping both streaming functions share: which of a key's rows are
 * released to the matcher, and when to be called back for a key with no new rows.
 */
object EventTimeRelease {

  /** The watermark in microseconds, the unit of event-time values in rows. */
  def watermarkMicros(state: KeyStateAccess): Long = Math.multiplyExact(state.watermarkMs, 1000L)

  /**
   * Splits a key's waiting and newly arrived rows into those released now and those that
   * keep waiting (see [[KeyStateAccess.releaseUpToMicros]]). Rows at or before the watermark
   * are final: Spark drops any later row with such a time.
   */
  def release(waiting: Iterator[UnsafeRow], arrived: Iterator[UnsafeRow], timeOrdinal: Int,
      state: KeyStateAccess): (IndexedSeq[UnsafeRow], IndexedSeq[UnsafeRow]) = {
    val upTo = state.releaseUpToMicros
    (waiting ++ arrived).toIndexedSeq.partition(_.getLong(timeOrdinal) <= upTo)
  }

  /** Asks to be called back once the watermark reaches the earliest of `micros`. */
  def wakeAt(state: KeyStateAccess, micros: Iterator[Long]): Unit =
    state.wakeAt(micros.reduceOption((a: Long, b: Long) => math.min(a, b)))
}
