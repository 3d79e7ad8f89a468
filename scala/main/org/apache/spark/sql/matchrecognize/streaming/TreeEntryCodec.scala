package org.apache.spark.sql.matchrecognize.streaming

import java.io.DataInputStream

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * A SKIP TILL ANY MATCH key's state kept per entry (format 6, `transformWithState`): a
 * call writes what it changed, not all the key holds.
 *
 *  - The partial matches a node added between two saves are one entry of
 *    [[KeyEntries.matches]] (a segment), named by its tree state, its node and the number
 *    of its first match in the node's buffer ([[matchId]]): a count, then each match as
 *    [[TreeKeyStateCodec.writeMatch]] writes it, its rows by their ids (8 bytes each, -1
 *    for none). A buffer only appends and drops a prefix, so a save writes one segment per
 *    node it added to, and deletes the segments whose matches have all been dropped.
 *  - The rows those matches hold that no saved match held are one entry of
 *    [[KeyEntries.rows]], named by the id of its first row (the others follow): a count,
 *    then each row's field count, size and bytes. A row is written once however many
 *    matches share it; the state counts the matches holding each row and deletes a segment
 *    once none of its rows is held.
 *  - The value holds the rest, small and rewritten by each call: the format number and the
 *    query's signature; `ENTS` (saves so far, next row id); the `ROWS` and `KEYS` sections of
 *    [[TreeKeyStateCodec]] (the waiting rows, the window's progress, matches to number, ids of
 *    bindings written); `TREE` (per tree state its node count, per node the numbers of its
 *    first buffered match and of the next one, then the held matches, their rows by id, and
 *    the counters); `END.`.
 *
 * The decoded state remembers what its entries hold ([[TreeEntryJournal]]); a state read
 * back (after a restart, or by another task) rebuilds that from the entries. A format 5
 * state is read from the value and written as format 6 by its key's next call.
 */
