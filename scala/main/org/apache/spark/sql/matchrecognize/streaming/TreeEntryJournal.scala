package org.apache.spark.sql.matchrecognize.streaming

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * What a decoded SKIP TILL ANY MATCH state knows of its entries ([[TreeEntryCodec]]) as it
 * last saved them: the segments of rows and of each node's partial matches it wrote, each
 * row's id and how many saved matches hold it, and per buffer the numbers of the first
 * match and of the next one it had saved. With the matches each buffer drops recorded as it
 * drops them (`NodeBuffer.purged`), a save writes one segment of the rows it added, one per
 * node of the matches it added, and deletes the segments nothing holds any more.
 */
private[streaming] final class TreeEntryJournal private (
    trees: Array[TreeState],
    refs: java.util.IdentityHashMap[UnsafeRow, TreeEntryJournal.RowRef],
    segments: Array[Array[java.util.ArrayDeque[TreeEntryJournal.MatchSegment]]],
    var saves: Long,
    var nextRowId: Long,
    written: Boolean) {

  import TreeEntryJournal.{MatchSegment, RowRef, RowSegment}

  // What the entries hold: nothing yet, or the state as it is.
  private val savedFirst: Array[Array[Long]] =
    trees.map(_.buffers.map(b => if (written) b.added - b.size else 0L))
  private val savedNext: Array[Array[Long]] = trees.map(_.buffers.map(b => if (written) b.added else 0L))
  private val savedHeld = new java.util.IdentityHashMap[PartialMatch, PartialMatch]()
  if (written) trees.foreach(_.held.forEach(m => savedHeld.put(m, m)))

  /** Encoded bytes of the entries held. */
  var weight: Long = segments.iterator.flatten.flatMap(_.asScala).map(_.bytes.toLong).sum

  trees.foreach(_.buffers.foreach(b => b.purged = new java.util.ArrayList[PartialMatch]()))

  /** The id of a row a saved match holds. */
  def idOf(row: UnsafeRow): Long = if (row == null) -1L else refs.get(row).id

  /**
   * Writes the rows the matches added since the last save hold that no saved match held,
   * as one segment, and the matches added, a segment per node; then deletes what the
   * matches dropped since leave unheld (in that order, so that a row a dropped match
   * shares with an added one stays).
   */
  def saveChanges(entries: KeyEntries): Unit = {
    val added = trees.indices.map(t =>
      trees(t).buffers.indices.map { n =>
        val b = trees(t).buffers(n)
        math.max(savedNext(t)(n), b.added - b.size)
      }.toArray).toArray
    val held = new java.util.IdentityHashMap[PartialMatch, PartialMatch]()
    trees.foreach(_.held.forEach(m => held.put(m, m)))

    val newRows = new java.util.ArrayList[UnsafeRow]()
    val segment = new RowSegment(nextRowId)
    def hold(m: PartialMatch): Unit = m.rows.foreach { r =>
      if (r != null) {
        var ref = refs.get(r)
        if (ref == null) {
          ref = new RowRef(nextRowId, segment)
          nextRowId += 1
          segment.live += 1
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
    if (!newRows.isEmpty) {
      val (out, written) = StateBytes.writer()
      out.writeInt(newRows.size)
      newRows.forEach(r => TreeKeyStateCodec.writeRow(out, r))
      out.flush()
      val bytes = written()
      segment.bytes = bytes.length
      entries.rows.put(segment.start, bytes)
      weight += bytes.length
    }

    trees.indices.foreach { t =>
      trees(t).buffers.indices.foreach { n =>
        val b = trees(t).buffers(n)
        val from = added(t)(n)
        if (b.added > from) {
          val (out, written) = StateBytes.writer()
          out.writeInt((b.added - from).toInt)
          b.addedAfter(from).foreach(m => TreeKeyStateCodec.writeMatch(out, m)(r => out.writeLong(idOf(r))))
          out.flush()
          val bytes = written()
          entries.matches.put(TreeEntryCodec.matchId(t, n, from), bytes)
          segments(t)(n).addLast(new MatchSegment(from, b.added, bytes.length))
          weight += bytes.length
        }
      }
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
        val kept = segments(t)(n)
        while (!kept.isEmpty && kept.peekFirst().end <= first) {
          val gone = kept.pollFirst()
          entries.matches.remove(TreeEntryCodec.matchId(t, n, gone.start))
          weight -= gone.bytes
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
        ref.segment.live -= 1
        if (ref.segment.live == 0) {
          entries.rows.remove(ref.segment.start)
          weight -= ref.segment.bytes
        }
      }
    }
  }
}

private[streaming] object TreeEntryJournal {

  /** A segment of rows (ids from `start` on) and how many of them matches hold. */
  final class RowSegment(val start: Long) {
    var bytes = 0
    var live = 0
  }

  final class RowRef(val id: Long, val segment: RowSegment) {
    var holders = 0
  }

  /** A segment of a node's matches: numbers `start` until `end`. */
  final class MatchSegment(val start: Long, val end: Long, val bytes: Int)

  /**
   * The journal of a state none of whose entries are written yet (a new key, or a state read
   * from one value): its buffers are numbered from 0, and its next save writes them all.
   */
  def fresh(trees: Array[TreeState]): TreeEntryJournal = {
    trees.foreach(_.buffers.foreach(_.numberFrom(0L)))
    new TreeEntryJournal(trees, new java.util.IdentityHashMap(),
      trees.map(_.buffers.map(_ => new java.util.ArrayDeque[MatchSegment]())), 0L, 0L, written = false)
  }

  /**
   * The journal of a state read back from its entries: `rows` are the rows of each row
   * segment read (by segment start, with its encoded size), `segments` the match segments of
   * each node. Holders are counted here; a row segment no match holds is deleted.
   */
  def restored(trees: Array[TreeState], rows: Iterator[(Long, Int, Array[UnsafeRow])],
      segments: Array[Array[java.util.ArrayDeque[MatchSegment]]], entries: KeyEntries,
      saves: Long, nextRowId: Long): TreeEntryJournal = {
    val all = new java.util.IdentityHashMap[UnsafeRow, RowRef]()
    val rowSegments = rows.map { case (start, bytes, segmentRows) =>
      val segment = new RowSegment(start)
      segment.bytes = bytes
      segmentRows.indices.foreach(i => all.put(segmentRows(i), new RowRef(start + i, segment)))
      segment
    }.toVector
    def count(m: PartialMatch): Unit = m.rows.foreach(r => if (r != null) all.get(r).holders += 1)
    trees.foreach { t =>
      t.buffers.foreach(_.iterator.foreach(count))
      t.held.forEach(m => count(m))
    }
    val refs = new java.util.IdentityHashMap[UnsafeRow, RowRef](all.size)
    all.forEach { (row, ref) =>
      if (ref.holders > 0) {
        refs.put(row, ref)
        ref.segment.live += 1
      }
    }
    val journal = new TreeEntryJournal(trees, refs, segments, saves, nextRowId, written = true)
    rowSegments.foreach { s =>
      if (s.live == 0) entries.rows.remove(s.start) else journal.weight += s.bytes
    }
    journal
  }
}
