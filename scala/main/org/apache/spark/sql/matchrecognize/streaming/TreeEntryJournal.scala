package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * What a decoded SKIP TILL ANY MATCH state knows of its entries ([[TreeEntryCodec]]) as it
 * last saved them: the entry each save wrote (the rows and partial matches it added), each
 * row's id and how many saved matches hold it, which entry each node's saved matches are in,
 * and per buffer the numbers of the first match and of the next one it had saved. With the
 * matches each buffer drops recorded as it drops them (`NodeBuffer.purged`), a save writes
 * one entry of what it added and deletes the entries of which nothing is live any more.
 */
private[streaming] final class TreeEntryJournal private (
    trees: Array[TreeState],
    refs: java.util.IdentityHashMap[UnsafeRow, TreeEntryJournal.RowRef],
    parts: Array[Array[java.util.ArrayDeque[TreeEntryJournal.Part]]],
    var saves: Long,
    var nextRowId: Long,
    written: Boolean) {

  import TreeEntryJournal.{Part, RowRef, Written}

  // What the entries hold: nothing yet, or the state as it is.
  private val savedFirst: Array[Array[Long]] =
    trees.map(_.buffers.map(b => if (written) b.added - b.size else 0L))
  private val savedNext: Array[Array[Long]] = trees.map(_.buffers.map(b => if (written) b.added else 0L))
  private val savedHeld = new java.util.IdentityHashMap[PartialMatch, PartialMatch]()
  if (written) trees.foreach(_.held.forEach(m => savedHeld.put(m, m)))

  /** Encoded bytes of the entries held. */
  var weight: Long = 0L

  trees.foreach(_.buffers.foreach(b => b.purged = new java.util.ArrayList[PartialMatch]()))

  /** The id of a row a saved match holds. */
  def idOf(row: UnsafeRow): Long = if (row == null) -1L else refs.get(row).id

  /** Counts an entry read back that something still holds. */
  private[streaming] def keep(entry: Written): Unit = weight += entry.bytes

  /**
   * Writes, as one entry named by the number of this save, the rows that the matches added
   * since the last save hold and no saved match held, and the matches added (per node, a
   * part); then releases what the matches dropped since held, deleting each entry left with
   * no row held and no match live (in that order, so that a row a dropped match shares with
   * an added one stays).
   */
  def saveChanges(entries: KeyEntries): Unit = {
    val added = trees.indices.map(t =>
      trees(t).buffers.indices.map { n =>
        val b = trees(t).buffers(n)
        math.max(savedNext(t)(n), b.added - b.size)
      }.toArray).toArray
    val held = new java.util.IdentityHashMap[PartialMatch, PartialMatch]()
    trees.foreach(_.held.forEach(m => held.put(m, m)))

    val entry = new Written(saves)
    val firstRowId = nextRowId
    val newRows = new java.util.ArrayList[UnsafeRow]()
    def hold(m: PartialMatch): Unit = m.rows.foreach { r =>
      if (r != null) {
        var ref = refs.get(r)
        if (ref == null) {
          ref = new RowRef(nextRowId, entry)
          nextRowId += 1
          entry.rowsHeld += 1
          newRows.add(r)
          refs.put(r, ref)
        }
        ref.holders += 1
      }
    }
    trees.indices.foreach(t =>
      trees(t).buffers.indices.foreach(n =>
        trees(t).buffers(n).addedAfter(added(t)(n)).foreach(hold)))
    held.keySet().forEach(m => if (!savedHeld.containsKey(m)) hold(m))

    val (out, bytes) = StateBytes.writer()
    out.writeLong(firstRowId)
    out.writeInt(newRows.size)
    newRows.forEach(r => TreeKeyStateCodec.writeRow(out, r))
    val changed = for {
      t <- trees.indices
      n <- trees(t).buffers.indices
      if trees(t).buffers(n).added > added(t)(n)
    } yield (t, n)
    out.writeInt(changed.length)
    changed.foreach { case (t, n) =>
      val b = trees(t).buffers(n)
      val from = added(t)(n)
      out.writeInt(t)
      out.writeInt(n)
      out.writeLong(from)
      out.writeInt((b.added - from).toInt)
      b.addedAfter(from).foreach(m => TreeKeyStateCodec.writeMatch(out, m)(r => out.writeLong(idOf(r))))
      parts(t)(n).addLast(new Part(from, b.added, entry))
      entry.partsLive += 1
    }
    if (entry.live) {
      out.flush()
      val encoded = bytes()
      entry.bytes = encoded.length
      entries.matches.put(entry.id, encoded)
      weight += encoded.length
    }

    trees.indices.foreach { t =>
      trees(t).buffers.indices.foreach { n =>
        val b = trees(t).buffers(n)
        var number = savedFirst(t)(n)
        b.purged.forEach { m =>
          if (number < savedNext(t)(n)) release(m, entries)
          number += 1
        }
        b.purged.clear()
        val first = b.added - b.size
        val kept = parts(t)(n)
        while (!kept.isEmpty && kept.peekFirst().end <= first) {
          val gone = kept.pollFirst().entry
          gone.partsLive -= 1
          deleteIfDead(gone, entries)
        }
        savedFirst(t)(n) = first
        savedNext(t)(n) = b.added
      }
    }
    savedHeld.keySet().forEach(m => if (!held.containsKey(m)) release(m, entries))
    savedHeld.clear()
    savedHeld.putAll(held)
    saves += 1
  }

  private def release(m: PartialMatch, entries: KeyEntries): Unit = m.rows.foreach { r =>
    if (r != null) {
      val ref = refs.get(r)
      ref.holders -= 1
      if (ref.holders == 0) {
        refs.remove(r)
        ref.entry.rowsHeld -= 1
        deleteIfDead(ref.entry, entries)
      }
    }
  }

  private def deleteIfDead(entry: Written, entries: KeyEntries): Unit =
    if (!entry.live) {
      entries.matches.remove(entry.id)
      weight -= entry.bytes
    }
}

