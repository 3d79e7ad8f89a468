package org.apache.spark.sql.matchrecognize.streaming

import java.io.{DataInputStream, DataOutputStream, EOFException}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * The binary layout of a SKIP TILL ANY MATCH key's state ([[TreeKeyState]]) from format 5
 * on, after the format number and the query's signature. Every number is big-endian
 * (`DataOutputStream`); the body is five sections, each opening with a four-letter tag, so
 * that bytes of another layout, or cut short, are refused instead of misread:
 *
 *  - `ROWS`: the distinct rows the state refers to, each written once however many partial
 *    matches share it: a count, then per row its field count, its size in bytes and its
 *    bytes (an `UnsafeRow`). Everything below refers to a row by its index here (-1: none).
 *  - `MTCH`: the distinct partial matches, each written once however many buffers hold it:
 *    a count, then per match its width, a row index per leaf, and `lo`, `hi`, `firstOrder`,
 *    `lastOrder`. Below, a match is its index here.
 *  - `KEYS`: the key's own fields: `waiting` rows; the window's progress (rows passed on,
 *    last ORDER BY key row, its rank, `recent` rows, `pending` rows); the `unnumbered`
 *    rows and the `numbered` count; the `written` rows and a `writtenUntil` per row.
 *  - `TREE`: a count of tree states, then per state its node count, per node the matches
 *    of its buffer in creation order, the `held` matches, `heldUntil`, `lastPosition`,
 *    `buffered`, `matches`, and per node `created` and `peak`.
 *  - `PKEY`, only with trees per key ([[KeyTreeProgress]]; this section and those after it
 *    are written by [[KeyTreeProgressCodec]]): the digest of the trees, the tree
 *    run, the tree leaving, `emitBefore`, `retireAfter`, the tree to move to; the rates: a
 *    count of variables, a count of buckets, per bucket its rows, the window position of its
 *    first row and the rows each variable admitted; the bucket filling, the rows read, the
 *    window positions of the last row and of the one before it. A state without the section
 *    (written before the query had trees per key) runs its first tree.
 *  - `PAIR`, only after `PKEY` and when the key measures pairs of variables: a count of
 *    pairs, then per bucket the pairs of each pair's rows tested, and those that passed. A
 *    `PKEY` section without it (written before pairs were measured) measures from empty.
 *  - `RATE`, only after `PAIR`, when a choice of the key has costed its pairs: per pair the
 *    pass rate taken (a double, NaN: the planned one). Without it, the planned rates.
 *  - `LEAF`, only after `PKEY` (and `PAIR`, `RATE`): the window position from which the tree run has
 *    kept every leaf's rows (`KeyTreeProgress.leavesFrom`). A `PKEY` section without it
 *    (written before leaves were kept) keeps them from the key's next row.
 *  - `END.`: nothing follows.
 *
 * A row list is a count and a row index per row; a match list, a count and a match index
 * per match. Rows and matches are shared by identity, as the evaluator shares them, so the
 * encoded state grows with the distinct rows and matches, not with their references.
 * A change of this layout takes a new format number ([[StateFormats]]).
 */
