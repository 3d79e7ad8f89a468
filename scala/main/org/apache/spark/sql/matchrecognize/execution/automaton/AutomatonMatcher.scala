package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction._
import org.apache.spark.sql.matchrecognize.execution.{MatchRecognizeLimitException, MatchRecognizeRuntimeException, RowBuffer}
import org.apache.spark.sql.matchrecognize.plans.{AfterMatchSkip, SelectionStrategy, WithinClause}

/**
 * Finds the matches of one partition under the standard semantics (SQL:2016 R010) and
 * SKIP TILL NEXT MATCH, in one pass over its rows.
 *
 * Over 400 lines: the per-row step, the attempts and threads it advances and the pools that
 * recycle them share mutable state on the hottest path of the engine; split into classes,
 * every row would pay for the indirection.
 *
 * The automaton is a Pike-style virtual machine. Each start row gets an [[Attempt]] whose
 * threads are kept in preference order; every row is offered to all threads of all live
 * attempts at once, so no row is read twice. Of two threads in the same state key only
 * the preferred one survives, which bounds the live state by the program size (times the
 * number of distinct histories when DEFINE reads earlier rows; DEFINE aggregates count by
 * their running state, [[RunningAggregates]]). Matches are reported in start order; AFTER
 * MATCH SKIP then drops the attempts it skips, under PAST LAST ROW as soon as the first
 * attempt's match covers them; under TO NEXT ROW an attempt that reaches the states of an
 * earlier one follows it instead of running. The work per row is bounded by [[MatcherWork]].
 * docs/design.md (3.1) explains why each merge is sound.
 *
 * With `decideEarly` (streams), each attempt's closure for the next row runs right after a
 * row, so a match whose threads all reached the pattern's end is decided without waiting
 * for the next row (which a stream may only see a watermark later). The pattern must not
 * end with `$`, which only the partition end decides.
 *
 * When DEFINE uses MATCH_NUMBER() attempts cannot run ahead (their number is unknown until
 * the previous match is decided): they run one at a time, re-reading buffered rows.
 */
