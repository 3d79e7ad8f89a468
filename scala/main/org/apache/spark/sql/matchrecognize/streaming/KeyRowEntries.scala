package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A standard-semantics key's state kept per entry, as `transformWithState` keeps it (format
 * [[StateFormats.StandardEntries]]), so that a key holding a long match in progress writes
 * what its new rows add, not every row it holds.
 *
 * The value: the format, the query's signature, then `base`, `resumeAt`, `matchesBefore`,
 * `writtenUpTo` and `end` (longs), then the waiting rows (a count, then per row its size and
 * its bytes). The released rows, positions `base` until `end`, are in the entries of
 * [[KeyEntries.rows]] (the map state `held_rows`): each call's new rows in one entry, keyed
 * by the position of its first row, its value a count and the rows as above. A save puts
 * the rows released since the last one and deletes the entries whose rows are all before
 * `base`: a row is written once, and a key's state reads back in as many entries as calls
 * added its rows (one per micro-batch; in Real-Time Mode, one per row).
 */
private[streaming] object KeyRowEntries {

  /**
   * Writes `state`'s rows that the entries, starting at `starts` (in order) and holding rows
   * up to `until`, lack; deletes those of which it holds no row; updates `starts`; and
   * returns the value to save.
   */
  def save(state: KeyState, starts: java.util.ArrayDeque[java.lang.Long], until: Long, entries: KeyEntries,
      signature: QuerySignature): Array[Byte] = {
    val from = math.max(until, state.base)
    if (from < state.end) {
      val (out, written) = StateBytes.writer()
      KeyState.writeRows(out, state.released.slice((from - state.base).toInt, state.released.length))
      out.flush()
      entries.rows.put(from, written())
      starts.addLast(from)
    }
    // An entry's rows end where the next one's begin (the last one's at `end`).
    while (!starts.isEmpty && endOfFirst(starts, state.end) <= state.base) {
      entries.rows.remove(starts.pollFirst())
    }
    val (out, written) = StateBytes.writer()
    KeyState.writeHead(out, StateFormats.StandardEntries, state, signature)
    out.writeLong(state.end)
    KeyState.writeRows(out, state.waiting)
    out.flush()
    written()
  }

  private def endOfFirst(starts: java.util.ArrayDeque[java.lang.Long], end: Long): Long =
    if (starts.size == 1) end
    else {
      val it = starts.iterator()
      it.next()
      it.next()
    }

  /** The state of `data` (format [[StateFormats.StandardEntries]]) with its rows from `entries`. */
  def read(data: Array[Byte], entries: KeyEntries, fieldCount: Int,
      signature: QuerySignature): DecodedKeyState = {
    val in = StateBytes.reader(data)
    StateFormats.read(in.readInt(), StateFormats.Standard)
    signature.check(in)
    val (base, resumeAt, matchesBefore, writtenUpTo, end) =
      (in.readLong(), in.readLong(), in.readLong(), in.readLong(), in.readLong())
    val waiting = KeyState.readRows(in, fieldCount)
    val rows = new Array[UnsafeRow](Math.toIntExact(end - base))
    val starts = new java.util.TreeSet[java.lang.Long]()
    entries.rows.iterator.foreach { case (start, bytes) =>
      starts.add(start)
      val held = KeyState.readRows(StateBytes.reader(bytes), fieldCount)
      var i = 0
      while (i < held.length) {
        val pos = start + i
        if (pos >= base && pos < end) rows((pos - base).toInt) = held(i)
        i += 1
      }
    }
    val missing = rows.indexWhere(_ == null)
    if (missing >= 0) {
      throw new CheckpointStateException(
        s"The checkpoint's MATCH_RECOGNIZE state lacks the row at position ${base + missing} of " +
          s"a key (it holds positions $base until $end): the state store's files are incomplete. " +
          "Restart the query with a new checkpoint location.")
    }
    val state = KeyState(base, resumeAt, matchesBefore, writtenUpTo, rows.toIndexedSeq, waiting)
    new DecodedKeyState(state, null, new java.util.ArrayDeque[java.lang.Long](starts), end)
  }

  /** About how many bytes the entries of `state`'s rows hold (for [[DecodedStates]]). */
  def rowBytes(state: KeyState): Long =
    if (state.released.isEmpty) 0L else state.released.length * (state.released(0).getSizeInBytes + 4L)
}
