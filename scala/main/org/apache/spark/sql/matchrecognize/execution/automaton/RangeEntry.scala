package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.RowBuffer
import org.apache.spark.sql.matchrecognize.plans.AfterMatchSkip

/**
 * Where the matches of a split partition's range may begin ([[SplitMatching]]) when the skip
 * mode makes each match decide where the next may start (PAST LAST ROW, TO FIRST / TO LAST
 * v): a match begun in the ranges before may cover the range's first rows, and no match
 * starts in them then. The task finds out from the rows just before its range (a window):
 *
 *  1. the match starting at each row of the window is found, each start on its own (as
 *     under SKIP TO NEXT ROW), reading on into the range as far as those matches go;
 *  1. [[OpenMatchReach]] bounds how far a match begun before the window reads, so the
 *     sequential matcher's next start, once past the window's first row, is one of the rows
 *     up to that bound;
 *  1. from each of those rows the chain of matches the skip mode makes is followed up to the
 *     range: when every chain arrives at the same row, that is where the sequential matcher
 *     arrives too, whatever happened before the window.
 *
 * When the partition begins inside the window, its first row is where the sequential matcher
 * stands there. When the chains do not meet in the largest window (matches that span it, or
 * that reach differently far), the partition is matched from its start instead, its ranges
 * before read and sorted one by one: exact, at the cost of reading them.
 */
private[automaton] final class RangeEntry(
    spec: MatcherSpec,
    partitionIndex: Int,
    neighbours: RangeNeighbours,
    firstWindow: Int) {

  // Each start's own match, whatever the matches before it.
  private val eachStart =
    spec.copy(options = spec.options.copy(afterMatchSkip = Some(AfterMatchSkip.ToNextRow)))
  private val targets = new SkipTarget(spec)
  // Rows before a window's first that its conditions read (at least one: `^` must not hold).
  private val lookBack = math.max(spec.maxLookBehind, 1)

  private var fromStart = 0
  // The rows of the last window read, for the matcher's navigation (they end the window).
  private var lastWindow = IndexedSeq.empty[UnsafeRow]

  /** The last `n` rows before the range (fewer when the partition has fewer), once [[coveredRows]] ran. */
  def rowsJustBefore(n: Int): IndexedSeq[UnsafeRow] = lastWindow.takeRight(n)

  /** How many times the partition was matched from its start (no window was enough). */
  def readFromStart: Int = fromStart

  /**
   * How many rows of the range's first partition, from its first row `first` on, a match
   * begun before the range covers (0 when none; it may exceed the range's rows). `partition`
   * gives that partition's rows from `first` on, each time from the start.
   */
  def coveredRows(first: UnsafeRow, partition: () => Iterator[UnsafeRow]): Long = {
    var window = firstWindow.toLong
    var tries = 0
    while (tries < RangeEntry.Windows) {
      val wanted = math.min(window + lookBack, Int.MaxValue / 2).toInt
      val before = neighbours.rowsBefore(first, wanted)
      lastWindow = before
      if (before.isEmpty) return 0L
      // The window's starts are tried whatever the matches before them, which the one-task
      // matcher may never try: a limit or a DEFINE error there is not the query's (matching
      // from the partition's start meets exactly the one-task matcher's).
      val arrival =
        try arrivalAfter(before, cut = before.length == wanted, partition)
        catch { case NonFatal(_) => return fromPartitionStart(first, partition) }
      if (arrival >= 0) return arrival - before.length
      window *= RangeEntry.Growth
      tries += 1
    }
    fromPartitionStart(first, partition)
  }

  /**
   * Where the sequential matcher's next start is once past `before` (positions 0 until
   * `before.length`), or [[RangeEntry.Unknown]]. `cut`: the partition began before them.
   */
  private def arrivalAfter(before: IndexedSeq[UnsafeRow], cut: Boolean,
      partition: () => Iterator[UnsafeRow]): Long = {
    val end = before.length.toLong
    val from = if (cut) lookBack.toLong else 0L
    // For each start row of the window, where the skip mode sends the next start after it.
    val next = Array.tabulate((end - from).toInt)(i => from + i + 1)
    val buffer = RangeEntry.buffer(spec)
    val matcher = new AutomatonMatcher(eachStart, buffer,
      { m =>
        next((m.start - from).toInt) = if (m.isEmpty) m.start + 1 else targets.of(m)
      }, partitionIndex)
    RangeEntry.run(eachStart, matcher, buffer, before.iterator, partition(), from)
    // The rows the sequential matcher may stand at, once past the window's first.
    val lastCandidate =
      if (!cut) from
      else {
        val rows = RangeEntry.buffer(spec)
        before.foreach(rows.append)
        val reached = new OpenMatchReach(spec, new LabelConditions(spec, rows, partitionIndex), rows)
          .lastRowReached(from, end - spec.defineLookAhead)
        if (reached < 0) return RangeEntry.Unknown
        math.min(reached + 1, end)
      }
    // Following each row's chain backwards: where it first reaches the range (or fails).
    val arrives = new Array[Long]((end - from).toInt + 1)
    arrives((end - from).toInt) = end
    var n = end - 1
    while (n >= from) {
      val t = next((n - from).toInt)
      arrives((n - from).toInt) = if (t < 0 || t >= end) t else arrives((t - from).toInt)
      n -= 1
    }
    // A chain that meets a skip error never happens: the sequential matcher fails there.
    val arrivals = (from to lastCandidate).map(c => arrives((c - from).toInt)).filter(_ >= 0).distinct
    if (arrivals.isEmpty) end
    else if (arrivals.length == 1) arrivals.head
    else RangeEntry.Unknown
  }

  /** The partition matched from its first row up to the range: exact, and reads every row before. */
  private def fromPartitionStart(first: UnsafeRow, partition: () => Iterator[UnsafeRow]): Long = {
    fromStart += 1
    val buffer = RangeEntry.buffer(spec)
    val matcher = new AutomatonMatcher(spec, buffer, _ => (), partitionIndex)
    val end = RangeEntry.run(spec, matcher, buffer, neighbours.rowsFromStart(first), partition(), 0L)
    math.max(end, matcher.nextAllowedStart) - end
  }
}

