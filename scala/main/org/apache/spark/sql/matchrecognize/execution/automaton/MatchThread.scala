package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A partial match being extended by the automaton: where it is in the program and which
 * rows it has mapped to which variables. Threads are cheap to fork: the rows are a
 * persistent list of packed chunks ([[HistoryStore]]) shared with the threads it forked
 * from, and the small per-label arrays are copied only when written.
 */
final class MatchThread(
    val attempt: Attempt,
    var pc: Int,
    /** The last chunk of the rows mapped so far (null before the first row). */
    var chunk: HistoryChunk,
    /** The number of rows mapped so far: rows `attempt.start` until `attempt.start + length`. */
    var length: Int,
    /** Per label, the position of its last row, or -1 (kept only when DEFINE needs it). */
    var lastByLabel: Array[Long],
    var firstByLabel: Array[Long],
    var registers: Array[Long],
    var exclusion: Int,
    /** Parked to skip the next row (SKIP TILL NEXT MATCH) rather than to match it. */
    var skipping: Boolean,
    /** The last row this thread consumed was skipped. */
    var afterSkip: Boolean) {

  /**
   * Cached state-key fingerprint ([[StateKeySet]]) and its hash; valid until the thread
   * consumes a row of a variable the fingerprint reads.
   */
  var fingerprint: Array[Long] = _
  var fingerprintHash: Int = 0

  /**
   * The buffers of the DEFINE aggregates kept running over the rows mapped so far
   * ([[RunningAggregates]]); immutable, so forks share it. Null when there are none.
   */
  var aggregates: UnsafeRow = _

  /**
   * The bound of the [[PatternDeadline]] numbered `deadlineRule` for this thread, when
   * `deadlineKnown` ([[PatternDeadlines]]); the rows it reads no longer change, so forks share it.
   */
  var deadlineRule: Int = -1
  var deadlineKnown: Boolean = false
  var deadline: Long = 0L

  def fork(): MatchThread = {
    val t = new MatchThread(attempt, pc, chunk, length, lastByLabel, firstByLabel, registers,
      exclusion, skipping, afterSkip)
    t.fingerprint = fingerprint
    t.fingerprintHash = fingerprintHash
    t.aggregates = aggregates
    t.deadlineRule = deadlineRule
    t.deadlineKnown = deadlineKnown
    t.deadline = deadline
    t
  }

  /**
   * Maps the row at `pos` to `label`. With `track`, the per-label first and last rows are
   * kept up to date (needed only when DEFINE conditions navigate by variable). `changesKey`:
   * the fingerprint reads rows of `label`, so it must be computed again.
   */
  def consume(history: HistoryStore, memory: MatcherMemory, pos: Long, label: Int,
      track: Boolean, changesKey: Boolean): Unit = {
    history.append(this, history.code(label, exclusion > 0))
    if (track) {
      lastByLabel = lastByLabel.clone()
      lastByLabel(label) = pos
      memory.allocated(MatcherMemory.arrayBytes(lastByLabel.length, 8))
      if (firstByLabel(label) < 0) {
        firstByLabel = firstByLabel.clone()
        firstByLabel(label) = pos
        memory.allocated(MatcherMemory.arrayBytes(firstByLabel.length, 8))
      }
    }
    afterSkip = false
    skipping = false
    if (changesKey) fingerprint = null
  }

  def consumeSkipped(history: HistoryStore): Unit = {
    history.append(this, history.code(-1, excluded = true))
    afterSkip = true
    skipping = false
    fingerprint = null
  }

  def setRegister(r: Int, value: Long): Unit = {
    if (registers(r) != value) {
      registers = registers.clone()
      registers(r) = value
    }
  }
}

/** The search for a match starting at row `start`; reused once it is decided. */
final class Attempt(var start: Long, var matchNumber: Long) {

  /** Threads waiting for the next row, in preference order. */
  var threads: ThreadList = new ThreadList

  /** A second list, reused to build the next generation of `threads`. */
  private var spare: ThreadList = new ThreadList

  /** An empty list for the next generation; `swap()` makes it current. */
  def nextGeneration(): ThreadList = { spare.clear(); spare }

  def swap(): Unit = {
    val t = threads
    threads = spare
    spare = t
  }

  /** The most preferred complete match found so far, if any. */
  var candidate: MatchThread = _

  /** The position of the closure that found `candidate`. */
  var candidateAt: Long = -1L

  /**
   * Where this attempt's match begins among `candidate`'s rows, after the rows of `prefix`:
   * a follower's match is its own rows up to where it joined its leader (`prefix`, the
   * thread it had then; null when it joined at its start row), then the rows of its
   * leader's match from there. 0 and null for an attempt's own candidate.
   */
  var candidateOffset: Int = 0
  var prefix: MatchThread = _

  /**
   * The earlier attempt this one follows, or null: at `joinedAt` its threads were in the
   * same states as the leader's, so it runs no threads of its own from then on
   * ([[AutomatonMatcher]]).
   */
  var leader: Attempt = _
  var joinedAt: Long = -1L

  /** The attempts following this one, until it is decided. */
  val followers = new java.util.ArrayList[Attempt]()

  /** Set when a complete match cut the less preferred threads during this closure. */
  var cut: Boolean = false
  var finished: Boolean = false

  /** The position whose closure the threads have already been through (-1: none). */
  var closedAt: Long = -1L

  def reset(newStart: Long, newMatchNumber: Long): Unit = {
    start = newStart
    matchNumber = newMatchNumber
    threads.release()
    spare.release()
    candidate = null
    candidateAt = -1L
    candidateOffset = 0
    prefix = null
    leader = null
    joinedAt = -1L
    followers.clear()
    cut = false
    finished = false
    closedAt = -1L
  }
}

/**
 * A list of threads. `clear()` only forgets the size (the lists are refilled at every row);
 * `release()` also drops the references, when the list's attempt is done.
 */
final class ThreadList {
  private var items = new Array[MatchThread](4)
  private var count = 0
  private var used = 0 // slots written since the last release()

  def size(): Int = count
  def isEmpty: Boolean = count == 0
  def get(i: Int): MatchThread = items(i)

  def add(t: MatchThread): Unit = {
    if (count == items.length) items = java.util.Arrays.copyOf(items, count * 2)
    items(count) = t
    count += 1
    if (count > used) used = count
  }

  def clear(): Unit = count = 0

  def release(): Unit = {
    var i = 0
    while (i < used) { items(i) = null; i += 1 } // mostly one or two: cheaper than a fill call
    count = 0
    used = 0
  }
}
