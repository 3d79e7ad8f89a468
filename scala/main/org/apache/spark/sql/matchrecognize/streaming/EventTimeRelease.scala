package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.streaming.GroupState

/**
 * The event-time bookkeeping both streaming functions share: which of a key's rows the
 * watermark has released, and when to be called back for a key with no new rows.
 */
object EventTimeRelease {

  /** The watermark in microseconds, the unit of event-time values in rows. */
  def watermarkMicros(state: GroupState[_]): Long =
    Math.multiplyExact(state.getCurrentWatermarkMs(), 1000L)

  /**
   * Splits a key's waiting and newly arrived rows into those the watermark has passed and
   * those that keep waiting. Rows at or before the watermark are final: Spark drops any
   * later row with such a time.
   */
  def release(waiting: Iterator[UnsafeRow], arrived: Iterator[UnsafeRow], timeOrdinal: Int,
      watermarkMicros: Long): (IndexedSeq[UnsafeRow], IndexedSeq[UnsafeRow]) =
    (waiting ++ arrived).toIndexedSeq.partition(_.getLong(timeOrdinal) <= watermarkMicros)

  /**
   * Asks to be called back once the watermark reaches the earliest of `micros`. A timeout
   * fires when the watermark passes its timestamp, which must not be behind the watermark.
   */
  def wakeAt(state: GroupState[_], micros: Iterator[Long]): Unit =
    micros.reduceOption((a: Long, b: Long) => math.min(a, b)).foreach { at =>
      val ms = Math.floorDiv(at + 999L, 1000L)
      state.setTimeoutTimestamp(math.max(math.max(ms - 1, state.getCurrentWatermarkMs()), 1L))
    }
}
