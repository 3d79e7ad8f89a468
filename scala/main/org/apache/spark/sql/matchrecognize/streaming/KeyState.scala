package org.apache.spark.sql.matchrecognize.streaming

import java.io.{DataInputStream, DataOutputStream}

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * What a streaming MATCH_RECOGNIZE keeps of one PARTITION BY key between micro-batches, in
 * Spark's state store. Rows are addressed by their position in the key's ordered rows
 * (0, 1, ...), as in batch execution.
 *
 *  - `released`: the ordered rows from position `base` on that a match may still read
 *    (the rows of matches in progress, and the rows before them that PREV can reach);
 *  - `resumeAt`: every match starting before this position is decided and written, and
 *    `matchesBefore` of them were found (MATCH_NUMBER() continues from there);
 *  - `writtenUpTo`: rows up to this position were written or covered by a match (for WITH
 *    UNMATCHED ROWS);
 *  - `waiting`: rows that arrived but that the watermark has not passed yet, unordered.
 *
 * The matcher's partial matches are not stored: they are a function of the released rows
 * from `resumeAt` on, and are rebuilt from them after a restart (see [[ResumableMatcher]]).
 */
final case class KeyState(
    base: Long,
    resumeAt: Long,
    matchesBefore: Long,
    writtenUpTo: Long,
    released: IndexedSeq[UnsafeRow],
    waiting: IndexedSeq[UnsafeRow]) {

  def rowCount: Int = released.length + waiting.length

  /** The position after the last released row. */
  def end: Long = base + released.length
}

/**
 * A key's [[KeyState]] as its function keeps it decoded between calls ([[DecodedStates]]):
 * the state, the automaton that reached it when the key keeps one (its buffer then holds
 * the rows, and `state.released` is empty), and where the key's entries are
 * ([[KeyRowEntries]]: the first position of each, in order, and the position after their
 * last row; none without entries). The call that takes it owns `entryStarts`.
 */
final class DecodedKeyState(val state: KeyState, val kept: KeptAutomaton,
    val entryStarts: java.util.ArrayDeque[java.lang.Long], val entriesUntil: Long)

object DecodedKeyState {
  def empty: DecodedKeyState = new DecodedKeyState(KeyState.empty, null, new java.util.ArrayDeque, 0L)
}

object KeyState {

  val empty: KeyState = KeyState(0L, 0L, 0L, -1L, IndexedSeq.empty, IndexedSeq.empty)

  /**
   * The key's saved state: its rows in entries where the operator keeps them
   * ([[KeyStateAccess.entries]], format [[StateFormats.StandardEntries]]), in one value
   * otherwise; `query` scopes the states kept decoded.
   */
  def load(access: KeyStateAccess, query: AnyRef, fieldCount: Int,
      signature: QuerySignature): Option[DecodedKeyState] =
    access.loadDecoded(query,
      bytes =>
        access.entries match {
          case Some(entries) if formatOf(bytes) == StateFormats.StandardEntries =>
            KeyRowEntries.read(bytes, entries, fieldCount, signature)
          case _ =>
            // The entries hold no row yet: the next save writes them all.
            new DecodedKeyState(decode(bytes, fieldCount, signature), null, new java.util.ArrayDeque, 0L)
        })

  /**
   * Saves `next`, which followed `before` (and `kept`, the automaton that reached it, if the
   * key keeps it), as [[load]] reads it.
   */
  def save(access: KeyStateAccess, before: DecodedKeyState, next: KeyState, kept: KeptAutomaton,
      query: AnyRef, signature: QuerySignature): Unit = {
    // The rows are in the automaton's buffer when it is kept: the decoded state leaves them out.
    val decodedState = if (kept == null) next else next.copy(released = IndexedSeq.empty)
    val automatonBytes = if (kept == null) 0L else ResumableMatcher.AutomatonBytes
    access.entries match {
      case Some(entries) =>
        val starts = before.entryStarts
        val head = KeyRowEntries.save(next, starts, before.entriesUntil, entries, signature)
        access.save(head, new DecodedKeyState(decodedState, kept, starts, next.end), query,
          head.length + KeyRowEntries.rowBytes(next) + automatonBytes)
      case None =>
        val bytes = encode(next, signature)
        access.save(bytes, new DecodedKeyState(decodedState, kept, before.entryStarts, 0L), query,
          bytes.length + automatonBytes)
    }
  }

  private def formatOf(data: Array[Byte]): Int = if (data.length < 4) -1 else StateBytes.reader(data).readInt()

  def encode(s: KeyState, signature: QuerySignature): Array[Byte] = {
    val (out, written) = StateBytes.writer()
    writeHead(out, StateFormats.Standard, s, signature)
    writeRows(out, s.released)
    writeRows(out, s.waiting)
    out.flush()
    written()
  }

  def decode(data: Array[Byte], fieldCount: Int, signature: QuerySignature): KeyState = {
    val in = StateBytes.reader(data)
    StateFormats.read(in.readInt(), StateFormats.Standard) match {
      case StateFormats.Standard => signature.check(in)
      case StateFormats.StandardEntries =>
        throw new CheckpointStateException(
          "The checkpoint holds MATCH_RECOGNIZE state kept per entry by the transformWithState " +
            "operator, but this query runs flatMapGroupsWithState. Set " +
            "spark.sql.matchRecognize.streaming.operator back to transformWithState, or restart " +
            "the query with a new checkpoint location.")
      case _ => // written before states carried the query's signature
    }
    KeyState(in.readLong(), in.readLong(), in.readLong(), in.readLong(),
      readRows(in, fieldCount), readRows(in, fieldCount))
  }

  /** What formats 2 and 8 open with: the format, the signature and the four counters. */
  private[streaming] def writeHead(out: DataOutputStream, format: Int, s: KeyState,
      signature: QuerySignature): Unit = {
    out.writeInt(format)
    signature.write(out)
    out.writeLong(s.base)
    out.writeLong(s.resumeAt)
    out.writeLong(s.matchesBefore)
    out.writeLong(s.writtenUpTo)
  }

  private[streaming] def writeRows(out: DataOutputStream, rows: IndexedSeq[UnsafeRow]): Unit = {
    out.writeInt(rows.length)
    rows.foreach { r =>
      out.writeInt(r.getSizeInBytes)
      out.write(r.getBytes)
    }
  }

  private[streaming] def readRows(in: DataInputStream, fieldCount: Int): IndexedSeq[UnsafeRow] = {
    val n = in.readInt()
    val rows = new Array[UnsafeRow](n)
    var i = 0
    while (i < n) {
      val bytes = new Array[Byte](in.readInt())
      in.readFully(bytes)
      val row = new UnsafeRow(fieldCount)
      row.pointTo(bytes, bytes.length)
      rows(i) = row
      i += 1
    }
    rows.toIndexedSeq
  }
}
