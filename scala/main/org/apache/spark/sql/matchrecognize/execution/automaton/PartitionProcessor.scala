package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.plans.PartitionKeys

/**
 * The per-task loop of [[MatchRecognizeExec]]: reads the sorted rows of a Spark partition,
 * cuts them into MATCH_RECOGNIZE partitions, runs each through the [[AutomatonDriver]] and
 * hands out output rows as they are produced.
 */
final class PartitionProcessor(
    spec: MatcherSpec,
    partitionKeys: Seq[Attribute],
    inputSchema: Seq[Attribute],
    partitionIndex: Int,
    metrics: Map[String, SQLMetric]) {

  // The first row of the next partition, held while the current partition's end is decided.
  private var heldRow: UnsafeRow = _
  private val driver =
    new AutomatonDriver(spec, partitionIndex, () => describePartition, decideEarly = false)
  private val out = driver.out
  // Keys of a case- or accent-insensitive collation compare through their collation key.
  private val keyOf = UnsafeProjection.create(PartitionKeys.comparable(partitionKeys), inputSchema)
  private val keyValuesOf =
    if (PartitionKeys.binaryStable(partitionKeys)) keyOf
    else UnsafeProjection.create(partitionKeys, inputSchema)
  // Fixed-width key columns are compared in place with the previous row's (their 8-byte
  // words and null bits), which is most of the per-row cost of finding partition ends.
  private val keyOrdinals: Array[Int] = partitionKeys.map(k =>
    inputSchema.indexWhere(_.exprId == k.exprId)).toArray
  private val keysFixedWidth: Boolean = keyOrdinals.forall(_ >= 0) &&
    partitionKeys.forall(k => UnsafeRow.isFixedLength(k.dataType))
  private var previous: UnsafeRow = _

  private var currentKey: UnsafeRow = _
  // The current partition's key values as the first row has them, for messages.
  private var currentKeyValues: UnsafeRow = _
  private var inputRows = 0L

  def run(rows: Iterator[InternalRow]): Iterator[InternalRow] = new Iterator[InternalRow] {
    private var exhausted = false

    override def hasNext: Boolean = {
      while (out.isEmpty && !exhausted) {
        if (driver.endingPartition) continueEnd()
        else if (rows.hasNext) add(rows.next().asInstanceOf[UnsafeRow])
        else if (currentKey != null) beginEnd()
        else exhausted = true
      }
      !out.isEmpty
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      out.removeFirst()
    }
  }

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
    inputRows += 1
    if (currentKey == null) {
      currentKey = keyOf(row).copy()
      currentKeyValues = if (keyValuesOf eq keyOf) currentKey else keyValuesOf(row).copy()
    }
    val kept = driver.add(row)
    if (keysFixedWidth) previous = kept
  }

  private def beginEnd(): Unit = driver.beginEnd()

  /** Decides at least one more match of the partition end; past the last, starts the next partition. */
  private def continueEnd(): Unit = {
    if (!driver.continueEnd()) return
    currentKey = null
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
  }
}
