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
 * from `resumeAt` on, and are rebuilt from them (see [[ResumableMatcher]]).
 */
final case class KeyState(
    base: Long,
    resumeAt: Long,
    matchesBefore: Long,
    writtenUpTo: Long,
    released: IndexedSeq[UnsafeRow],
    waiting: IndexedSeq[UnsafeRow]) {

  def rowCount: Int = released.length + waiting.length
}

object KeyState {

  val empty: KeyState = KeyState(0L, 0L, 0L, -1L, IndexedSeq.empty, IndexedSeq.empty)

  def encode(s: KeyState, signature: QuerySignature): Array[Byte] = {
    val (out, written) = StateBytes.writer()
    out.writeInt(StateFormats.Standard)
    signature.write(out)
    out.writeLong(s.base)
    out.writeLong(s.resumeAt)
    out.writeLong(s.matchesBefore)
    out.writeLong(s.writtenUpTo)
    writeRows(out, s.released)
    writeRows(out, s.waiting)
    out.flush()
    written()
  }

  def decode(data: Array[Byte], fieldCount: Int, signature: QuerySignature): KeyState = {
    val in = StateBytes.reader(data)
    StateFormats.read(in.readInt(), StateFormats.Standard) match {
      case StateFormats.Standard => signature.check(in)
      case _ => // written before states carried the query's signature
    }
    KeyState(in.readLong(), in.readLong(), in.readLong(), in.readLong(),
      readRows(in, fieldCount), readRows(in, fieldCount))
  }

  private def writeRows(out: DataOutputStream, rows: IndexedSeq[UnsafeRow]): Unit = {
    out.writeInt(rows.length)
    rows.foreach { r =>
      out.writeInt(r.getSizeInBytes)
      out.write(r.getBytes)
    }
  }

  private def readRows(in: DataInputStream, fieldCount: Int): IndexedSeq[UnsafeRow] = {
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
