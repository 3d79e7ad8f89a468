package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A standard-semantics key's state kept per row, as `transformWithState` keeps it (format
 * [[StateFormats.StandardEntries]]), so that a key holding a long match in progress writes
 * what its new rows add, not every row it holds.
 *
 * The value: the format, the query's signature, then `base`, `resumeAt`, `matchesBefore`,
 * `writtenUpTo` and `end` (longs), then the waiting rows (a count, then per row its size and
 * its bytes). The released rows, positions `base` until `end`, are the entries of
 * [[KeyEntries.rows]] (the map state `held_rows`), keyed by position, each the row's bytes.
 * A save puts the rows released since the last one and deletes those now before `base`: a
 * row is written once and deleted once.
 */
private[streaming] object KeyRowEntries {

  /**
   * Writes `state`'s rows that the entries, holding positions `from` until `until`, lack,
   * deletes those it no longer holds, and returns the value to save.
   */
  def save(state: KeyState, from: Long, until: Long, entries: KeyEntries,
      signature: QuerySignature): Array[Byte] = {
    var pos = from
    while (pos < math.min(until, state.base)) {
      entries.rows.remove(pos)
      pos += 1
    }
    pos = math.max(until, state.base)
    while (pos < state.end) {
      val row = state.released((pos - state.base).toInt)
      entries.rows.put(pos, java.util.Arrays.copyOf(row.getBytes, row.getSizeInBytes))
      pos += 1
    }
    // Rows before those held that the state holds again (it never goes back; kept whole).
    pos = state.base
    while (pos < math.min(from, state.end)) {
      val row = state.released((pos - state.base).toInt)
      entries.rows.put(pos, java.util.Arrays.copyOf(row.getBytes, row.getSizeInBytes))
      pos += 1
    }
    val (out, written) = StateBytes.writer()
    out.writeInt(StateFormats.StandardEntries)
    signature.write(out)
    out.writeLong(state.base)
    out.writeLong(state.resumeAt)
    out.writeLong(state.matchesBefore)
    out.writeLong(state.writtenUpTo)
    out.writeLong(state.end)
    KeyState.writeRows(out, state.waiting)
    out.flush()
    written()
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
    val rows = new Array[UnsafeRow](math.toIntExact(end - base))
    entries.rows.iterator.foreach { case (pos, bytes) =>
      if (pos >= base && pos < end) rows((pos - base).toInt) = KeyState.rowOf(bytes, fieldCount)
    }
    val missing = rows.indexWhere(_ == null)
    if (missing >= 0) {
      throw new IllegalStateException(
        s"The checkpoint's MATCH_RECOGNIZE state lacks the row at position ${base + missing} of " +
          s"a key (it holds positions $base until $end): the state store's files are incomplete. " +
          "Restart the query with a new checkpoint location.")
    }
    val state = KeyState(base, resumeAt, matchesBefore, writtenUpTo, rows.toIndexedSeq, waiting)
    new DecodedKeyState(state, null, base, end)
  }

  /** About how many bytes the entries of `state`'s rows hold (for [[DecodedStates]]). */
  def rowBytes(state: KeyState): Long =
    if (state.released.isEmpty) 0L else state.released.length * (state.released(0).getSizeInBytes + 16L)
}
