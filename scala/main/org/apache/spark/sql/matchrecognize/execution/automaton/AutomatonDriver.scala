package org.apache.spark.sql.matchrecognize.execution.automaton

import java.util.ArrayDeque

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.RowBuffer

/**
 * The automaton over the rows of one MATCH_RECOGNIZE partition as they arrive, the one loop
 * of the batch operator ([[PartitionProcessor]]) and of a stream's key
 * (`streaming.ResumableMatcher`): each row is buffered, offered to the automaton once the
 * rows its DEFINE conditions look ahead to have arrived, the decided matches are written to
 * [[out]], and rows no live match or pending output can read any more are dropped.
 *
 * The driver is built once per task and reset per partition (its projections and the
 * automaton's conditions are compiled code).
 *
 * @param decideEarly a match is decided as soon as its last row is read, not at the next
 *                    row (streams, which have no partition end to wait for)
 */
final class AutomatonDriver(
    spec: MatcherSpec,
    partitionIndex: Int,
    describePartition: () => String,
    decideEarly: Boolean) {

  val buffer = new RowBuffer(spec.maxBufferedRows, "spark.sql.matchRecognize.maxBufferedRows")

  /** Output rows written and not yet handed out. */
  val out = new ArrayDeque[InternalRow]()

  val writer = new MatchOutputWriter(spec, buffer, out)

  // While the partition end is decided, each match is written as soon as it is decided, so
  // that the output of matches decided together there (all start rows of `X+` with SKIP TO
  // NEXT ROW) is handed out before the next is decided.
  private var ending = false

  /** Is the end of the partition being decided (between [[beginEnd]] and the last [[continueEnd]])? */
  def endingPartition: Boolean = ending

  val matcher = new AutomatonMatcher(spec, buffer,
    { m =>
      writer.add(m)
      if (ending) writer.flushAtEnd()
    }, partitionIndex, describePartition, decideEarly)

  /** Rows offered to the automaton: those before this position. */
  private var offered = 0L

  def processedUpTo: Long = offered

  /**
   * Appends a row and offers every row whose look-ahead is now in the buffer; returns the
   * buffer's copy of the row (which stays valid until the next row is added, even once
   * trimmed).
   */
  def add(row: UnsafeRow): UnsafeRow = {
    buffer.append(row)
    val kept = buffer.get(buffer.end - 1)
    while (offered + spec.defineLookAhead < buffer.end) {
      matcher.process(offered)
      offered += 1
    }
    writeDecided()
    kept
  }

  /**
   * Streams: no row at or before `time` (the watermark, in microseconds) will come: decides
   * the matches a bound on the time column in DEFINE now decides ([[AutomatonMatcher.expireUpTo]]).
   */
  def expireUpTo(time: Long): Unit = {
    matcher.expireUpTo(time)
    writeDecided()
  }

  /** Writes the output of the matches decided so far and drops the rows no one needs any more. */
  private def writeDecided(): Unit = {
    writer.flush(matcher.oldestNeeded, None)
    buffer.trimBefore(math.min(math.min(matcher.oldestNeeded, writer.oldestNeeded), offered) -
      spec.maxLookBehind)
  }

  /**
   * A range of a split partition has no rows past this one: rows added from here on only
   * finish the matches that start before it (see [[finishedBefore]]).
   */
  def stopStartsAt(pos: Long): Unit = {
    matcher.stopStartsAt(pos)
    writer.stopUnmatchedAt(pos)
  }

  /** No match starts before `pos`: a match of an earlier range covers the rows before it. */
  def startNoEarlierThan(pos: Long): Unit = {
    matcher.startNoEarlierThan(pos)
    writer.coveredBefore(pos)
  }

  /**
   * Whether every match starting before `pos` is decided and written: the rows before it
   * have been offered, no attempt is live and no match waits for rows its measures read.
   */
  def finishedBefore(pos: Long): Boolean =
    offered >= pos && matcher.idle && writer.waiting == 0

  /** The partition has ended: offers the rows left and starts deciding its open matches. */
  def beginEnd(): Unit = {
    offerAll()
    ending = true
    matcher.beginFinish(buffer.end)
  }

  /**
   * Decides at least one more match of the partition end; true when the last is decided
   * and written (the driver is then reset for the next partition).
   */
  def continueEnd(): Boolean = {
    if (!matcher.finishStep()) return false
    writer.flush(buffer.end, Some(buffer.end))
    endedMatches = matcher.decidedMatches
    endedCoverage = writer.coveredByMatches
    ending = false
    reset()
    true
  }

  private var endedMatches = 0L

  /** The matches of the partition ended last (its last MATCH_NUMBER()). */
  def matchesOfEndedPartition: Long = endedMatches

  private var endedCoverage = -1L

  /** The last row a match of the partition ended last covers (-1: it had none). */
  def coverageOfEndedPartition: Long = endedCoverage

  /** Decides every open match at once, as a row past all their windows would (streams). */
  def decideAll(): Unit = {
    offerAll()
    matcher.finish(buffer.end)
    writer.flush(buffer.end, Some(buffer.end))
  }

  /** Continues a partition whose rows from `base` on are about to be added again. */
  def resume(base: Long, resumeAt: Long, matchesBefore: Long, writtenUpTo: Long): Unit = {
    out.clear()
    buffer.clear(base)
    matcher.resume(resumeAt, matchesBefore)
    matcher.resetPeakLiveThreads()
    writer.resume(writtenUpTo)
    offered = resumeAt
  }

  /**
   * Continues a partition this driver left (instead of [[resume]] and adding its rows
   * again): writes what resuming would write before the next row.
   */
  def continuePartition(): Unit = {
    out.clear()
    matcher.resetPeakLiveThreads()
    matcher.settle()
    writer.flush(matcher.oldestNeeded, None)
  }

  private def offerAll(): Unit =
    while (offered < buffer.end) {
      matcher.process(offered)
      offered += 1
    }

  private var peakBuffered = 0

  /** The most rows buffered at once in a partition ended so far. */
  def peakBufferedRows: Int = peakBuffered

  private def reset(): Unit = {
    peakBuffered = math.max(peakBuffered, buffer.peakSize)
    buffer.clear()
    matcher.reset()
    writer.reset()
    offered = 0
  }
}
