package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.automaton.{AutomatonDriver, MatcherSpec}
import org.apache.spark.sql.matchrecognize.plans.WithinClause

/** What [[ResumableMatcher.advance]] decided: output rows, the new state, and when to call again. */
final case class Advanced(
    output: Seq[InternalRow],
    state: KeyState,
    /** The event time (micros) at which the WITHIN windows of the open matches close, if any. */
    windowsCloseAt: Option[Long],
    /** Matches whose rows were all written by this call. */
    matchesWritten: Long,
    /** The most partial matches (automaton threads) alive at once during this call. */
    peakPartialMatches: Long)

/**
 * Continues the matches of a PARTITION BY key with the rows a micro-batch released, from
 * the key's saved [[KeyState]], and returns the output rows now decided and the new state.
 *
 * The automaton restarts at `resumeAt` over the released rows from there on; since its
 * partial matches are a function of those rows, they come out as they were, and nothing
 * decided before is decided again. Output is what the batch query writes for the same
 * rows, except that a match is held until it is decided without the partition end (a
 * greedy quantifier needs the row after its last). With WITHIN INTERVAL, once the
 * watermark has passed the last row by the window, no later row can join an open match:
 * the matches are decided then, as the next row would decide them.
 */
final class ResumableMatcher(spec: MatcherSpec, partitionIndex: Int, describeKey: () => String) {

  private val windowMicros: Option[Long] = spec.options.within.collect {
    case WithinClause.Interval(micros, _) => micros
  }
  // A match that reads ahead (NEXT) needs the next row itself, not only its time.
  private val closesByTime = windowMicros.isDefined && spec.defineLookAhead == 0 &&
    spec.measureLookAhead == 0

  // Built once and reset for each key, as the batch operator resets it per partition. A
  // match is decided as soon as its last row is read, not at the next row (no `$` here).
  private val driver = new AutomatonDriver(spec, partitionIndex, describeKey, decideEarly = true)
  private val buffer = driver.buffer
  private val writer = driver.writer
  private val matcher = driver.matcher

  /**
   * `endPartition`: no row of the key comes after these (its state's time to live has
   * passed): every open match is decided as the end of a partition decides it.
   */
  def advance(state: KeyState, newRows: Iterator[UnsafeRow], timeOrdinal: Int,
      watermarkMicros: Long, endPartition: Boolean = false): Advanced = {
    driver.resume(state.base, state.resumeAt, state.matchesBefore, state.writtenUpTo)
    // The saved rows were offered before, and no output they gave is written again: a
    // match that was decided moved `resumeAt` past its start.
    state.released.foreach(driver.add)
    newRows.foreach(driver.add)
    if (endPartition) driver.decideAll()

    var resumeAt =
      math.min(math.min(matcher.firstUndecided, writer.oldestNeeded), driver.processedUpTo)
    var windowsCloseAt: Option[Long] = None
    if (closesByTime && resumeAt < buffer.end && !endPartition) {
      val lastTime = buffer.get(buffer.end - 1).getLong(timeOrdinal)
      val closeAt = lastTime + windowMicros.get
      if (watermarkMicros >= closeAt) {
        // Every later row is past every open match's window: decide them now.
        driver.decideAll()
        resumeAt = buffer.end
      } else windowsCloseAt = Some(closeAt)
    }

    buffer.trimBefore(resumeAt - spec.maxLookBehind)
    val kept = new Array[UnsafeRow](buffer.size)
    var i = 0
    while (i < kept.length) {
      kept(i) = buffer.get(buffer.firstRetained + i).copy()
      i += 1
    }
    val next = KeyState(buffer.firstRetained, resumeAt, matcher.decidedMatches - writer.waiting,
      writer.writtenUpTo, kept.toIndexedSeq, state.waiting)
    val rows = new Array[InternalRow](driver.out.size)
    driver.out.toArray(rows)
    Advanced(rows.toSeq, next, windowsCloseAt, next.matchesBefore - state.matchesBefore,
      matcher.peakLiveThreads)
  }
}