private[automaton] object RangeEntry {

  /** Windows tried, each 8 times the one before, before the partition is read from its start. */
  val Windows = 3
  val Growth = 8

  /** Not decided from this window. */
  val Unknown: Long = Long.MinValue

  private def buffer(spec: MatcherSpec) =
    new RowBuffer(spec.maxBufferedRows, "spark.sql.matchRecognize.maxBufferedRows")

  /**
   * Runs `matcher` over `before` with attempts starting from `startsFrom`, then over `after`
   * until every attempt starting in `before` is decided (or the partition ends); returns
   * the number of rows in `before`.
   */
  private def run(spec: MatcherSpec, matcher: AutomatonMatcher, buffer: RowBuffer,
      before: Iterator[UnsafeRow], after: Iterator[UnsafeRow], startsFrom: Long): Long = {
    matcher.resume(startsFrom, 0L)
    var offered = startsFrom
    def add(row: UnsafeRow): Unit = {
      buffer.append(row)
      while (offered + spec.defineLookAhead < buffer.end) {
        matcher.process(offered)
        offered += 1
      }
      buffer.trimBefore(math.min(matcher.oldestNeeded, offered) - spec.maxLookBehind)
    }
    before.foreach(add)
    val end = buffer.end
    matcher.stopStartsAt(end)
    def decided = offered >= end && matcher.idle
    while (!decided && after.hasNext) add(after.next())
    if (!decided) {
      while (offered < buffer.end) {
        matcher.process(offered)
        offered += 1
      }
      matcher.finish(buffer.end)
    }
    end
  }
}
