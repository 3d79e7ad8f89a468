package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.{Encoders, Row}
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.streaming.{ExpiredTimerInfo, ListState, MapState, OutputMode, StatefulProcessor, TimeMode, TimerValues, TTLConfig, ValueState}
import org.apache.spark.sql.types.StructType

/**
 * A streaming MATCH_RECOGNIZE function run by Spark's `transformWithState` operator, the
 * stateful operator Real-Time Mode admits. The key's state is the function's own (the same
 * bytes `flatMapGroupsWithState` keeps) in the value state `match_recognize`; the function's
 * call-backs are event-time timers. A function that keeps its state per entry
 * ([[KeyedStreamFunction.keepsEntries]]) has the map states `held_rows` and `partial_matches`
 * beside it ([[KeyEntries]]).
 *
 * `arrivalOrder` (Real-Time Mode): waiting for the watermark would hold every row for
 * seconds, so a key's rows are matched as they arrive, and a match is written the moment it
 * is decided. A row waits only until the key's latest event time (the value state
 * `arrival_horizon`) is `reorderMicros` past it, or the watermark is; rows are released in
 * ORDER BY order. A row further behind the key's latest than that may be behind rows
 * already released: it is late and dropped. (A row behind the watermark never arrives:
 * Spark drops it before the operator. Every row released by the watermark is therefore at
 * or before any row still to come. With late rows kept, such a row does arrive, and
 * `released_to` below makes it late.)
 *
 * `stateTtlMicros` (when above 0): the value state `last_row_time` keeps the key's latest
 * event time; once the watermark is that much past it, a timer ends the key's partition
 * (see [[KeyStateAccess.endsPartition]]).
 *
 * `lateRowsKept` (when above 0): the operator sees every row (see [[LateRowsInput]]) and
 * decides lateness itself. The value state `released_to` keeps the event time up to which
 * the key's rows have been released to the matcher; a row before it arrives after rows it
 * precedes were matched, so it is late: dropped, counted, and the most recent
 * `lateRowsKept` of them kept in the list state `late_rows` (the input columns), where the
 * state data source reads them.
 */