private[streaming] object TreeEntryJournal {

  /** An entry a save wrote: how many of its rows saved matches hold, how many parts are live. */
  final class Written(val id: Long) {
    var bytes = 0
    var rowsHeld = 0
    var partsLive = 0
    def live: Boolean = rowsHeld > 0 || partsLive > 0
  }

  final class RowRef(val id: Long, val entry: Written) {
    var holders = 0
  }

  /** Matches of one node, numbers `start` until `end`, written in `entry`. */
  final class Part(val start: Long, val end: Long, val entry: Written)

  /**
   * The journal of a state none of whose entries are written yet (a new key, or a state read
   * from one value or from an earlier layout): its buffers are numbered from 0, and its next
   * save writes them all.
   */
  def fresh(trees: Array[TreeState]): TreeEntryJournal = {
    trees.foreach(_.buffers.foreach(_.numberFrom(0L)))
    new TreeEntryJournal(trees, new java.util.IdentityHashMap(),
      trees.map(_.buffers.map(_ => new java.util.ArrayDeque[Part]())), 0L, 0L, written = false)
  }

  /** An entry read back: its rows (ids from `firstRowId` on) and its parts (tree, node, start, end). */
  final case class ReadEntry(id: Long, bytes: Int, firstRowId: Long, rows: Array[UnsafeRow],
      parts: Seq[(Int, Int, Long, Long)])

  /**
   * The journal of a state read back from its entries. Holders are counted here; an entry
   * with no row held and no match live is deleted.
   */
  def restored(trees: Array[TreeState], read: Seq[ReadEntry], entries: KeyEntries, saves: Long,
      nextRowId: Long): TreeEntryJournal = {
    val written = read.map { e =>
      val w = new Written(e.id)
      w.bytes = e.bytes
      e -> w
    }
    val all = new java.util.IdentityHashMap[UnsafeRow, RowRef]()
    written.foreach { case (e, w) => e.rows.indices.foreach(i => all.put(e.rows(i), new RowRef(e.firstRowId + i, w))) }
    def count(m: PartialMatch): Unit = m.rows.foreach(r => if (r != null) all.get(r).holders += 1)
    trees.foreach { t =>
      t.buffers.foreach(_.iterator.foreach(count))
      t.held.forEach(m => count(m))
    }
    val refs = new java.util.IdentityHashMap[UnsafeRow, RowRef](all.size)
    all.forEach { (row, ref) =>
      if (ref.holders > 0) {
        refs.put(row, ref)
        ref.entry.rowsHeld += 1
      }
    }
    val parts = trees.map(_.buffers.map(_ => new java.util.ArrayDeque[Part]()))
    written.flatMap { case (e, w) => e.parts.map { case (t, n, start, end) => (t, n, new Part(start, end, w)) } }
      .sortBy(_._3.start)
      .foreach { case (t, n, part) =>
        val b = trees(t).buffers(n)
        if (part.end > b.added - b.size) {
          parts(t)(n).addLast(part)
          part.entry.partsLive += 1
        }
      }
    val journal = new TreeEntryJournal(trees, refs, parts, saves, nextRowId, written = true)
    written.foreach { case (_, w) => if (w.live) journal.keep(w) else entries.matches.remove(w.id) }
    journal
  }
}
