package org.apache.spark.sql.matchrecognize.streaming

import java.io.DataInputStream

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * A SKIP TILL ANY MATCH key's state kept per entry (`transformWithState`): a call writes
 * what it changed, not all the key holds.
 *
 * Format 7, written:
 *  - What a call added is one entry of [[KeyEntries.matches]], named by the number of the
 *    save: the id of its first row and the rows that the matches it added hold and no saved
 *    match held (a count, then each row's field count, size and bytes; ids follow on from
 *    the first), then its parts (a count, then per node that added matches: the tree state,
 *    the node, the number of its first match in the node's buffer, a count, and each match as
 *    [[TreeKeyStateCodec.writeMatch]] writes it, its rows by their ids, 8 bytes each, -1 for
 *    none). A row is written once however many matches share it. A buffer only appends and
 *    drops a prefix, so a call writes one entry, and deletes each entry none of whose rows
 *    a match holds and none of whose matches is still buffered.
 *  - The value holds the rest, small and rewritten by each call: the format number and the
 *    query's signature; `ENTS` (saves so far, next row id); the `ROWS` and `KEYS` sections of
 *    [[TreeKeyStateCodec]] (the waiting rows, the window's progress, matches to number, ids of
 *    bindings written); `TREE` (per tree state its node count, per node the numbers of its
 *    first buffered match and of the next one, then the held matches, their rows by id, and
 *    the counters); with trees per key, `PKEY` as [[TreeKeyStateCodec]] writes it; `END.`.
 *
 * Format 6, still read: the same value; the matches a node added in one call were an entry
 * of [[KeyEntries.matches]] named by [[matchId]] (a count, then the matches), and the rows
 * they added an entry of [[KeyEntries.rows]] named by its first row's id (a count, then the
 * rows). Such a state is read, its entries deleted, and all of it written as format 7 by the
 * key's next call, as a format 5 state (one value) is.
 *
 * The decoded state remembers what its entries hold ([[TreeEntryJournal]]); a state read
 * back (after a restart, or by another task) rebuilds that from the entries.
 */
