package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.streaming.{ExpiredTimerInfo, OutputMode, StatefulProcessor, TimeMode, TimerValues, TTLConfig, ValueState}
import org.apache.spark.sql.types.StructType

/**
 * A streaming MATCH_RECOGNIZE function run by Spark's `transformWithState` operator, the
 * stateful operator Real-Time Mode admits. The key's state is the function's own (the same
 * bytes `flatMapGroupsWithState` keeps) in the value state `match_recognize`; the function's
 * call-backs are event-time timers.
 *
 * `arrivalOrder` (Real-Time Mode): waiting for the watermark would hold every row for
 * seconds, so a key's rows are matched as they arrive, each chunk in ORDER BY order, and a
 * match is written the moment it is decided. A row before the latest event time its key has
 * matched cannot join the matches already decided: it is late and dropped. That time is the
 * value state `arrival_horizon`.
 */
final class MatchRecognizeProcessor(
    function: KeyedStreamFunction,
    keySchema: StructType,
    arrivalOrder: Boolean)
  extends StatefulProcessor[Row, Any, Any] {

  @transient private var state: ValueState[Array[Byte]] = _
  @transient private var horizon: ValueState[Long] = _
  @transient private lazy val toKey = CatalystTypeConverters.createToCatalystConverter(keySchema)

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    state = getHandle.getValueState[Array[Byte]]("match_recognize", Encoders.BINARY, TTLConfig.NONE)
    if (arrivalOrder) {
      horizon = getHandle.getValueState[Long]("arrival_horizon", Encoders.scalaLong, TTLConfig.NONE)
    }
  }

  override def handleInputRows(key: Row, rows: Iterator[Any], timers: TimerValues): Iterator[Any] =
    run(key, if (arrivalOrder) notLate(rows) else rows, timers)

  override def handleExpiredTimer(key: Row, timers: TimerValues, expired: ExpiredTimerInfo): Iterator[Any] =
    run(key, Iterator.empty, timers)

  // Rows of the current call dropped as late (set before the function runs).
  @transient private var late = 0L

  private def run(key: Row, rows: Iterator[Any], timers: TimerValues): Iterator[Any] = {
    val output = function.process(toKey(key).asInstanceOf[InternalRow], rows, new Access(timers))
    late = 0L
    output
  }

  /** The rows at or after the key's latest matched event time; that time moves on. */
  private def notLate(rows: Iterator[Any]): Iterator[Any] = {
    val before = if (horizon.exists()) horizon.get() else Long.MinValue
    var latest = before
    val kept = rows.filter { row =>
      function.eventTimeOf(row) match {
        case Some(t) if t < before => late += 1; false
        case Some(t) => latest = math.max(latest, t); true
        case None => true // dropped by the function, as in micro-batches
      }
    }.toVector
    if (latest != before) horizon.update(latest)
    kept.iterator
  }

  private final class Access(timers: TimerValues) extends KeyStateAccess {

    override def load(): Option[Array[Byte]] = if (state.exists()) Some(state.get()) else None

    override def save(bytes: Array[Byte]): Unit = state.update(bytes)

    override def watermarkMs: Long = math.max(timers.getCurrentWatermarkInMs(), 0L)

    override def lateRows: Long = late

    override def releaseUpToMicros: Long =
      if (arrivalOrder) Long.MaxValue else Math.multiplyExact(watermarkMs, 1000L)

    // An event-time timer at T fires once the watermark reaches T. A key keeps at most one,
    // after the current watermark: one at or before it would fire again in this batch (and
    // the timer firing now is deleted when its call returns).
    override def wakeAt(micros: Option[Long]): Unit = {
      val at = micros.map(m => math.max(Math.floorDiv(m + 999L, 1000L), watermarkMs + 1))
      getHandle.listTimers().filterNot(t => at.contains(t)).toList.foreach(getHandle.deleteTimer)
      at.foreach(t => if (!getHandle.listTimers().contains(t)) getHandle.registerTimer(t))
    }
  }
}
