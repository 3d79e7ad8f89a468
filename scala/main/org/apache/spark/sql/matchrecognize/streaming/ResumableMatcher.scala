package org.apache.spark.sql.matchrecognize.streaming

import java.util.ArrayDeque

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.{AutomatonMatcher, MatchOutputWriter, MatcherSpec, RowBuffer}

/**
 * Continues the matches of one PARTITION BY key with the rows a micro-batch released, from
 * the key's saved [[KeyState]], and returns the output rows now decided and the new state.
 *
 * The automaton restarts at `resumeAt` over the released rows from there on; since its
 * partial matches are a function of those rows, they come out as they were, and nothing
 * decided before is decided again. Output is what the batch query writes for the same
 * rows, except that a match is held until it is decided without the partition end (a
 * greedy quantifier needs the row after its last).
 */
final class ResumableMatcher(spec: MatcherSpec, partitionIndex: Int, describeKey: () => String) {

  def advance(state: KeyState, newRows: Iterator[UnsafeRow]): (Seq[InternalRow], KeyState) = {
    val buffer = new RowBuffer(spec.maxBufferedRows, "spark.sql.matchRecognize.maxBufferedRows")
    val out = new ArrayDeque[InternalRow]()
    val writer = new MatchOutputWriter(spec, buffer, out)
    val matcher = new AutomatonMatcher(spec, buffer, writer.add, partitionIndex, describeKey)
    buffer.clear(state.base)
    matcher.resume(state.resumeAt, state.matchesBefore)
    writer.resume(state.writtenUpTo)
    var processed = state.resumeAt

    def restartPoint: Long =
      math.min(math.min(matcher.oldestNeeded, writer.oldestNeeded), processed)

    def add(row: UnsafeRow): Unit = {
      buffer.append(row)
      while (processed + spec.defineLookAhead < buffer.end) {
        matcher.process(processed)
        processed += 1
      }
      writer.flush(matcher.oldestNeeded, None)
      buffer.trimBefore(restartPoint - spec.maxLookBehind)
    }

    // The saved rows were offered before, and no output they gave is written again: a
    // match that was decided moved `resumeAt` past its start.
    state.released.foreach(add)
    newRows.foreach(add)

    val resumeAt = math.min(math.min(matcher.firstUndecided, writer.oldestNeeded), processed)
    buffer.trimBefore(resumeAt - spec.maxLookBehind)
    val kept = new Array[UnsafeRow](buffer.size)
    var i = 0
    while (i < kept.length) {
      kept(i) = buffer.get(buffer.firstRetained + i).copy()
      i += 1
    }
    val next = KeyState(buffer.firstRetained, resumeAt, matcher.decidedMatches - writer.waiting,
      writer.writtenUpTo, kept.toIndexedSeq, state.waiting)
    val rows = new Array[InternalRow](out.size)
    out.toArray(rows)
    (rows.toSeq, next)
  }
}