final class MatchRecognizeProcessor(
    function: KeyedStreamFunction,
    keySchema: StructType,
    arrivalOrder: Boolean,
    reorderMicros: Long = 0L,
    stateTtlMicros: Long = 0L,
    lateRowsKept: Int = 0)
  extends StatefulProcessor[Row, Any, Any] {

  @transient private var state: ValueState[Array[Byte]] = _
  @transient private var horizon: ValueState[Long] = _
  @transient private var lastRow: ValueState[Long] = _
  @transient private var releasedTo: ValueState[Long] = _
  @transient private var lateKept: ListState[Row] = _
  @transient private var entries: KeyEntries = _
  @transient private lazy val toKey = CatalystTypeConverters.createToCatalystConverter(keySchema)

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit = {
    knownTimers.clear()
    knownHorizons.clear()
    state = getHandle.getValueState[Array[Byte]]("match_recognize", Encoders.BINARY, TTLConfig.NONE)
    if (function.keepsEntries) {
      entries = new MapEntries(
        getHandle.getMapState[Long, Array[Byte]]("held_rows", Encoders.scalaLong, Encoders.BINARY, TTLConfig.NONE),
        getHandle.getMapState[Long, Array[Byte]]("partial_matches", Encoders.scalaLong, Encoders.BINARY,
          TTLConfig.NONE))
    }
    if (arrivalOrder) {
      horizon = getHandle.getValueState[Long]("arrival_horizon", Encoders.scalaLong, TTLConfig.NONE)
    }
    if (stateTtlMicros > 0) {
      lastRow = getHandle.getValueState[Long]("last_row_time", Encoders.scalaLong, TTLConfig.NONE)
    }
    if (lateRowsKept > 0) {
      releasedTo = getHandle.getValueState[Long]("released_to", Encoders.scalaLong, TTLConfig.NONE)
      val rows = ExpressionEncoder(RowEncoder.encoderFor(function.inputSchema))
      lateKept = getHandle.getListState[Row]("late_rows", rows, TTLConfig.NONE)
    }
  }

  override def handleInputRows(key: Row, rows: Iterator[Any], timers: TimerValues): Iterator[Any] = {
    val kept = if (arrivalOrder || lateRowsKept > 0) notLate(key, rows) else rows
    run(key, if (stateTtlMicros > 0) keepingLastRowTime(kept) else kept, timers)
  }

  override def handleExpiredTimer(key: Row, timers: TimerValues, expired: ExpiredTimerInfo): Iterator[Any] = {
    // Spark deletes the timer firing now once this call returns.
    knownTimers.get(key).foreach(known => knownTimers(key) = known.filterNot(_ == expired.getExpiryTimeInMs()))
    run(key, Iterator.empty, timers)
  }

  /**
   * The timers of keys this task has seen, as it last left them, so that a call does not
   * scan the timer state for its key's (in Real-Time Mode a call is a row). Only this task
   * changes its keys' timers while it runs; the first call of a key lists them.
   */
  @transient private lazy val knownTimers = new KeyMemory[Row, List[Long]](MatchRecognizeProcessor.KnownKeys)

  private def timersOf(key: Row): List[Long] = knownTimers(key)(getHandle.listTimers().toList)

  /**
   * The latest event time of keys this task has seen (`arrival_horizon`), for the same
   * reason: in Real-Time Mode the value state would be read for each row.
   */
  @transient private lazy val knownHorizons = new KeyMemory[Row, java.lang.Long](MatchRecognizeProcessor.KnownKeys)

  // Rows of the current call dropped as late (set before the function runs).
  @transient private var late = 0L

  private def run(key: Row, rows: Iterator[Any], timers: TimerValues): Iterator[Any] = {
    val access = new Access(key, timers)
    if (lateRowsKept > 0) {
      // Recorded first: the call releases rows up to here, and may remove the key's state.
      val bound = access.releaseUpToMicros
      if (!releasedTo.exists() || releasedTo.get() < bound) releasedTo.update(bound)
    }
    val output = function.process(toKey(key).asInstanceOf[InternalRow], rows, access)
    late = 0L
    output
  }

  /** The rows, after recording the latest of their event times in `last_row_time`. */
  private def keepingLastRowTime(rows: Iterator[Any]): Iterator[Any] = {
    val all = rows.toVector
    val times = all.iterator.flatMap(function.eventTimeOf)
    if (times.hasNext) {
      val latest = times.max
      if (!lastRow.exists() || lastRow.get() < latest) lastRow.update(latest)
    }
    all.iterator
  }

  /** When the key's state expires: its latest row's event time plus the time to live. */
  private def expiresAt: Option[Long] =
    if (stateTtlMicros > 0 && lastRow.exists()) {
      val at = lastRow.get() + stateTtlMicros
      Some(if (at < lastRow.get()) Long.MaxValue else at)
    } else None

  /** The key's latest event time, Long.MinValue before its first row. */
  private def latest(key: Row): Long =
    knownHorizons(key)(if (horizon.exists()) horizon.get() else Long.MinValue)

  /** `latest` less the reordering wait: rows before it may be behind rows released. */
  private def reorderedFrom(latest: Long): Long =
    if (latest == Long.MinValue) latest else latest - reorderMicros

  /**
   * The rows not late: in arrival order, not behind the key's latest event time by more
   * than the wait (and that time moves on); keeping late rows, not behind `released_to`.
   */
  private def notLate(key: Row, rows: Iterator[Any]): Iterator[Any] = {
    val before = if (arrivalOrder) latest(key) else Long.MinValue
    val released = if (lateRowsKept > 0 && releasedTo.exists()) releasedTo.get() else Long.MinValue
    val lateBefore = math.max(reorderedFrom(before), released)
    var latestNow = before
    val lateRows = Vector.newBuilder[Row]
    val kept = rows.filter { row =>
      function.eventTimeOf(row) match {
        case Some(t) if t < lateBefore =>
          late += 1
          if (lateRowsKept > 0) lateRows += function.externalRowOf(row)
          false
        case Some(t) => latestNow = math.max(latestNow, t); true
        case None => true // dropped by the function, as in micro-batches
      }
    }.toVector
    if (arrivalOrder && latestNow != before) {
      horizon.update(latestNow)
      knownHorizons(key) = latestNow
    }
    keep(lateRows.result())
    kept.iterator
  }

  /** Appends `rows` to `late_rows`, which keeps the most recent `lateRowsKept`. */
  private def keep(rows: Vector[Row]): Unit = if (rows.nonEmpty) {
    lateKept.appendList(rows.takeRight(lateRowsKept).toArray)
    val all = lateKept.get().toVector
    if (all.size > lateRowsKept) lateKept.put(all.takeRight(lateRowsKept).toArray)
  }

  private final class Access(override val key: Row, timers: TimerValues) extends KeyStateAccess {

    // One read: a value state's `get` is null when it has none, and `exists` reads it too.
    override def load(): Option[Array[Byte]] = Option(state.get())

    override def save(bytes: Array[Byte]): Unit = state.update(bytes)

    override def entries: Option[KeyEntries] = Option(MatchRecognizeProcessor.this.entries)

    override def watermarkMs: Long = math.max(timers.getCurrentWatermarkInMs(), 0L)

    override def lateRows: Long = late

    override def releaseUpToMicros: Long = {
      val watermark = Math.multiplyExact(watermarkMs, 1000L)
      if (arrivalOrder) math.max(watermark, reorderedFrom(latest(key))) else watermark
    }

    // An event-time timer at T fires once the watermark reaches T. A key keeps at most one,
    // after the current watermark: one at or before it would fire again in this batch (and
    // the timer firing now is deleted when its call returns).
    override def endsPartition: Boolean =
      expiresAt.exists(at => Math.multiplyExact(watermarkMs, 1000L) >= at)

    override def remove(): Unit = {
      state.clear()
      DecodedStates.shared.remove(key)
      entries.foreach { e => e.rows.clear(); e.matches.clear() }
      if (lastRow != null) lastRow.clear()
      if (releasedTo != null) { releasedTo.clear(); lateKept.clear() }
      timersOf(key).foreach(getHandle.deleteTimer)
      knownTimers(key) = Nil
    }

    // The state's expiry is one more reason to be called back.
    override def wakeAt(micros: Option[Long]): Unit = {
      val when = (micros ++ expiresAt).reduceOption((a: Long, b: Long) => math.min(a, b))
      val at = when.map(m => math.max(Math.floorDiv(m + 999L, 1000L), watermarkMs + 1))
      val registered = timersOf(key)
      if (registered != at.toList) {
        registered.filterNot(t => at.contains(t)).foreach(getHandle.deleteTimer)
        at.foreach(t => if (!registered.contains(t)) getHandle.registerTimer(t))
        knownTimers(key) = at.toList
      }
    }
  }
}

private object MatchRecognizeProcessor {

  /**
   * The most keys whose timers (or latest event times) a task keeps in memory; past it, it
   * forgets them all.
   */
  val KnownKeys = 100000
}

/** A key's [[KeyEntries]] in two of `transformWithState`'s map states. */
private final class MapEntries(rowState: MapState[Long, Array[Byte]], matchState: MapState[Long, Array[Byte]])
  extends KeyEntries {

  override val rows: KeyEntries.Map = new Entries(rowState)
  override val matches: KeyEntries.Map = new Entries(matchState)

  private final class Entries(map: MapState[Long, Array[Byte]]) extends KeyEntries.Map {
    override def put(id: Long, bytes: Array[Byte]): Unit = map.updateValue(id, bytes)
    override def remove(id: Long): Unit = map.removeKey(id)
    override def iterator: Iterator[(Long, Array[Byte])] = map.iterator()
    override def clear(): Unit = map.clear()
  }
}
