package org.apache.spark.sql.matchrecognize.execution

import java.util.ArrayDeque

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * The per-task loop of [[MatchRecognizeExec]]: reads the sorted rows of a Spark partition,
 * cuts them into MATCH_RECOGNIZE partitions, offers each row to the automaton once the
 * rows its DEFINE conditions look ahead to have arrived, and hands out output rows as they
 * are produced. Rows no live match can read any more are dropped from the buffer.
 */
final class PartitionProcessor(
    spec: MatcherSpec,
    partitionKeys: Seq[Attribute],
    inputSchema: Seq[Attribute],
    partitionIndex: Int,
    metrics: Map[String, SQLMetric]) {

  private val buffer = new RowBuffer(spec.maxBufferedRows, "spark.sql.matchRecognize.maxBufferedRows")
  private val out = new ArrayDeque[InternalRow]()
  private val writer = new MatchOutputWriter(spec, buffer, out)
  private val matcher = new AutomatonMatcher(spec, buffer, writer.add, partitionIndex)
  private val keyOf = UnsafeProjection.create(partitionKeys, inputSchema)

  private var currentKey: UnsafeRow = _
  private var processed = 0L
  private var inputRows = 0L

  def run(rows: Iterator[InternalRow]): Iterator[InternalRow] = new Iterator[InternalRow] {
    private var exhausted = false

    override def hasNext: Boolean = {
      while (out.isEmpty && !exhausted) {
        if (rows.hasNext) add(rows.next().asInstanceOf[UnsafeRow])
        else {
          if (currentKey != null) endPartition()
          exhausted = true
          reportMetrics()
        }
      }
      !out.isEmpty
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      out.removeFirst()
    }
  }

  private def add(row: UnsafeRow): Unit = {
    inputRows += 1
    val key = keyOf(row)
    if (currentKey == null || key != currentKey) {
      if (currentKey != null) endPartition()
      currentKey = key.copy()
    }
    buffer.append(row)
    while (processed + spec.defineLookAhead < buffer.end) {
      matcher.process(processed)
      processed += 1
    }
    writer.flush(matcher.oldestNeeded, None)
    buffer.trimBefore(math.min(math.min(matcher.oldestNeeded, writer.oldestNeeded), processed) -
      spec.maxLookBehind)
  }

  private def endPartition(): Unit = {
    while (processed < buffer.end) {
      matcher.process(processed)
      processed += 1
    }
    matcher.finish(buffer.end)
    writer.flush(buffer.end, Some(buffer.end))
    peakBuffered = math.max(peakBuffered, buffer.peakSize)
    buffer.clear()
    matcher.reset()
    writer.reset()
    processed = 0
  }

  private var peakBuffered = 0

  private def reportMetrics(): Unit = {
    metrics("numInputRows") += inputRows
    metrics("numOutputRows") += writer.outputRows
    metrics("numMatches") += matcher.matches
    metrics("peakLivePartialMatches").set(matcher.peakLiveThreads.toDouble)
    metrics("peakBufferedRows").set(peakBuffered.toDouble)
  }
}