private[streaming] object TreeKeyStateCodec {

  private val RowsTag = tag("ROWS")
  private val MatchesTag = tag("MTCH")
  private val KeyTag = tag("KEYS")
  val TreesTag: Int = tag("TREE")

  def tag(name: String): Int = name.foldLeft(0)((t, c) => (t << 8) | (c & 0xff))

  def tagName(t: Int): String =
    (24 to 0 by -8).map(s => ((t >>> s) & 0xff).toChar).map(c => if (c >= ' ' && c < 127) c else '?').mkString

  def write(state: TreeKeyState, out: DataOutputStream): Unit = {
    // Sized up front: a state can hold thousands of matches, and growing the index by
    // doubling rehashes it each time.
    val matchCount = state.trees.iterator.map(t => t.buffers.iterator.map(_.size).sum + t.held.size).sum
    val matches = new IdentityIndex[PartialMatch](matchCount.toInt)
    state.trees.foreach { t =>
      t.buffers.foreach(_.iterator.foreach(matches.add))
      t.held.forEach(m => matches.add(m))
    }
    val rows = new IdentityIndex[UnsafeRow](matchCount.toInt + state.waiting.length)
    keyRows(state).foreach(rows.add)
    matches.items.flatMap(_.rows).foreach(rows.add)
    writeRowSection(out, rows)

    out.writeInt(MatchesTag)
    out.writeInt(matches.size)
    matches.items.foreach(m => writeMatch(out, m)(r => out.writeInt(rows.indexOf(r))))

    writeKeySection(out, state, rows)

    out.writeInt(TreesTag)
    out.writeInt(state.trees.length)
    state.trees.foreach { t =>
      out.writeInt(t.buffers.length)
      t.buffers.foreach { b =>
        out.writeInt(b.size.toInt)
        b.iterator.foreach(m => out.writeInt(matches.indexOf(m)))
      }
      out.writeInt(t.held.size)
      t.held.forEach(m => out.writeInt(matches.indexOf(m)))
      writeCounters(out, t)
    }
    KeyTreeProgressCodec.writeEnd(out, state)
  }

  /**
   * The state written by [[write]], read from `in`, which must hold nothing after it; its tree
   * states completed by `complete` (see `TreeKeyState.load`).
   */
  def read(in: DataInputStream, complete: Array[TreeState] => Array[TreeState] = identity): TreeKeyState =
    readingFormat(StateFormats.Tree) {
      val rows = readRowSection(in)

      expect(in, MatchesTag)
      val matches = Array.fill(count(in))(readMatch(in)(() => row(rows, in.readInt())))

      val key = readKeySection(in, rows)

      expect(in, TreesTag)
      val trees = Array.fill(count(in)) {
        val state = new TreeState(count(in))
        state.buffers.foreach(b => (0 until count(in)).foreach(_ => b.add(partialMatch(in, matches))))
        (0 until count(in)).foreach(_ => state.held.add(partialMatch(in, matches)))
        readCounters(in, state)
        state
      }
      val perKey = KeyTreeProgressCodec.readEnd(in)
      val state = key(complete(trees))
      state.perKey = perKey
      state
    }

  // Shared with the per-entry layout of format 6 (TreeEntryCodec).

  /** The rows of the key's own fields (not of its partial matches). */
  def keyRows(state: TreeKeyState): Iterator[UnsafeRow] = {
    val window = state.window
    state.waiting.iterator ++ Iterator(window.lastKey) ++ window.recent ++ window.pending ++
    state.unnumbered ++ state.written
  }

  def writeRowSection(out: DataOutputStream, rows: IdentityIndex[UnsafeRow]): Unit = {
    out.writeInt(RowsTag)
    out.writeInt(rows.size)
    rows.items.foreach(r => writeRow(out, r))
  }

  def writeRow(out: DataOutputStream, r: UnsafeRow): Unit = {
    out.writeInt(r.numFields)
    out.writeInt(r.getSizeInBytes)
    out.write(r.getBytes)
  }

  def readRowSection(in: DataInputStream): Array[UnsafeRow] = {
    expect(in, RowsTag)
    Array.fill(count(in))(readRow(in))
  }

  def readRow(in: DataInputStream): UnsafeRow = {
    val row = new UnsafeRow(count(in))
    val bytes = new Array[Byte](count(in))
    in.readFully(bytes)
    row.pointTo(bytes, bytes.length)
    row
  }

  /** A partial match: its width, its rows (`writeRow` writes -1 for none), its span and positions. */
  def writeMatch(out: DataOutputStream, m: PartialMatch)(writeRow: UnsafeRow => Unit): Unit = {
    out.writeInt(m.rows.length)
    m.rows.foreach(writeRow)
    out.writeLong(m.lo)
    out.writeLong(m.hi)
    out.writeLong(m.firstOrder)
    out.writeLong(m.lastOrder)
  }

  /** A match written by [[writeMatch]]; `readRow` reads what `writeRow` wrote. */
  def readMatch(in: DataInputStream)(readRow: () => UnsafeRow): PartialMatch = {
    val rows = new Array[UnsafeRow](count(in))
    var i = 0
    while (i < rows.length) {
      rows(i) = readRow()
      i += 1
    }
    new PartialMatch(rows, in.readLong(), in.readLong(), in.readLong(), in.readLong())
  }

  def writeKeySection(out: DataOutputStream, state: TreeKeyState, rows: IdentityIndex[UnsafeRow]): Unit = {
    val window = state.window
    out.writeInt(KeyTag)
    writeRows(out, rows, state.waiting)
    out.writeLong(window.rows)
    out.writeInt(rows.indexOf(window.lastKey))
    out.writeLong(window.lastRank)
    writeRows(out, rows, window.recent)
    writeRows(out, rows, window.pending)
    writeRows(out, rows, state.unnumbered)
    out.writeLong(state.numbered)
    writeRows(out, rows, state.written)
    writeLongs(out, state.writtenUntil)
  }

  /** The key's fields, waiting for its trees' states. */
  def readKeySection(in: DataInputStream, rows: Array[UnsafeRow]): Array[TreeState] => TreeKeyState = {
    expect(in, KeyTag)
    val waiting = readRows(in, rows)
    val window = new WindowProgress(in.readLong(), row(rows, in.readInt()), in.readLong(),
      readRows(in, rows), readRows(in, rows))
    val unnumbered = readRows(in, rows)
    val numbered = in.readLong()
    val written = readRows(in, rows)
    val writtenUntil = Array.fill(count(in))(in.readLong())
    trees => new TreeKeyState(waiting, window, trees, unnumbered, numbered, written, writtenUntil)
  }

  def writeCounters(out: DataOutputStream, t: TreeState): Unit = {
    out.writeLong(t.heldUntil)
    out.writeLong(t.lastPosition)
    out.writeLong(t.buffered)
    out.writeLong(t.matches)
    t.created.foreach(out.writeLong)
    t.peak.foreach(out.writeLong)
  }

  def readCounters(in: DataInputStream, state: TreeState): Unit = {
    state.heldUntil = in.readLong()
    state.lastPosition = in.readLong()
    state.buffered = in.readLong()
    state.matches = in.readLong()
    state.created.indices.foreach(i => state.created(i) = in.readLong())
    state.peak.indices.foreach(i => state.peak(i) = in.readLong())
  }

  /** `body`, with a state cut short reported as damaged (in `format`). */
  def readingFormat[T](format: Int)(body: => T): T =
    try body
    catch {
      case _: EOFException => throw damaged("it ends before its last section", format)
    }

  private def writeRows(out: DataOutputStream, index: IdentityIndex[UnsafeRow], rows: Array[UnsafeRow]): Unit = {
    out.writeInt(rows.length)
    rows.foreach(r => out.writeInt(index.indexOf(r)))
  }

  private def writeLongs(out: DataOutputStream, values: Array[Long]): Unit = {
    out.writeInt(values.length)
    values.foreach(out.writeLong)
  }

  // Called per partial match: a loop, where `Array.fill` would look up a ClassTag each time.
  private def readRows(in: DataInputStream, rows: Array[UnsafeRow]): Array[UnsafeRow] = {
    val read = new Array[UnsafeRow](count(in))
    var i = 0
    while (i < read.length) {
      read(i) = row(rows, in.readInt())
      i += 1
    }
    read
  }

  private def row(rows: Array[UnsafeRow], i: Int): UnsafeRow = {
    if (i == -1) null
    else if (i >= 0 && i < rows.length) rows(i)
    else throw damaged(s"it refers to row $i of ${rows.length}")
  }

  private def partialMatch(in: DataInputStream, matches: Array[PartialMatch]): PartialMatch = {
    val i = in.readInt()
    if (i >= 0 && i < matches.length) matches(i)
    else throw damaged(s"it refers to partial match $i of ${matches.length}")
  }

  /** A count or a size: never negative, never more than the bytes left could hold. */
  def count(in: DataInputStream): Int = {
    val n = in.readInt()
    if (n < 0 || n > in.available()) throw damaged(s"it counts $n items with ${in.available()} bytes left")
    n
  }

  def expect(in: DataInputStream, section: Int): Unit = {
    val found = in.readInt()
    if (found != section) {
      throw damaged(s"section ${tagName(section)} expected, ${tagName(found)} found")
    }
  }

  def damaged(why: String, format: Int = StateFormats.Tree): CheckpointStateException =
    new CheckpointStateException(
      s"The checkpoint holds SKIP TILL ANY MATCH state of format $format that does " +
        s"not read as that layout ($why): it is damaged, or was written by another layout " +
        "under the same number. Restart the query with a new checkpoint location.")

  /** Distinct objects by identity, in the order first added; null is never added. */
  final class IdentityIndex[T <: AnyRef](expected: Int) {
    private val indices = new java.util.IdentityHashMap[T, Integer](expected)
    private val list = new java.util.ArrayList[T](expected)

    def add(x: T): Unit =
      if (x != null && !indices.containsKey(x)) {
        indices.put(x, list.size)
        list.add(x)
      }

    def size: Int = list.size

    def items: Iterator[T] = list.iterator().asScala

    def indexOf(x: T): Int = if (x == null) -1 else indices.get(x).intValue
  }
}