final class AutomatonMatcher(
    spec: MatcherSpec,
    buffer: RowBuffer,
    onMatch: CompletedMatch => Unit,
    partitionIndex: Int,
    describePartition: () => String = () => "",
    decideEarly: Boolean = false) {

  private val program = spec.program.instructions.toArray
  private val labelCount = spec.labels.length
  private val registerCount = spec.program.registers
  private val sequential = spec.defineUsesMatchNumber
  private val nextMatchStrategy = spec.options.strategy.contains(SelectionStrategy.SkipTillNextMatch)
  private val keyedByHistory = spec.historyDependent
  private val simpleKeys = !keyedByHistory && registerCount == 0

  // DEFINE aggregates kept per thread rather than folded over its rows at each test.
  private val running = RunningAggregates.of(spec, buffer)
  private val conditions = new LabelConditions(spec, buffer, partitionIndex, running)
  private val memory = new MatcherMemory(
    if (spec.maxMatcherBytes > 0) spec.maxMatcherBytes else MatcherMemory.defaultLimit())
  private val history = new HistoryStore(labelCount,
    spec.program.instructions.contains(ExclusionStart), memory)
  private val work = new MatcherWork(spec.maxStepsPerRow)
  private val view = new MutableThreadView(history, running, work)
  // Bounds in DEFINE past which a thread cannot complete; null when there are none.
  private val deadlines: PatternDeadlines = {
    val d = if (spec.deadlines.isEmpty) null else new PatternDeadlines(spec, buffer, running)
    if (d != null && d.any) d else null
  }

  // Slots whose values (positions of rows read) distinguish threads with different histories.
  private val fingerprintSlots: Array[Slot] =
    spec.defines.flatten.filterNot(_.historyFree).flatMap(_.slots).distinct.toArray
  // Which of them are aggregates kept running: the key reads their buffers, not their rows.
  private val fingerprintRunning: Array[Boolean] = fingerprintSlots.map {
    case s: AggregateSlot => running != null && running.indexOf(s) >= 0
    case _ => false
  }

  private val attempts = new AttemptQueue
  private var nextStart = 0L
  // No attempt starts at or past this row: a range of a split partition reads on past its
  // end only to finish the matches that start inside it ([[stopStartsAt]]).
  private var startsBefore = Long.MaxValue
  // No attempt starts before this position: the rows before it are covered by a match that
  // began in an earlier range of a split partition ([[RangeEntry]]).
  private var startsFrom = 0L
  private var matchCount = 0L
  private var liveThreads = 0L
  private var peakThreads = 0L

  // Scratch structures of the closure.
  private val stack = new ClosureStack
  // Visited (program position, parked-to-skip) pairs of the current step: a pair is visited
  // when its stamp equals the step's stamp, so starting a step clears them all at once.
  private val visitedStamp = new Array[Int](spec.program.size * 2)
  private var stamp = 0
  private val visitedKeys = new StateKeySet

  private var totalMatches = 0L

  def peakLiveThreads: Long = peakThreads

  /** Starts counting [[peakLiveThreads]] afresh (a stream reports it per micro-batch). */
  def resetPeakLiveThreads(): Unit = peakThreads = 0L

  /** Matches found in every partition this matcher has run over. */
  def matches: Long = totalMatches

  /** Matching steps ([[MatcherWork]]) taken in every partition this matcher has run over. */
  def steps: Long = stepsBefore + work.steps
  private var stepsBefore = 0L

  /** Rows before this one have been offered to the automaton. */
  private var processedUpTo = 0L

  /**
   * The oldest row any attempt may still read (before look-behind): without live attempts,
   * no later attempt can start before the next unprocessed row.
   */
  def oldestNeeded: Long =
    if (attempts.isEmpty) math.max(nextStart, if (sequential) nextStart else processedUpTo)
    else math.min(nextStart, attempts.peekFirst().start)

  def reset(): Unit = {
    clearAttempts()
    memory.reset()
    stepsBefore += work.steps
    work.reset()
    nextStart = 0
    processedUpTo = 0
    matchCount = 0
    conditions.reset()
    if (deadlines != null) deadlines.reset()
    finishEnd = -1L
    closePending = false
    resolvePaused = false
    startsBefore = Long.MaxValue
    startsFrom = 0L
  }

  /** No attempt starts at `pos` or later (until [[reset]]). */
  def stopStartsAt(pos: Long): Unit = startsBefore = pos

  /** No attempt starts before `pos` (until [[reset]]); rows before it are read by navigation only. */
  def startNoEarlierThan(pos: Long): Unit = startsFrom = pos

  /**
   * The first row a later match may start at, as far as the decided matches say: where the
   * last one sends the next (its skip target), or past the last start that gave none.
   */
  def nextAllowedStart: Long = nextStart

  /** Whether no attempt is live: every match starting before the rows offered is decided. */
  def idle: Boolean = attempts.isEmpty

  /**
   * The first row a match not yet decided may start at: every start before it is decided.
   * Unlike [[oldestNeeded]] it skips the rows between the last decided start and the first
   * live attempt, which no match can start at (they were offered, and gave no attempt).
   */
  def firstUndecided: Long =
    if (attempts.isEmpty) oldestNeeded
    else math.max(nextStart, attempts.peekFirst().start)

  /** Matches decided so far (the last MATCH_NUMBER() handed out). */
  def decidedMatches: Long = matchCount

  /**
   * Starts after a point where every match before `start` was decided and `matchesBefore`
   * of them were found: no attempt starts before `start` (earlier buffered rows are only
   * read by navigation), and match numbers continue from `matchesBefore`. A stream resumes
   * a partition this way from its saved state.
   */
  def resume(start: Long, matchesBefore: Long): Unit = {
    reset()
    nextStart = start
    processedUpTo = start
    matchCount = matchesBefore
  }

  /**
   * Moves the next start up to [[firstUndecided]], as [[resume]] there and reading the
   * rows again would: a row between the last decided start and the first live attempt
   * gave an attempt that has died (dropped behind the first without moving the next start),
   * so no match starts there and its row is no longer needed. Under MATCH_NUMBER() in
   * DEFINE attempts start one after another from the next start: nothing to move.
   */
  def settle(): Unit = if (!sequential) nextStart = firstUndecided

  /** Offers the row at `pos` (already in the buffer) to the automaton. */
  def process(pos: Long): Unit = {
    processedUpTo = pos + 1
    work.row()
    if (!sequential) runFrom(pos, pos)
    else {
      var p = pos
      var done = false
      while (!done) {
        if (attempts.isEmpty) {
          val from = math.max(nextStart, startsFrom)
          if (from > pos) done = true
          else { p = from; attempts.addLast(newAttempt(p)) }
        }
        while (!done && p <= pos && !attempts.isEmpty) {
          step(p)
          resolve()
          p += 1
        }
        if (!attempts.isEmpty) done = true
      }
    }
  }

  /**
   * Runs rows `from` to `to` with one attempt per start row. When start rows share the
   * pruning, an attempt that was pruned in favour of one that a match has now skipped may
   * have lost its threads; so after such a match the attempts from the next start row are
   * run again over the buffered rows (only the rows read past the match end, typically one).
   */
  private def runFrom(from: Long, to: Long): Unit = {
    var p = from
    while (p <= to) {
      if (p >= nextStart && p >= startsFrom && p < startsBefore && mayStartAt(p)) {
        attempts.addLast(newAttempt(p))
      }
      step(p)
      if (resolve() && spec.shareAcrossStarts) {
        clearAttempts()
        p = nextStart
      } else p += 1
    }
  }

  // The partition end being decided (see beginFinish), -1 when none.
  private var finishEnd = -1L
  // Whether the live attempts still have to be closed at the partition end.
  private var closePending = false
  // Set while deciding the partition end: resolve() stops after each match it hands out.
  private var pauseAfterMatch = false
  private var resolvePaused = false

  /** The partition has `end` rows and no more: decides every remaining match at once. */
  def finish(end: Long): Unit = {
    beginFinish(end)
    while (!finishStep()) {}
  }

  /**
   * The partition has `end` rows and no more; its remaining matches are decided by
   * [[finishStep]], so that the caller can hand out each match's output rows before the
   * next match is decided (all start rows of `X+` with SKIP TO NEXT ROW end together).
   */
  def beginFinish(end: Long): Unit = {
    finishEnd = end
    closePending = true
    resolvePaused = false
  }

  /** Decides remaining matches of the partition end, at least one when any remains; true when done. */
  def finishStep(): Boolean = {
    val end = finishEnd
    if (closePending) {
      closeLive(end, atEnd = true) { a =>
        a.threads.release()
        a.finished = true
      }
      if (memory.recountDue) recountMemory()
      checkWork()
      closePending = false
    }
    pauseAfterMatch = true
    val matched =
      try resolve()
      finally pauseAfterMatch = false
    if (resolvePaused) {
      resolvePaused = false
      false
    } else if (sequential && attempts.isEmpty && nextStart < end) {
      attempts.addLast(newAttempt(nextStart))
      var p = nextStart
      while (p < end && !attempts.isEmpty) { step(p); resolve(); p += 1 }
      closePending = true
      false
    } else if (matched && spec.shareAcrossStarts && nextStart < end) {
      clearAttempts()
      runFrom(nextStart, end - 1)
      closePending = true
      false
    } else {
      clearAttempts()
      finishEnd = -1L
      true
    }
  }

  private val startFlag = spec.startFlagOrdinal

  // Variables a match can start with, when the pattern cannot match empty (else null).
  private val startLabels: Array[Int] =
    if (spec.canMatchEmpty) null else spec.startLabels.toArray

  /**
   * Whether a match can start at `pos`: some variable a match starts with accepts the row.
   * At its first row a match has no history, so the answer depends on the row alone; rows
   * where it is no are not given an attempt at all (most rows, for selective patterns).
   */
  private def mayStartAt(pos: Long): Boolean = {
    if (startFlag < 0 && startLabels == null) return true
    val input = buffer.get(pos)
    // The prefilter marks the rows no match can start at (outside every candidate range).
    if (startFlag >= 0 && (input.isNullAt(startFlag) || !input.getBoolean(startFlag))) return false
    if (startLabels == null) return true
    var i = 0
    while (i < startLabels.length) {
      if (holdsAtStart(startLabels(i), pos, input)) return true
      i += 1
    }
    false
  }

  private val noLabels = Array.fill(labelCount)(-1L)
  private val noFirsts = Array.fill(labelCount)(-1L)
  private val noRegisters = Array.fill(registerCount)(-1L)

  private def holdsAtStart(label: Int, pos: Long, input: InternalRow): Boolean =
    conditions.holds(label, pos, input, startView)

  // A match starting at the tested row: nothing mapped before it.
  private val startView = new ViewSource {
    def view(label: Int, pos: Long): MatchView = {
      AutomatonMatcher.this.view.reset(pos, null, 0, noLabels, noFirsts, trackLabels,
        matchCount + 1, label, if (running != null) running.initial else null)
      AutomatonMatcher.this.view
    }
  }

  // DEFINE conditions that navigate by variable need each thread's first/last row per label.
  private val trackLabels: Boolean = spec.defines.exists(_.exists(_.slots.exists {
    case s: NavigationSlot => s.vars.isDefined
    case s: AggregateSlot => s.vars.isDefined
    case _ => false
  }))

  // Decided attempts are reused (with their thread lists), so starting one allocates little.
  private val pool = new Array[Attempt](64)
  private var pooled = 0

  private def recycle(a: Attempt): Unit = if (pooled < pool.length) { pool(pooled) = a; pooled += 1 }

  private val recycler: Attempt => Unit = recycle // one function object, not one per call

  private def isDead(a: Attempt): Boolean = a.finished && a.candidate == null

  private def clearAttempts(): Unit = {
    while (!attempts.isEmpty) recycle(attempts.removeFirst())
    groupLeader = null
  }

  private def newAttempt(start: Long): Attempt = {
    val a = if (pooled == 0) {
      memory.allocated(MatcherMemory.AttemptBytes)
      new Attempt(start, matchCount + 1)
    } else {
      pooled -= 1
      val reused = pool(pooled)
      reused.reset(start, matchCount + 1)
      reused
    }
    // The arrays are shared: threads copy them before writing.
    val t = new MatchThread(a, 0, null, 0, noLabels, noFirsts, noRegisters, 0,
      skipping = false, afterSkip = false)
    if (running != null) t.aggregates = running.initial
    memory.allocated(MatcherMemory.ThreadBytes)
    a.threads.add(t)
    a
  }

  private def beginStep(): Unit = {
    stamp += 1
    if (stamp == Int.MaxValue) {
      java.util.Arrays.fill(visitedStamp, 0)
      java.util.Arrays.fill(collisionStamp, 0)
      stamp = 1
    }
    visitedKeys.clear()
  }

  /** Closure at `pos`, then every waiting thread is offered the row at `pos`. */
  private def step(pos: Long): Unit = {
    beginStep()
    liveThreads = 0
    var k = 0
    while (k < attempts.size) {
      val a = attempts.get(k)
      k += 1
      if (!a.finished && a.leader == null) {
        if (a.closedAt != pos) {
          if (!spec.shareAcrossStarts) beginStep()
          closure(a, pos, atEnd = false)
          if (followsEarlierStarts) followOrLead(a, pos)
        }
        liveThreads += a.threads.size()
      }
      if (k == 1 && skipsPastLastRow) dropCoveredByFirst()
    }
    work.add(liveThreads)
    if (liveThreads > peakThreads) peakThreads = liveThreads
    if (liveThreads > spec.maxLivePartialMatches) {
      throw new MatchRecognizeLimitException(
        s"MATCH_RECOGNIZE tracked more than ${spec.maxLivePartialMatches} partial matches at once in " +
          s"one partition (pattern ${spec.options.pattern.sql}); raise " +
          "spark.sql.matchRecognize.maxLivePartialMatches or simplify the pattern or its DEFINE " +
          "conditions.")
    }
    val input = buffer.get(pos)
    var diedBehindFirst = 0 // attempts after the first that ended without a match
    k = 0
    while (k < attempts.size) {
      val a = attempts.get(k)
      k += 1
      if (!a.finished && a.leader == null) {
        val next = a.nextGeneration()
        val inWindow = withinWindow(a, pos, input)
        var i = 0
        while (i < a.threads.size()) {
          val t = a.threads.get(i)
          if (inWindow && !pastDeadline(t, pos, input)) {
            if (t.skipping) {
              if (running != null) foldRow(t, pos, -1)
              t.consumeSkipped(history)
              next.add(t)
            } else {
              val label = program(t.pc).asInstanceOf[MatchLabel].label
              if (holds(label, t, pos, input)) {
                if (running != null) foldRow(t, pos, label)
                t.consume(history, memory, pos, label, trackLabels, changesFingerprint(label))
                t.pc += 1
                next.add(t)
              }
            }
          }
          i += 1
        }
        a.swap()
        if (next.isEmpty) {
          a.finished = true
          if (a.candidate == null && k > 1) diedBehindFirst += 1
          if (!a.followers.isEmpty) diedBehindFirst += decideFollowers(a)
        }
      }
    }
    if (diedBehindFirst > 0) dropDeadAttempts(diedBehindFirst)
    if (decideEarly) closeAhead(pos + 1)
    if (memory.recountDue) recountMemory()
    checkWork()
  }

  /** Folds the row at `pos`, about to be mapped to `label` (-1: skipped), into `t`'s aggregates. */
  private def foldRow(t: MatchThread, pos: Long, label: Int): Unit =
    if (running.touches(label)) {
      t.aggregates = running.update(t.aggregates, pos, label, t.attempt.matchNumber)
      memory.allocated(running.bytes(t.aggregates))
      work.add(1)
    }

  private val skipsPastLastRow =
    spec.options.effectiveSkip == AfterMatchSkip.PastLastRow && !sequential

  // Under AFTER MATCH SKIP TO NEXT ROW no attempt is skipped by another's match, so each
  // runs to its own end; one whose threads reach the states of an earlier attempt's follows
  // it instead (see followOrLead). Not with WITHIN (the window is each start's own),
  // MATCH_NUMBER() in DEFINE, or deciding early (streams).
  private val followsEarlierStarts = spec.options.effectiveSkip == AfterMatchSkip.ToNextRow &&
    spec.options.within.isEmpty && !sequential && !decideEarly
  // The earliest live attempt with threads of its own, which later ones may follow.
  private var groupLeader: Attempt = _

  /**
   * After the closures at `pos`: an attempt whose threads are, one for one and in the same
   * preference order, in the same states as the leader's (program position, loop
   * registers, the state key of what DEFINE reads: the test that merges threads) has the
   * leader's future from `pos` on: the same rows will be tested alike, and the same threads
   * will complete, with the rows from `pos` on mapped alike. So it follows the leader and
   * runs nothing: when the leader is decided, the follower's match is its own rows before
   * `pos` (those of its one thread then, or none at its start row) followed by the
   * leader's match from `pos` on, if the leader completed after `pos`, else the match the
   * follower had found itself (or none). With one thread before `pos` its rows are
   * unambiguous; at its start row every thread has none. `X+` with SKIP TO NEXT ROW then
   * runs one attempt instead of one per open start row.
   */
  private def followOrLead(a: Attempt, pos: Long): Unit = {
    val l = groupLeader
    if (l == null || l.finished || l.leader != null || (l eq a)) {
      if (!a.threads.isEmpty) groupLeader = a
    } else if (l.start < a.start && a.followers.isEmpty &&
        (a.start == pos || a.threads.size() == 1) && sameStates(l, a)) {
      a.leader = l
      a.joinedAt = pos
      a.prefix = if (a.start == pos) null else a.threads.get(0)
      a.threads.release()
      l.followers.add(a)
    }
  }

  private def sameStates(l: Attempt, a: Attempt): Boolean = {
    val n = a.threads.size()
    if (l.threads.size() != n) return false
    var i = 0
    while (i < n) {
      val x = l.threads.get(i)
      val y = a.threads.get(i)
      if (x.pc != y.pc || x.skipping != y.skipping ||
          !java.util.Arrays.equals(x.registers, y.registers)) return false
      i += 1
    }
    if (keyedByHistory) {
      i = 0
      while (i < n) {
        if (!java.util.Arrays.equals(keyOf(l.threads.get(i)), keyOf(a.threads.get(i)))) {
          return false
        }
        i += 1
      }
    }
    true
  }

  /** The thread's state-key fingerprint ([[fingerprint]]), computed once until it changes. */
  private def keyOf(t: MatchThread): Array[Long] = {
    if (t.fingerprint == null) {
      t.fingerprint = fingerprint(t)
      work.add(t.fingerprint.length)
      memory.allocated(MatcherMemory.arrayBytes(t.fingerprint.length, 8))
      t.fingerprintHash = java.util.Arrays.hashCode(t.fingerprint)
    }
    t.fingerprint
  }

  /**
   * The leader `l` is decided: so are its followers, with the end of its match when it
   * completed after they joined, else without a match. Returns how many have none.
   */
  private def decideFollowers(l: Attempt): Int = {
    var none = 0
    var i = 0
    while (i < l.followers.size()) {
      val f = l.followers.get(i)
      f.finished = true
      f.leader = null
      if (l.candidate != null && l.candidateAt > f.joinedAt) {
        f.candidate = l.candidate
        f.candidateOffset = (f.joinedAt - l.start).toInt
      } else {
        f.prefix = null // its own match, if it had found one before it joined
        if (f.candidate == null) none += 1
      }
      i += 1
    }
    l.followers.clear()
    if (groupLeader eq l) groupLeader = null
    none
  }

  /**
   * Under AFTER MATCH SKIP PAST LAST ROW, once the first undecided attempt has a complete
   * match, its match will end there or later (a preferred thread that completes later has
   * read more rows), so every later attempt starting within that match will be skipped:
   * they are dropped at once instead of being run until the first one is decided. (`A+ C`
   * with C rare otherwise keeps one attempt per row open from one C to the next.)
   */
  private def dropCoveredByFirst(): Unit = {
    val first = attempts.peekFirst()
    val c = first.candidate
    if (c != null && c.length > 0 && attempts.size > 1) {
      val end = first.start + matchLength(first) - 1
      var n = 0
      while (n + 1 < attempts.size && attempts.get(n + 1).start <= end) n += 1
      if (n > 0) attempts.dropAfterFirst(n, recycler)
    }
  }

  /** Fails when the partition's work is past its budget ([[MatcherWork]]). */
  private def checkWork(): Unit =
    if (work.over) {
      val where = describePartition()
      throw new MatchRecognizeLimitException(
        s"MATCH_RECOGNIZE took ${work.steps} matching steps over the first " +
          s"${work.rows} rows of one partition" + (if (where.isEmpty) "" else s" ($where)") +
          s", more than spark.sql.matchRecognize.maxStepsPerRow = ${work.perRow} per row " +
          s"(${attempts.size} start rows still open, pattern ${spec.options.pattern.sql}): " +
          "the work grows faster than the rows, as partial matches that cannot be merged " +
          "stay open (or overlapping matches are long). " +
          "Raise spark.sql.matchRecognize.maxStepsPerRow (0 turns the limit off), or bound " +
          "the matches (for example with WITHIN).")
    }

  /**
   * Each live attempt's closure at `next` before its row is read (it reads positions, not
   * rows); an attempt left with no thread waiting for a row is decided.
   */
  private def closeAhead(next: Long): Unit =
    closeLive(next, atEnd = false) { a =>
      a.closedAt = next
      if (a.threads.isEmpty) a.finished = true
    }

  /** The closure at `pos` of every live attempt, each then handed to `after`. */
  private def closeLive(pos: Long, atEnd: Boolean)(after: Attempt => Unit): Unit = {
    beginStep()
    var k = 0
    while (k < attempts.size) {
      val a = attempts.get(k)
      k += 1
      if (!a.finished && a.leader == null) {
        if (!spec.shareAcrossStarts) beginStep()
        closure(a, pos, atEnd)
        after(a)
        if (a.finished && !a.followers.isEmpty) decideFollowers(a)
      }
    }
  }

  /** Counts the live state again ([[MatcherMemory]]); fails when it is over the limit. */
  private def recountMemory(): Unit = {
    memory.beginRecount()
    var k = 0
    while (k < attempts.size) {
      val a = attempts.get(k)
      k += 1
      memory.countBytes(MatcherMemory.AttemptBytes)
      if (a.candidate != null) memory.countThread(a.candidate)
      if (a.prefix != null) memory.countThread(a.prefix)
      var i = 0
      while (i < a.threads.size()) {
        memory.countThread(a.threads.get(i))
        if (trackLabels) memory.countBytes(2 * MatcherMemory.arrayBytes(labelCount, 8))
        i += 1
      }
    }
    val live = memory.endRecount()
    if (live > memory.limit) {
      val where = describePartition()
      throw new MatchRecognizeLimitException(
        s"MATCH_RECOGNIZE held about ${live >> 20} MB of partial matches " +
          s"(${attempts.size} start rows still open) for one partition" +
          (if (where.isEmpty) "" else s" ($where)") + s", more than " +
          s"spark.sql.matchRecognize.maxMatcherBytes = ${memory.limit} bytes (pattern " +
          s"${spec.options.pattern.sql}); raise spark.sql.matchRecognize.maxMatcherBytes, " +
          "give the executors more memory, or bound the matches (for example with WITHIN).")
    }
  }

  /**
   * A finished attempt without a match decides nothing (the next start row is tried
   * anyway), so it is dropped at once rather than kept until the attempts before it are
   * decided: otherwise one long-lived attempt would let dead ones pile up behind it.
   */
  private def dropDeadAttempts(died: Int): Unit = {
    // The newest attempts die most often (a start that goes nowhere): take them off the end,
    // and walk the others only when a death is left among them.
    var left = died
    while (attempts.size > 1 && isDead(attempts.peekLast())) {
      recycle(attempts.removeLast())
      left -= 1
    }
    if (left > 0 && attempts.size > 2) attempts.removeDeadAfterFirst(recycler)
  }

  /**
   * Follows the non-consuming instructions from each waiting thread of `a`, in preference
   * order, leaving the threads parked at their next MatchLabel. A thread reaching Done
   * becomes the attempt's candidate and cuts every less preferred thread.
   */
  private def closure(a: Attempt, pos: Long, atEnd: Boolean): Unit = {
    val out = a.nextGeneration()
    a.cut = false
    var i = 0
    while (i < a.threads.size() && !a.cut) {
      val t = a.threads.get(i)
      i += 1
      stack.clear()
      if (nextMatchStrategy && t.length > 0 && !atEnd) {
        // Skipping the row is the least preferred choice of this thread at this row.
        push(fork(t), t.pc, skip = true)
      }
      push(t, t.pc, skip = false)
      while (stack.nonEmpty && !a.cut) {
        stack.pop()
        work.add(1)
        val th = stack.thread
        val pc = stack.pc
        val skip = stack.skip
        if (firstVisit(th, pc, skip)) {
          if (skip) {
            th.pc = pc
            th.skipping = true
            out.add(th)
          } else program(pc) match {
            case MatchLabel(_) =>
              th.pc = pc
              th.skipping = false
              out.add(th)
            case Done =>
              if (!th.afterSkip) {
                a.candidate = th
                a.candidateAt = pos
                a.cut = true
              }
            case Split(first, second) =>
              push(fork(th), second, skip = false)
              push(th, first, skip = false)
            case Jump(target) => push(th, target, skip = false)
            case ExclusionStart => th.exclusion += 1; push(th, pc + 1, skip = false)
            case ExclusionEnd => th.exclusion -= 1; push(th, pc + 1, skip = false)
            case AnchorStart => if (pos == 0) push(th, pc + 1, skip = false)
            case AnchorEnd => if (atEnd && !th.afterSkip) push(th, pc + 1, skip = false)
            case LoopEnter(r) =>
              th.setRegister(r, if (th.registers(r) == -1L) FirstIteration.mark(pos) else pos)
              push(th, pc + 1, skip = false)
            case LoopBack(r, head, exit) =>
              val entered = th.registers(r)
              val first = FirstIteration.isMarked(entered)
              val from = if (first) FirstIteration.position(entered) else entered
              if (from != pos) push(th, head, skip = false)
              else if (first) push(th, exit, skip = false)
            // else: a later empty iteration is abandoned
            case LoopExit(r) => th.setRegister(r, -1L); push(th, pc + 1, skip = false)
          }
        }
      }
    }
    a.swap()
  }

  private def push(t: MatchThread, pc: Int, skip: Boolean): Unit = stack.push(t, pc, skip)

  private def fork(t: MatchThread): MatchThread = {
    memory.allocated(MatcherMemory.ThreadBytes)
    t.fork()
  }

  /**
   * Is this the first thread of the step in its state key ([[StateKeySet]])? A program
   * position reached once needs no key at all; only when a second thread reaches it are
   * the keys of both built (the first one's from what it had at its visit: registers are
   * copied on write, and the fingerprint does not change within a step).
   */
  private def firstVisit(t: MatchThread, pc: Int, skip: Boolean): Boolean = {
    val slot = pc * 2 + (if (skip) 1 else 0)
    if (visitedStamp(slot) != stamp) {
      visitedStamp(slot) = stamp
      if (!simpleKeys) { firstThread(slot) = t; firstRegisters(slot) = t.registers }
      true
    } else if (simpleKeys) {
      false
    } else {
      if (collisionStamp(slot) != stamp) {
        collisionStamp(slot) = stamp
        addKey(firstThread(slot), firstRegisters(slot), slot)
      }
      addKey(t, t.registers, slot)
    }
  }

  private val firstThread = new Array[MatchThread](spec.program.size * 2)
  private val firstRegisters = new Array[Array[Long]](spec.program.size * 2)
  private val collisionStamp = new Array[Int](spec.program.size * 2)

  private def addKey(t: MatchThread, registers: Array[Long], slot: Int): Boolean = {
    if (keyedByHistory) keyOf(t)
    val start = if (spec.shareAcrossStarts) -1L else t.attempt.start
    visitedKeys.add(slot, start, if (registerCount == 0) null else registers, t.fingerprint,
      t.fingerprintHash)
  }

  /** Positions (and labels) of the rows that history-dependent DEFINE slots would read. */
  private def fingerprint(t: MatchThread): Array[Long] = {
    view.reset(t.attempt.start, t.chunk, t.length, t.lastByLabel, t.firstByLabel, trackLabels,
      t.attempt.matchNumber, -1, t.aggregates)
    scratch.clear()
    var i = 0
    while (i < fingerprintSlots.length) {
      fingerprintSlots(i) match {
        case s: NavigationSlot =>
          val vars = fingerprintVars(i)
          var k = 0
          while (k <= s.logicalOffset) {
            val p = if (s.fromFirst) view.firstOf(vars, k) else view.lastOf(vars, k)
            scratch.add(p)
            if (s.readsClassifier) {
              scratch.add(if (p < 0) -2L else view.labelAt(p + s.physicalOffset).toLong)
            }
            k += 1
          }
          // A classifier read before a row yet to come sees the labels of the thread's
          // last rows, which threads at the same position may have labelled differently.
          if (s.readsClassifier && s.physicalOffset < 0) {
            var back = 0L
            while (back < -s.physicalOffset) {
              scratch.add(view.labelAt(view.current - back).toLong)
              back += 1
            }
          }
        case _: AggregateSlot if fingerprintRunning(i) =>
        case _: AggregateSlot =>
          scratch.add(-3L)
          view.foreachRow(fingerprintVars(i)) { (p, l) => scratch.add(p); scratch.add(l.toLong) }
        case MatchNumberSlot =>
      }
      i += 1
    }
    // The running aggregates' buffers, all at once: equal buffers, equal future values.
    if (running != null) { scratch.add(-4L); running.addWords(t.aggregates, scratch) }
    scratch.toArray
  }
  private val scratch = new LongBuffer

  /**
   * Labels whose rows the fingerprint reads: consuming a row of another label leaves it as
   * it was (in `A B* C` with C reading A.x, the B rows do not change it).
   */
  private val changesFingerprint: Array[Boolean] = {
    val some = new Array[Boolean](labelCount)
    def mark(vars: Option[Seq[Int]]): Boolean = vars match {
      case Some(vs) => vs.foreach(some(_) = true); false
      case None => true
    }
    val anyLabel = fingerprintSlots.exists {
      // A classifier read away from the navigated row sees rows of any label: later ones,
      // or (before a row yet to come) the thread's last ones.
      case s: NavigationSlot => mark(s.vars) || (s.readsClassifier && s.physicalOffset != 0)
      case s: AggregateSlot => mark(s.vars)
      case MatchNumberSlot => false
    }
    if (anyLabel) Array.fill(labelCount)(true) else some
  }
  private val fingerprintVars: Array[Array[Int]] = fingerprintSlots.map {
    case s: NavigationSlot => s.vars.map(_.toArray).orNull
    case s: AggregateSlot => s.vars.map(_.toArray).orNull
    case _ => null
  }

  // The WITHIN clause, unpacked once: this test runs per attempt and row.
  private val withinRows: Long = spec.options.within match {
    case Some(WithinClause.Rows(n)) => n
    case _ => -1L
  }
  private val withinMicros: Long = spec.options.within match {
    case Some(WithinClause.Interval(micros, _)) => micros
    case _ => -1L
  }
  private val (windowOrdinal, windowType) = spec.windowKey.getOrElse((-1, null))

  private def withinWindow(a: Attempt, pos: Long, input: InternalRow): Boolean =
    if (withinRows >= 0) pos - a.start < withinRows
    else if (withinMicros < 0) true
    else {
      val first = buffer.get(a.start)
      if (input.isNullAt(windowOrdinal) || first.isNullAt(windowOrdinal)) false
      else {
        MatcherSpec.windowKeyMicros(input.get(windowOrdinal, windowType), windowType) -
        MatcherSpec.windowKeyMicros(first.get(windowOrdinal, windowType), windowType) <=
          withinMicros
      }
    }

  /**
   * Streams: no row at or before `time` (microseconds of the time column, the first ORDER BY
   * key) will come any more. Drops the threads waiting for the next row that a bound on the
   * time column in DEFINE rules out for every later row, and decides the attempts left
   * without threads, as the next row would ([[PatternDeadlines.expiredBy]]). Not when
   * attempts run one after another (MATCH_NUMBER() in DEFINE): the next row decides those.
   */
  def expireUpTo(time: Long): Unit =
    if (deadlines != null && deadlines.anyByTime && !sequential) {
      var again = true
      while (again) {
        dropExpired(time)
        // Start rows sharing the search: after a match the attempts from the next start row
        // run again over the buffered rows, as runFrom does.
        again = resolve() && spec.shareAcrossStarts
        if (again) {
          clearAttempts()
          runFrom(nextStart, processedUpTo - 1)
        }
      }
    }

  private def dropExpired(time: Long): Unit = {
    var k = 0
    while (k < attempts.size) {
      val a = attempts.get(k)
      k += 1
      if (!a.finished && a.leader == null) {
        val next = a.nextGeneration()
        var i = 0
        while (i < a.threads.size()) {
          val t = a.threads.get(i)
          threadView.thread = t
          if (!deadlines.expiredBy(t, time, processedUpTo, threadView)) next.add(t)
          i += 1
        }
        a.swap()
        if (a.threads.isEmpty) {
          a.finished = true
          if (!a.followers.isEmpty) decideFollowers(a)
        }
      }
    }
  }

  /**
   * Streams: the earliest time (microseconds) past which [[expireUpTo]] would drop a live
   * thread; Long.MaxValue when none would.
   */
  def nextExpiry: Long =
    if (deadlines == null || !deadlines.anyByTime || sequential) Long.MaxValue
    else {
      var earliest = Long.MaxValue
      var k = 0
      while (k < attempts.size) {
        val a = attempts.get(k)
        k += 1
        if (!a.finished && a.leader == null) {
          var i = 0
          while (i < a.threads.size()) {
            val t = a.threads.get(i)
            threadView.thread = t
            earliest = math.min(earliest, deadlines.expiresAt(t, processedUpTo, threadView))
            i += 1
          }
        }
      }
      earliest
    }

  /** Can `t` no longer complete, its row at `pos` past a bound in DEFINE ([[PatternDeadlines]])? */
  private def pastDeadline(t: MatchThread, pos: Long, input: InternalRow): Boolean =
    deadlines != null && {
      threadView.thread = t
      deadlines.passed(t, pos, input, threadView)
    }

  /** Does the DEFINE condition of `label` hold for `t` extended by the row at `pos`? */
  private def holds(label: Int, t: MatchThread, pos: Long, input: InternalRow): Boolean = {
    threadView.thread = t
    conditions.holds(label, pos, input, threadView)
  }

  // The thread being tested; set before each test rather than captured in a closure.
  private object threadView extends ViewSource {
    var thread: MatchThread = _
    def view(label: Int, pos: Long): MatchView = {
      val t = thread
      AutomatonMatcher.this.view.reset(t.attempt.start, t.chunk, t.length, t.lastByLabel,
        t.firstByLabel, trackLabels, t.attempt.matchNumber, label, t.aggregates)
      AutomatonMatcher.this.view
    }
  }

  /**
   * Decides attempts in start order and reports their matches. Returns true when a match
   * was reported; when start rows share pruning it stops there (the caller restarts).
   */
  private def resolve(): Boolean = {
    while (!attempts.isEmpty) {
      val a = attempts.peekFirst()
      if (a.start < nextStart) {
        recycle(attempts.removeFirst())
      } else if (a.finished) {
        attempts.removeFirst()
        if (a.candidate != null) {
          matchCount += 1
          totalMatches += 1
          val m = complete(a, matchCount)
          checkWork()
          recycle(a)
          nextStart = if (m.isEmpty) m.start + 1 else skipTarget(m)
          onMatch(m)
          if (spec.shareAcrossStarts) return true
          if (pauseAfterMatch) {
            resolvePaused = true
            return false
          }
        } else {
          nextStart = a.start + 1
          recycle(a)
        }
      } else return false
    }
    false
  }

  /** The rows of `a`'s candidate match (see [[Attempt.candidateOffset]]). */
  private def matchLength(a: Attempt): Int =
    (if (a.prefix == null) 0 else a.prefix.length) + a.candidate.length - a.candidateOffset

  /** The match of the decided attempt `a`. */
  private def complete(a: Attempt, number: Long): CompletedMatch = {
    val t = a.candidate
    val n = matchLength(a)
    val labels = new Array[Int](n)
    val excluded = new Array[Boolean](n)
    val own = if (a.prefix == null) 0 else a.prefix.length
    if (own > 0) history.decode(a.prefix.chunk, 0, own, labels, 0)
    history.decode(t.chunk, a.candidateOffset, t.length, labels, own)
    work.add(n)
    var i = 0
    while (i < n) {
      excluded(i) = history.excludedOf(labels(i))
      labels(i) = history.labelOf(labels(i))
      i += 1
    }
    new CompletedMatch(a.start, labels, excluded, number, labelCount)
  }

  private val skipTargets = new SkipTarget(spec)

  private def skipTarget(m: CompletedMatch): Long = {
    val target = skipTargets.of(m)
    if (target == SkipTarget.VariableAbsent) {
      val s = spec.options.effectiveSkip
      val v = s.asInstanceOf[AfterMatchSkip.ToVariable].variable
      throw new MatchRecognizeRuntimeException(
        s"${s.sql} failed: pattern variable `$v` is not present in match " +
          s"(match ${m.matchNumber} starting at row ${m.start + 1} of its partition).")
    }
    if (target == SkipTarget.FirstRow) {
      throw new MatchRecognizeRuntimeException(
        s"${spec.options.effectiveSkip.sql} failed: cannot skip to first row of match (match " +
          s"${m.matchNumber} starting at row ${m.start + 1} of its partition); this would repeat " +
          "the same match.")
    }
    target
  }
}
