package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.compile.automaton.Instruction
import org.apache.spark.sql.matchrecognize.plans.AfterMatchSkip
import org.apache.spark.sql.matchrecognize.plans.PartitionKeys

/**
 * The per-task loop of [[MatchRecognizeExec]]: reads the sorted rows of a Spark partition,
 * cuts them into MATCH_RECOGNIZE partitions, runs each through the [[AutomatonDriver]] and
 * hands out output rows as they are produced.
 *
 * With `neighbours`, the task's rows are one range of a split partition ([[SplitMatching]]):
 * its first partition may have begun in the range before, whose last rows it then reads for
 * navigation only (no match of this range starts there, nor in the range's rows a match
 * begun there covers: [[RangeEntry]]), and its last partition may go on in the range after,
 * whose rows it reads until the matches starting in this range are decided (none starts
 * there). `entryRows`: the first window of rows before the range [[RangeEntry]] reads.
 */
final class PartitionProcessor(
    spec: MatcherSpec,
    partitionKeys: Seq[Attribute],
    inputSchema: Seq[Attribute],
    partitionIndex: Int,
    metrics: Map[String, SQLMetric],
    neighbours: Option[RangeNeighbours] = None,
    entryRows: Int = 1024) {

  // The first row of the next partition, held while the current partition's end is decided.
  private var heldRow: UnsafeRow = _
  private val driver =
    new AutomatonDriver(spec, partitionIndex, () => describePartition, decideEarly = false)
  private val out = driver.out
  // Keys of a case- or accent-insensitive collation compare through their collation key,
  // floats and doubles normalized (see PartitionKeys).
  private val keyOf = UnsafeProjection.create(PartitionKeys.comparable(partitionKeys), inputSchema)
  private val keyValuesOf =
    if (PartitionKeys.binaryStable(partitionKeys)) keyOf
    else UnsafeProjection.create(partitionKeys, inputSchema)
  // Fixed-width key columns are compared in place with the previous row's (their 8-byte
  // words and null bits), which is most of the per-row cost of finding partition ends;
  // not floats and doubles, whose equal values (-0.0 and 0.0) may differ in their bits.
  private val keyOrdinals: Array[Int] = partitionKeys.map(k =>
    inputSchema.indexWhere(_.exprId == k.exprId)).toArray
  private val keysFixedWidth: Boolean = keyOrdinals.forall(_ >= 0) &&
    partitionKeys.forall(k => UnsafeRow.isFixedLength(k.dataType)) && PartitionKeys.binaryStable(partitionKeys)
  private var previous: UnsafeRow = _

  private var currentKey: UnsafeRow = _
  // The current partition's key values as the first row has them, for messages.
  private var currentKeyValues: UnsafeRow = _
  private var inputRows = 0L

  // The rows after the range (split partitions), once its own rows are read; null before.
  private var rowsAfter: Iterator[UnsafeRow] = _
  // The position of the first row after the range in the partition's buffer.
  private var rangeEnd = -1L

  // The task's rows not yet read (with those read ahead of the matcher put back in front).
  private var input: Iterator[InternalRow] = _

  def run(rows: Iterator[InternalRow]): Iterator[InternalRow] = new Iterator[InternalRow] {
    private var exhausted = false
    input = rows

    override def hasNext: Boolean = {
      while (out.isEmpty && !exhausted) {
        if (driver.endingPartition) continueEnd()
        else if (input.hasNext) add(input.next().asInstanceOf[UnsafeRow])
        else if (currentKey != null) {
          if (rowsAfter == null && neighbours.isDefined) {
            rangeEnd = driver.buffer.end
            driver.stopStartsAt(rangeEnd)
            rowsAfter = neighbours.get.rowsAfter(lastRow)
          }
          if (rowsAfter != null && !driver.finishedBefore(rangeEnd) && rowsAfter.hasNext) {
            driver.add(rowsAfter.next())
          } else beginEnd()
        } else exhausted = true
      }
      !out.isEmpty
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      if (tagsUnmatched) {
        lastOffset = driver.writer.unmatchedOffset(handedOut)
        handedOut += 1
      }
      out.removeFirst()
    }
  }

  private var handedOut = 0L
  private var lastOffset = -1L

  /**
   * Of the row [[run]] handed out last: its offset from the range's first row when it is an
   * unmatched row of the range's first partition that a match of an earlier range may cover
   * (split ranges where matches may overlap), else -1.
   */
  def unmatchedOffsetOfLast: Long = lastOffset

  // Unmatched rows of a split range's first partition an earlier range's match may cover.
  private val tagsUnmatched = neighbours.isDefined && SplitMatching.reconcilesUnmatched(spec.options)

  private def sameKey(row: UnsafeRow): Boolean =
    if (keysFixedWidth) {
      var i = 0
      var same = true
      while (same && i < keyOrdinals.length) {
        val o = keyOrdinals(i)
        val n = row.isNullAt(o)
        same = n == previous.isNullAt(o) && (n || row.getLong(o) == previous.getLong(o))
        i += 1
      }
      same
    } else keyOf(row) == currentKey

  private def add(row: UnsafeRow): Unit = {
    if (currentKey != null && !sameKey(row)) {
      // No row is read while the end is decided, so the input iterator cannot reuse `row`.
      heldRow = row
      beginEnd()
      return
    }
    var current = row
    if (currentKey == null) {
      currentKey = keyOf(row).copy()
      currentKeyValues = if (keyValuesOf eq keyOf) currentKey else keyValuesOf(row).copy()
      if (inputRows == 0 && neighbours.isDefined) {
        current = readBefore(row)
        if (tagsUnmatched) driver.writer.tagUnmatchedFrom(driver.buffer.end)
      }
    }
    inputRows += 1
    val kept = driver.add(current)
    if (keysFixedWidth) previous = kept
    lastRow = kept
  }

  // Whether anything reads rows before a match's first: navigation, or `^`.
  private val readsBack =
    spec.maxLookBehind > 0 || spec.program.instructions.contains(Instruction.AnchorStart)

  // The last row of the range read (the buffer's copy).
  private var lastRow: UnsafeRow = _

  // Under skip modes where the match before decides the next start, a match begun before
  // the range may cover its first rows ([[RangeEntry]]).
  private val entry: Option[RangeEntry] =
    if (spec.options.effectiveSkip == AfterMatchSkip.ToNextRow) None
    else neighbours.map(new RangeEntry(spec, partitionIndex, _, entryRows))

  /**
   * The range's first partition began before it: its rows there (as many as navigation
   * reads back, at least one so that `^` sees the partition did not start here) are
   * buffered ahead of the range's, and attempts start at the range's first row, or past
   * the rows a match begun before covers. When nothing reads back, the rows before are not
   * buffered: the range's first row then starts the buffer. Returns the row to add as the
   * range's first (a copy when rows were read ahead of it).
   */
  private def readBefore(first: UnsafeRow): UnsafeRow = {
    var firstRow = first
    val covered = entry.map { e =>
      val ahead = new PartitionReadAhead(first, input, r => keyOf(r) == currentKey,
        neighbours.get.rowsAfter)
      firstRow = ahead.firstRow
      val n = e.coveredRows(ahead.firstRow, () => ahead.rows())
      val rest = input // `++` reads its argument lazily: not the field assigned here
      input = ahead.takenRows ++ rest
      n
    }.getOrElse(0L)
    if (readsBack) {
      val wanted = math.max(spec.maxLookBehind, 1)
      val before = entry.map(_.rowsJustBefore(wanted))
        .getOrElse(neighbours.get.rowsBefore(firstRow, wanted))
      if (before.nonEmpty) {
        driver.resume(0, before.length, 0, before.length - 1)
        before.foreach(driver.add)
      }
    }
    if (covered > 0) driver.startNoEarlierThan(driver.buffer.end + covered)
    firstRow
  }

  private def beginEnd(): Unit = driver.beginEnd()

  private var counts = RangeMatchCounts.None

  /** The matches of the task's first and last partitions, once its rows are all handed out. */
  def rangeMatchCounts: RangeMatchCounts = counts

  /** Decides at least one more match of the partition end; past the last, starts the next partition. */
  private def continueEnd(): Unit = {
    if (!driver.continueEnd()) return
    // Only split ranges report them (one object per partition ended).
    if (neighbours.isDefined) {
      // Rows past the range's end (only its last partition reads on) its matches cover.
      val reach = if (rangeEnd < 0) 0L else math.max(0L, driver.coverageOfEndedPartition - rangeEnd + 1)
      counts = counts.ended(currentKey, driver.matchesOfEndedPartition, driver.writer.outputRows,
        inputRows, reach)
    }
    currentKey = null
    rowsAfter = null
    if (heldRow != null) {
      val next = heldRow
      heldRow = null
      add(next)
    }
  }

  /** The current partition's keys, for error messages. */
  private def describePartition: String =
    if (partitionKeys.isEmpty || currentKey == null) ""
    else partitionKeys.zipWithIndex.map { case (k, i) =>
      val v = if (currentKeyValues.isNullAt(i)) "NULL" else currentKeyValues.get(i, k.dataType).toString
      s"${k.name} = ${if (v.length > 40) v.take(40) + "..." else v}"
    }.mkString("PARTITION BY ", ", ", "")

  /** Adds the task's counts to `metrics`: once, when the task completes. */
  def reportMetrics(): Unit = {
    metrics("numInputRows") += inputRows
    metrics("numOutputRows") += driver.writer.outputRows
    metrics("numMatches") += driver.matcher.matches
    metrics("matchingSteps") += driver.matcher.steps
    metrics("peakLivePartialMatches").set(driver.matcher.peakLiveThreads.toDouble)
    metrics("peakBufferedRows").set(driver.peakBufferedRows.toDouble)
    neighbours.foreach(n => metrics("neighbourRows") += n.neighbourRowsRead)
    entry.foreach(e => metrics("rangesReadFromStart") += e.readFromStart)
  }
}