private[streaming] object TreeEntryCodec {

  import TreeKeyStateCodec.{count, damaged, expect, readingFormat}

  private val EntriesTag = TreeKeyStateCodec.tag("ENTS")

  private val NumberBits = 44
  private val NodeBits = 10

  /** The most tree states and nodes per tree state whose matches can be named. */
  val MaxTrees: Int = 1 << (64 - 1 - NumberBits - NodeBits)
  val MaxNodes: Int = 1 << NodeBits

  /** Whether the matches of `trees` can be named by [[matchId]]. */
  def fits(trees: Array[TreeState]): Boolean =
    trees.length <= MaxTrees && trees.forall(_.buffers.length <= MaxNodes)

  /** The entry of the `number`-th match added to node `node` of tree state `tree`. */
  def matchId(tree: Int, node: Int, number: Long): Long = {
    if (number >= (1L << NumberBits)) {
      throw new IllegalStateException(
        s"A MATCH_RECOGNIZE key created more than ${1L << NumberBits} partial matches at one " +
          "tree node, more than its state can number. Restart the query with a new checkpoint location.")
    }
    (tree.toLong << (NodeBits + NumberBits)) | (node.toLong << NumberBits) | number
  }

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
    TreeKeyStateCodec.writeEnd(out)
    out.flush()
    val head = written()
    (head, head.length + journal.weight)
  }

  /** The state whose value is `head` (format 6) and whose entries are in `entries`. */
  def read(head: Array[Byte], entries: KeyEntries, fits: Array[TreeState] => Boolean,
      signature: QuerySignature): TreeKeyState = {
    val in = StateBytes.reader(head)
    StateFormats.read(in.readInt(), StateFormats.TreeEntries)
    signature.check(in)
    readingFormat(StateFormats.TreeEntries) {
      expect(in, EntriesTag)
      val saves = in.readLong()
      val nextRowId = in.readLong()
      val keyRows = TreeKeyStateCodec.readRowSection(in)
      val key = TreeKeyStateCodec.readKeySection(in, keyRows)

      // Row segments: a count, then the rows, numbered from the segment's id on.
      val rowSegments = entries.rows.iterator.map { case (start, bytes) =>
        val segment = StateBytes.reader(bytes)
        (start, bytes.length, Array.fill(count(segment))(TreeKeyStateCodec.readRow(segment)))
      }.toVector
      val rowsById = new java.util.HashMap[java.lang.Long, UnsafeRow]()
      rowSegments.foreach { case (start, _, rows) => rows.indices.foreach(i => rowsById.put(start + i, rows(i))) }
      def rowById(in: DataInputStream)(): UnsafeRow = {
        val id = in.readLong()
        if (id == -1L) null
        else {
          val row = rowsById.get(id)
          if (row == null) throw entriesDamaged(s"a partial match holds row $id, which it does not have")
          row
        }
      }

      expect(in, TreeKeyStateCodec.TreesTag)
      val spans = new Array[Array[(Long, Long)]](count(in))
      val trees = spans.indices.map { t =>
        val state = new TreeState(count(in))
        spans(t) = Array.fill(state.buffers.length)((in.readLong(), in.readLong()))
        (0 until count(in)).foreach(_ => state.held.add(TreeKeyStateCodec.readMatch(in)(rowById(in))))
        TreeKeyStateCodec.readCounters(in, state)
        state
      }.toArray
      TreeKeyStateCodec.expectEnd(in)
      TreeKeyState.checkTrees(trees, fits)

      // Each buffer's matches, placed by number, must be exactly those from its first to its
      // next; a segment's matches before the first were dropped.
      val slots = spans.map(_.map { case (first, next) =>
        if (first < 0 || next < first || next - first > Int.MaxValue) {
          throw entriesDamaged(s"a buffer spans matches $first to $next")
        }
        new Array[PartialMatch]((next - first).toInt)
      })
      val segments = spans.map(_.map(_ => new java.util.ArrayDeque[TreeEntryJournal.MatchSegment]()))
      val found = entries.matches.iterator.map { case (id, bytes) =>
        val (t, node, start) = unpack(id)
        if (t >= trees.length || node >= slots(t).length) {
          throw entriesDamaged(s"it has matches of node $node of tree state $t")
        }
        val (first, next) = spans(t)(node)
        val segment = StateBytes.reader(bytes)
        val matches = count(segment)
        if (start + matches > next || start + matches <= first) {
          throw entriesDamaged(
            s"it has matches $start to ${start + matches - 1} of a node holding $first to ${next - 1}")
        }
        (0 until matches).foreach { i =>
          if (start + i >= first) {
            slots(t)(node)((start + i - first).toInt) = TreeKeyStateCodec.readMatch(segment)(rowById(segment))
          } else {
            // Dropped: its rows may be gone with it.
            TreeKeyStateCodec.readMatch(segment) { () => segment.readLong(); null }
          }
        }
        (t, node, new TreeEntryJournal.MatchSegment(start, start + matches, bytes.length))
      }.toVector
      found.sortBy(_._3.start).foreach { case (t, node, segment) => segments(t)(node).addLast(segment) }
      trees.indices.foreach { t =>
        trees(t).buffers.indices.foreach { n =>
          val buffer = trees(t).buffers(n)
          slots(t)(n).foreach { m =>
            if (m == null) throw entriesDamaged(s"a match of node $n of tree state $t is missing")
            buffer.add(m)
          }
          buffer.numberFrom(spans(t)(n)._1)
        }
      }
      val state = key(trees)
      state.journal = TreeEntryJournal.restored(trees, rowSegments.iterator, segments, entries, saves, nextRowId)
      state
    }
  }

  def unpack(id: Long): (Int, Int, Long) =
    ((id >>> (NodeBits + NumberBits)).toInt, ((id >>> NumberBits) & ((1L << NodeBits) - 1)).toInt,
      id & ((1L << NumberBits) - 1))

  private def entriesDamaged(why: String): IllegalStateException = damaged(why, StateFormats.TreeEntries)
}
