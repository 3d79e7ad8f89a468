package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * What a decoded SKIP TILL ANY MATCH state knows of its entries ([[TreeEntryCodec]]) as it
 * last saved them: each row's id and how many saved matches hold it, and per buffer the
 * numbers of the first match and of the next one it had saved. With the matches each buffer
 * drops recorded as it drops them (`NodeBuffer.purged`), a save writes only what changed.
 */
private[streaming] final class TreeEntryJournal private (
    trees: Array[TreeState],
    private val refs: java.util.IdentityHashMap[UnsafeRow, TreeEntryJournal.RowRef],
    var saves: Long,
    var nextRowId: Long,
    savedFirst: Array[Array[Long]],
    savedNext: Array[Array[Long]],
    savedHeld: java.util.IdentityHashMap[PartialMatch, PartialMatch]) {

  import TreeEntryJournal.RowRef

  /** Encoded bytes of the entries held. */
  var weight: Long = 0L

  trees.foreach(_.buffers.foreach(b => b.purged = new java.util.ArrayList[PartialMatch]()))

  /** The id of a row a saved match holds. */
  def idOf(row: UnsafeRow): Long = if (row == null) -1L else refs.get(row).id

  /**
   * Writes the matches added since the last save and their new rows, then deletes the
   * matches dropped since and the rows no match holds any more (in that order, so that a
   * row a dropped match shares with an added one stays).
   */
  def saveChanges(trees: Array[TreeState], entries: KeyEntries): Unit = {
    trees.indices.foreach { t =>
      trees(t).buffers.indices.foreach { n =>
        val b = trees(t).buffers(n)
        var number = math.max(savedNext(t)(n), b.added - b.size)
        b.addedAfter(number).foreach { m =>
          hold(m, entries)
          val (out, written) = StateBytes.writer()
          TreeKeyStateCodec.writeMatch(out, m)(r => out.writeLong(idOf(r)))
          out.flush()
          val bytes = written()
          entries.matches.put(TreeEntryCodec.matchId(t, n, number), bytes)
          weight += bytes.length
          number += 1
        }
      }
    }
    val held = new java.util.IdentityHashMap[PartialMatch, PartialMatch]()
    trees.foreach(_.held.forEach(m => held.put(m, m)))
    held.keySet().forEach(m => if (!savedHeld.containsKey(m)) hold(m, entries))

    trees.indices.foreach { t =>
      trees(t).buffers.indices.foreach { n =>
        val b = trees(t).buffers(n)
        var number = savedFirst(t)(n)
        b.purged.forEach { m =>
          if (number < savedNext(t)(n)) {
            entries.matches.remove(TreeEntryCodec.matchId(t, n, number))
            weight -= TreeEntryJournal.matchBytes(m)
            release(m, entries)
          }
          number += 1
        }
        b.purged.clear()
        savedFirst(t)(n) = b.added - b.size
        savedNext(t)(n) = b.added
      }
    }
    savedHeld.keySet().forEach(m => if (!held.containsKey(m)) release(m, entries))
    savedHeld.clear()
    savedHeld.putAll(held)
    saves += 1
  }

  private def hold(m: PartialMatch, entries: KeyEntries): Unit = m.rows.foreach { r =>
    if (r != null) {
      var ref = refs.get(r)
      if (ref == null) {
        val (out, written) = StateBytes.writer()
        TreeKeyStateCodec.writeRow(out, r)
        out.flush()
        val bytes = written()
        ref = new RowRef(nextRowId, bytes.length)
        nextRowId += 1
        entries.rows.put(ref.id, bytes)
        weight += bytes.length
        refs.put(r, ref)
      }
      ref.holders += 1
    }
  }

  private def release(m: PartialMatch, entries: KeyEntries): Unit = m.rows.foreach { r =>
    if (r != null) {
      val ref = refs.get(r)
      ref.holders -= 1
      if (ref.holders == 0) {
        refs.remove(r)
        entries.rows.remove(ref.id)
        weight -= ref.bytes
      }
    }
  }
}

private[streaming] object TreeEntryJournal {

  final class RowRef(val id: Long, val bytes: Int) {
    var holders = 0
  }

  /** A match's encoded size: its width, a row id per leaf, and four positions. */
  def matchBytes(m: PartialMatch): Int = 4 + 8 * m.rows.length + 32

  /**
   * The journal of a state none of whose entries are written yet (a new key, or a state read
   * from one value): its buffers are numbered from 0, and its next save writes them all.
   */
  def fresh(trees: Array[TreeState]): TreeEntryJournal = {
    trees.foreach(_.buffers.foreach(_.numberFrom(0L)))
    new TreeEntryJournal(trees, new java.util.IdentityHashMap(), 0L, 0L,
      trees.map(_.buffers.map(_ => 0L)), trees.map(_.buffers.map(_ => 0L)),
      new java.util.IdentityHashMap())
  }

  /**
   * The journal of a state read back from its entries: `rowIds` are the ids of the rows read,
   * the holders of which are counted here; a row no match holds is deleted.
   */
  def restored(trees: Array[TreeState], rowIds: java.util.IdentityHashMap[UnsafeRow, java.lang.Long],
      entries: KeyEntries, saves: Long, nextRowId: Long): TreeEntryJournal = {
    val refs = new java.util.IdentityHashMap[UnsafeRow, RowRef](rowIds.size)
    val held = new java.util.IdentityHashMap[PartialMatch, PartialMatch]()
    val journal = new TreeEntryJournal(trees, refs, saves, nextRowId,
      trees.map(_.buffers.map(b => b.added - b.size)), trees.map(_.buffers.map(_.added)), held)
    rowIds.forEach { (row, id) =>
      refs.put(row, new RowRef(id, 8 + row.getSizeInBytes))
    }
    def count(m: PartialMatch): Unit = m.rows.foreach(r => if (r != null) refs.get(r).holders += 1)
    trees.foreach { t =>
      t.buffers.foreach(_.iterator.foreach { m =>
        count(m)
        journal.weight += matchBytes(m)
      })
      t.held.forEach { m => count(m); held.put(m, m) }
    }
    val unheld = new java.util.ArrayList[UnsafeRow]()
    refs.forEach((row, ref) => if (ref.holders == 0) unheld.add(row) else journal.weight += ref.bytes)
    unheld.forEach { row =>
      entries.rows.remove(refs.get(row).id)
      refs.remove(row)
    }
    journal
  }
}