private[streaming] object TreeEntryCodec {

  import TreeKeyStateCodec.{count, damaged, expect, readingFormat}

  private val EntriesTag = TreeKeyStateCodec.tag("ENTS")

  private val NumberBits = 44
  private val NodeBits = 10

  /** The most tree states and nodes per tree state whose matches can be named. */
  val MaxTrees: Int = 1 << (64 - 1 - NumberBits - NodeBits)
  val MaxNodes: Int = 1 << NodeBits

  /**
   * Whether the state of `trees` is kept per entry: within the limits of format 6's entry
   * names, so that a query keeps the state variables its checkpoint declares.
   */
  def fits(trees: Array[TreeState]): Boolean =
    trees.length <= MaxTrees && trees.forall(_.buffers.length <= MaxNodes)

  /** Format 6's entry of the `number`-th match added to node `node` of tree state `tree`. */
  def matchId(tree: Int, node: Int, number: Long): Long =
    (tree.toLong << (NodeBits + NumberBits)) | (node.toLong << NumberBits) | number

  /** Writes what changed since the last save; returns the value and the weight of all held. */
  def save(state: TreeKeyState, entries: KeyEntries, signature: QuerySignature): (Array[Byte], Long) = {
    val journal = if (state.journal != null) state.journal else TreeEntryJournal.fresh(state.trees)
    state.journal = journal
    journal.saveChanges(entries)
    val (out, written) = StateBytes.writer()
    out.writeInt(StateFormats.TreeEntries)
    signature.write(out)
    out.writeInt(EntriesTag)
    out.writeLong(journal.saves)
    out.writeLong(journal.nextRowId)
    val rows = new TreeKeyStateCodec.IdentityIndex[UnsafeRow](state.waiting.length + 4)
    TreeKeyStateCodec.keyRows(state).foreach(rows.add)
    TreeKeyStateCodec.writeRowSection(out, rows)
    TreeKeyStateCodec.writeKeySection(out, state, rows)
    out.writeInt(TreeKeyStateCodec.TreesTag)
    out.writeInt(state.trees.length)
    state.trees.foreach { t =>
      out.writeInt(t.buffers.length)
      t.buffers.foreach { b =>
        out.writeLong(b.added - b.size)
        out.writeLong(b.added)
      }
      out.writeInt(t.held.size)
      t.held.forEach(m => TreeKeyStateCodec.writeMatch(out, m)(r => out.writeLong(journal.idOf(r))))
      TreeKeyStateCodec.writeCounters(out, t)
    }
    KeyTreeProgressCodec.writeEnd(out, state)
    out.flush()
    val head = written()
    (head, head.length + journal.weight)
  }

  /** The state whose value is `head` (format 6 or 7) and whose entries are in `entries`. */
  def read(head: Array[Byte], entries: KeyEntries, fits: Array[TreeState] => Boolean,
      signature: QuerySignature, complete: Array[TreeState] => Array[TreeState] = identity): TreeKeyState = {
    val in = StateBytes.reader(head)
    val format = StateFormats.read(in.readInt(), StateFormats.TreeEntries)
    signature.check(in)
    readingFormat(format) {
      expect(in, EntriesTag)
      val saves = in.readLong()
      val nextRowId = in.readLong()
      val keyRows = TreeKeyStateCodec.readRowSection(in)
      val key = TreeKeyStateCodec.readKeySection(in, keyRows)
      val stored =
        if (format == StateFormats.TreeEntries) new CallEntries(entries) else new SegmentEntries(entries)

      expect(in, TreeKeyStateCodec.TreesTag)
      val spans = new Array[Array[(Long, Long)]](count(in))
      val trees = spans.indices.map { t =>
        val state = new TreeState(count(in))
        spans(t) = Array.fill(state.buffers.length)((in.readLong(), in.readLong()))
        (0 until count(in)).foreach(_ => state.held.add(TreeKeyStateCodec.readMatch(in)(stored.rowById(in))))
        TreeKeyStateCodec.readCounters(in, state)
        state
      }.toArray
      val perKey = KeyTreeProgressCodec.readEnd(in)
      // Trees the state had none of (a checkpoint written before trees per key) come empty.
      val all = complete(trees)
      TreeKeyState.checkTrees(all, fits)

      // Each buffer's matches, placed by number, must be exactly those from its first to its
      // next; matches before the first were dropped.
      val slots = spans.map(_.map { case (first, next) =>
        if (first < 0 || next < first || next - first > Int.MaxValue) {
          throw damagedIn(format, s"a buffer spans matches $first to $next")
        }
        new Array[PartialMatch]((next - first).toInt)
      })
      def place(t: Int, node: Int, start: Long, part: DataInputStream): Long = {
        if (t < 0 || t >= trees.length || node < 0 || node >= slots(t).length) {
          throw damagedIn(format, s"it has matches of node $node of tree state $t")
        }
        val (first, next) = spans(t)(node)
        val matches = count(part)
        // All before the first: dropped, in an entry kept for its other parts or its rows.
        if (start + matches > next || (start + matches <= first && format == StateFormats.TreeSegments)) {
          throw damagedIn(format,
            s"it has matches $start to ${start + matches - 1} of a node holding $first to ${next - 1}")
        }
        (0 until matches).foreach { i =>
          if (start + i >= first) {
            slots(t)(node)((start + i - first).toInt) = TreeKeyStateCodec.readMatch(part)(stored.rowById(part))
          } else {
            // Dropped: its rows may be gone with it.
            TreeKeyStateCodec.readMatch(part) { () => part.readLong(); null }
          }
        }
        start + matches
      }
      stored.placeMatches(place)
      trees.indices.foreach { t =>
        trees(t).buffers.indices.foreach { n =>
          val buffer = trees(t).buffers(n)
          slots(t)(n).foreach { m =>
            if (m == null) throw damagedIn(format, s"a match of node $n of tree state $t is missing")
            buffer.add(m)
          }
          buffer.numberFrom(spans(t)(n)._1)
        }
      }
      val state = key(all)
      state.perKey = perKey
      state.journal = stored.journal(all, saves, nextRowId)
      state
    }
  }

  /** A state's entries as one layout keeps them, read in three steps: rows, matches, what is live. */
  private abstract class StoredEntries(format: Int) {
    protected val rowsById = new java.util.HashMap[java.lang.Long, UnsafeRow]()

    /** Reads a row id from `in`: the row, or null for -1. */
    def rowById(in: DataInputStream)(): UnsafeRow = {
      val id = in.readLong()
      if (id == -1L) null
      else {
        val row = rowsById.get(id)
        if (row == null) throw damagedIn(format, s"a partial match holds row $id, which it does not have")
        row
      }
    }

    /** Calls `place(tree, node, first number, input at the matches)` for each run of matches. */
    def placeMatches(place: (Int, Int, Long, DataInputStream) => Long): Unit

    /** What the decoded state knows of its entries. */
    def journal(trees: Array[TreeState], saves: Long, nextRowId: Long): TreeEntryJournal

    protected def readRows(in: DataInputStream, firstId: Long): Array[UnsafeRow] = {
      val rows = Array.fill(count(in))(TreeKeyStateCodec.readRow(in))
      rows.indices.foreach(i => rowsById.put(firstId + i, rows(i)))
      rows
    }
  }

  /** Format 7: an entry per save, its rows, then its parts. */
  private final class CallEntries(entries: KeyEntries) extends StoredEntries(StateFormats.TreeEntries) {
    private val read = entries.matches.iterator.map { case (id, bytes) =>
      val in = StateBytes.reader(bytes)
      val firstRowId = in.readLong()
      (id, bytes.length, firstRowId, readRows(in, firstRowId), in)
    }.toVector
    private var parts = Vector.empty[TreeEntryJournal.ReadEntry]

    override def placeMatches(place: (Int, Int, Long, DataInputStream) => Long): Unit =
      parts = read.map { case (id, bytes, firstRowId, rows, in) =>
        val spans = (0 until count(in)).map { _ =>
          val t = in.readInt()
          val node = in.readInt()
          val start = in.readLong()
          (t, node, start, place(t, node, start, in))
        }
        if (in.available() > 0) throw damagedIn(StateFormats.TreeEntries, s"entry $id has bytes after its parts")
        TreeEntryJournal.ReadEntry(id, bytes, firstRowId, rows, spans)
      }

    override def journal(trees: Array[TreeState], saves: Long, nextRowId: Long): TreeEntryJournal =
      TreeEntryJournal.restored(trees, parts, entries, saves, nextRowId)
  }

  /**
   * Format 6: rows and each node's matches in entries of their own. Once read, they are
   * deleted, and the key's next save writes its state whole as format 7.
   */
  private final class SegmentEntries(entries: KeyEntries) extends StoredEntries(StateFormats.TreeSegments) {
    entries.rows.iterator.foreach { case (start, bytes) => readRows(StateBytes.reader(bytes), start) }

    override def placeMatches(place: (Int, Int, Long, DataInputStream) => Long): Unit =
      entries.matches.iterator.foreach { case (id, bytes) =>
        val (t, node, start) = unpack(id)
        place(t, node, start, StateBytes.reader(bytes))
      }

    override def journal(trees: Array[TreeState], saves: Long, nextRowId: Long): TreeEntryJournal = {
      entries.rows.clear()
      entries.matches.clear()
      TreeEntryJournal.fresh(trees)
    }
  }

  def unpack(id: Long): (Int, Int, Long) =
    ((id >>> (NodeBits + NumberBits)).toInt, ((id >>> NumberBits) & ((1L << NodeBits) - 1)).toInt,
      id & ((1L << NumberBits) - 1))

  private def damagedIn(format: Int, why: String): CheckpointStateException = damaged(why, format)
}
