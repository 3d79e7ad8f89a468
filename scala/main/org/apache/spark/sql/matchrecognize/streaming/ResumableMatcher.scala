package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.execution.automaton.{AutomatonDriver, MatcherSpec}
import org.apache.spark.sql.matchrecognize.plans.WithinClause

/** What [[ResumableMatcher.advance]] decided: output rows, the new state, and when to call again. */
final case class Advanced(
    output: Seq[InternalRow],
    /**
     * The new state. With `kept`, its rows are read from the automaton's buffer: valid until
     * the automaton's next call.
     */
    state: KeyState,
    /**
     * The event time (micros) at which the WITHIN windows of the open matches close, or a
     * bound on the time in DEFINE rules out an open partial match, if any.
     */
    windowsCloseAt: Option[Long],
    /** Matches whose rows were all written by this call. */
    matchesWritten: Long,
    /** The most partial matches (automaton threads) alive at once during this call. */
    peakPartialMatches: Long,
    /** The automaton that reached `state`, when the key keeps it for its next call; or null. */
    kept: KeptAutomaton)

/**
 * An automaton a key keeps between calls (see [[ResumableMatcher]]), with its rows. It may
 * continue in another task of the same query (the next micro-batch's): `describe` names the
 * key of the call running it, for its errors.
 */
final class KeptAutomaton private[streaming] (spec: MatcherSpec, partitionIndex: Int) {
  @volatile var describe: () => String = () => ""
  val driver = new AutomatonDriver(spec, partitionIndex, () => describe(), decideEarly = true)
}

/**
 * Continues the matches of a PARTITION BY key with the rows a micro-batch released, from
 * the key's saved [[KeyState]], and returns the output rows now decided and the new state.
 *
 * A key whose match in progress spans many rows keeps its automaton between calls
 * ([[Advanced.kept]], held with the key's decoded state in [[DecodedStates]]): the next call
 * goes on from where it stopped, so a call costs what its rows add. Otherwise (and after a
 * restart, or once the automaton was dropped from memory) the automaton restarts at
 * `resumeAt` over the saved rows from there on; since its partial matches are a function of
 * those rows, they come out as they were, and nothing decided before is decided again.
 * Output is what the batch query writes for the same rows, except that a match is held
 * until it is decided without the partition end (a greedy quantifier needs the row after
 * its last). With WITHIN INTERVAL, once the watermark has passed the last row by the
 * window, no later row can join an open match: the matches are decided then, as the next
 * row would decide them.
 *
 * @param keepFromRows the fewest rows a restart would read again for which a key keeps its
 *                     automaton (below it, reading them again costs less than an automaton)
 */
final class ResumableMatcher(
    spec: MatcherSpec,
    partitionIndex: Int,
    describeKey: () => String,
    keepFromRows: Int = ResumableMatcher.KeepFromRows) {

  private val windowMicros: Option[Long] = spec.options.within.collect {
    case WithinClause.Interval(micros, _) => micros
  }
  // A match that reads ahead (NEXT) needs the next row itself, not only its time.
  private val closesByTime = windowMicros.isDefined && spec.defineLookAhead == 0 &&
    spec.measureLookAhead == 0

  // The automaton that restarts keys which keep none; built when needed, and reset for each
  // key as the batch operator resets its one per partition. A match is decided as soon as
  // its last row is read, not at the next row (no `$` here).
  private var spare: KeptAutomaton = _

  private def restarted(state: KeyState): KeptAutomaton = {
    if (spare == null) spare = new KeptAutomaton(spec, partitionIndex)
    val driver = spare.driver
    driver.resume(state.base, state.resumeAt, state.matchesBefore, state.writtenUpTo)
    // The saved rows were offered before, and no output they gave is written again: a
    // match that was decided moved `resumeAt` past its start.
    state.released.foreach(driver.add)
    spare
  }

  /**
   * `kept`: the automaton the key kept, which reached `state` (its rows are then not read);
   * null to restart from `state`. `endPartition`: no row of the key comes after these (its
   * state's time to live has passed): every open match is decided as the end of a partition
   * decides it.
   */
  def advance(state: KeyState, kept: KeptAutomaton, newRows: Iterator[UnsafeRow], timeOrdinal: Int,
      watermarkMicros: Long, endPartition: Boolean = false): Advanced = {
    val automaton = if (kept != null) kept else restarted(state)
    automaton.describe = describeKey
    val driver = automaton.driver
    val buffer = driver.buffer
    val matcher = driver.matcher
    if (kept != null) driver.continuePartition()
    newRows.foreach(driver.add)
    // Deciding every open match leaves the automaton finished: the next call restarts it.
    var decidedAll = endPartition
    if (endPartition) driver.decideAll()
    // Matches whose open threads a bound on the time in DEFINE now rules out are decided.
    else driver.expireUpTo(watermarkMicros)

    var resumeAt =
      math.min(math.min(matcher.firstUndecided, driver.writer.oldestNeeded), driver.processedUpTo)
    var windowsCloseAt: Option[Long] = None
    if (closesByTime && resumeAt < buffer.end && !endPartition) {
      val lastTime = buffer.get(buffer.end - 1).getLong(timeOrdinal)
      val closeAt = lastTime + windowMicros.get
      if (watermarkMicros >= closeAt) {
        // Every later row is past every open match's window: decide them now.
        driver.decideAll()
        decidedAll = true
        resumeAt = buffer.end
      } else windowsCloseAt = Some(closeAt)
    }
    if (!decidedAll) {
      val expiry = matcher.nextExpiry
      if (expiry != Long.MaxValue) windowsCloseAt = Some(windowsCloseAt.fold(expiry)(math.min(_, expiry)))
    }
    val keep = !decidedAll && buffer.end - resumeAt >= keepFromRows

    // What a restart reads: the rows from `resumeAt` on and those PREV can reach before.
    val from = math.max(buffer.firstRetained, resumeAt - spec.maxLookBehind)
    val rows: IndexedSeq[UnsafeRow] =
      if (keep) new BufferedRows(buffer, from, buffer.end)
      else IndexedSeq.tabulate((buffer.end - from).toInt)(i => buffer.get(from + i).copy())
    val next = KeyState(from, resumeAt, matcher.decidedMatches - driver.writer.waiting,
      driver.writer.writtenUpTo, rows, state.waiting)
    val output = new Array[InternalRow](driver.out.size)
    driver.out.toArray(output)
    val keptNow =
      if (keep) {
        if (automaton eq spare) spare = null // the key's from now on
        automaton
      } else {
        release(automaton)
        null
      }
    Advanced(output.toIndexedSeq, next, windowsCloseAt, next.matchesBefore - state.matchesBefore,
      matcher.peakLiveThreads, keptNow)
  }

  /** Takes back an automaton its key keeps no more, to restart other keys with. */
  private def release(automaton: KeptAutomaton): Unit = if (spare == null) spare = automaton
}

object ResumableMatcher {

  /**
   * Reading again fewer rows than this costs less than keeping an automaton (a few
   * kilobytes, and compiled conditions to build) for the key.
   */
  val KeepFromRows = 64

  /** What a kept automaton counts for beside its rows in [[DecodedStates]]'s budget. */
  val AutomatonBytes: Long = 32L * 1024
}

/** Rows `from` until `until` of a buffer, read in place: valid until the buffer changes. */
private final class BufferedRows(buffer: RowBuffer, from: Long, until: Long) extends IndexedSeq[UnsafeRow] {
  override def length: Int = (until - from).toInt
  override def apply(i: Int): UnsafeRow = buffer.get(from + i)
}
