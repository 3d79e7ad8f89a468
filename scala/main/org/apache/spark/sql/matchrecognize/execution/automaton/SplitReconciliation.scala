package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, UnsafeRow}
import org.apache.spark.sql.matchrecognize.plans.{MatchNumber, SemanticsMarker}
import org.apache.spark.storage.StorageLevel
import org.apache.spark.unsafe.Platform

/** What a task matching a range writes when its output is reconciled: rows, then its counts. */
trait SplitPiece extends Serializable

/**
 * Output rows packed one after the other (a size, then the row's bytes). The unmatched rows
 * an earlier range's match may cover are listed by their index among the piece's rows
 * (`tagged`, ascending) with their offset from their range's first row (`offsets`).
 */
final case class PackedRows(bytes: Array[Byte], rows: Int, tagged: Array[Int], offsets: Array[Long])
  extends SplitPiece

/**
 * Output of a split input ([[SplitMatching]]) that depends on the matches of earlier ranges,
 * known only once those are matched:
 *  - MATCH_NUMBER(): each range numbers the matches of its partitions from 1; the rows
 *    handed out have the matches of their partition in the ranges before added to their
 *    MATCH_NUMBER() columns;
 *  - WITH UNMATCHED ROWS where matches may overlap: a range writes as unmatched the rows of
 *    its first partition no match of its own covers, some of which a match of an earlier
 *    range may cover; those are dropped.
 * So the ranges' output rows are kept (Spark's block store: memory, else local disk) while a
 * first job matches every range and reports its [[RangeMatchCounts]]; the rows are then
 * handed out reconciled. Every range is matched once.
 */
object SplitReconciliation {

  /** About how many bytes of rows one [[PackedRows]] holds. */
  private val PieceBytes = 1 << 20

  /**
   * The ordinals in `output` of the measures that are MATCH_NUMBER() itself: the columns
   * renumbered. [[SplitMatching]] splits no other use of MATCH_NUMBER().
   */
  def columns(measures: Seq[Expression], measureOutput: Seq[Attribute], output: Seq[Attribute]): Array[Int] =
    measures.zip(measureOutput).collect {
      case (e, a) if isMatchNumber(e) => output.indexWhere(_.exprId == a.exprId)
    }.filter(_ >= 0).toArray

  /** A measure that is MATCH_NUMBER() itself (RUNNING and FINAL give the same). */
  def isMatchNumber(e: Expression): Boolean = e match {
    case MatchNumber() => true
    case SemanticsMarker(child, _) => isMatchNumber(child)
    case _ => false
  }

  /**
   * A range's output rows packed, followed by its counts (read once the rows are all out);
   * `offset`, when given, is asked after each row for its unmatched offset.
   */
  def pack(
      rows: Iterator[InternalRow],
      counts: () => RangeMatchCounts,
      offset: Option[() => Long]): Iterator[SplitPiece] =
    new Iterator[SplitPiece] {
      private var countsGiven = false
      private var buffer = new Array[Byte](PieceBytes + (PieceBytes >> 3))
      private val tagged = new LongBuffer
      private val offsets = new LongBuffer

      override def hasNext: Boolean = rows.hasNext || !countsGiven

      override def next(): SplitPiece =
        if (rows.hasNext) {
          tagged.clear()
          offsets.clear()
          var size = 0
          var n = 0
          while (rows.hasNext && size < PieceBytes) {
            val row = rows.next().asInstanceOf[UnsafeRow]
            val length = row.getSizeInBytes
            if (size + 4 + length > buffer.length) {
              buffer = java.util.Arrays.copyOf(buffer, math.max(buffer.length * 2, size + 4 + length))
            }
            Platform.putInt(buffer, Platform.BYTE_ARRAY_OFFSET + size, length)
            row.writeToMemory(buffer, Platform.BYTE_ARRAY_OFFSET + size + 4)
            size += 4 + length
            if (offset.isDefined) {
              val o = offset.get()
              if (o >= 0) { tagged.add(n); offsets.add(o) }
            }
            n += 1
          }
          PackedRows(java.util.Arrays.copyOf(buffer, size), n, tagged.toArray.map(_.toInt), offsets.toArray)
        } else if (!countsGiven) {
          countsGiven = true
          counts()
        } else throw new NoSuchElementException
    }

  /**
   * Keeps the ranges' pieces, matches every range (a job), and returns the rows reconciled;
   * `numberColumns` are the MATCH_NUMBER() columns of the `numFields` output columns.
   */
  def reconciled(pieces: RDD[SplitPiece], numberColumns: Array[Int], numFields: Int): RDD[InternalRow] = {
    pieces.persist(StorageLevel.MEMORY_AND_DISK)
    val counts = pieces.context.runJob(pieces, (it: Iterator[SplitPiece]) => countsOf(it)).toIndexedSeq
    val before = RangeMatchCounts.numberedBefore(counts)
    val covered = RangeMatchCounts.coveredAtStart(counts)
    val firstRows = counts.map(_.firstRows)
    pieces.mapPartitionsWithIndex { (i, it) =>
      val add = if (numberColumns.isEmpty) 0L else before(i)
      val cover = covered(i)
      var n = 0L
      unpacked(it, numFields) { (row, offset) =>
        n += 1
        if (offset >= 0 && offset < cover) null
        else if (add == 0 || n > firstRows(i)) row
        else {
          // The kept piece must stay as matched: a task run again reads it again.
          val raised = row.copy()
          // An unmatched row (WITH UNMATCHED ROWS) has no number.
          numberColumns.foreach(c => if (!raised.isNullAt(c)) raised.setLong(c, raised.getLong(c) + add))
          raised
        }
      }
    }
  }

  private def countsOf(pieces: Iterator[SplitPiece]): RangeMatchCounts = {
    var counts = RangeMatchCounts.None
    pieces.foreach {
      case c: RangeMatchCounts => counts = c
      case _ =>
    }
    counts
  }

  /**
   * The rows of the pieces as `reconcile` returns them from each row and its unmatched offset
   * (-1 when it has none); null drops the row.
   */
  private def unpacked(pieces: Iterator[SplitPiece], numFields: Int)(
      reconcile: (UnsafeRow, Long) => UnsafeRow): Iterator[UnsafeRow] =
    pieces.flatMap {
      case p: PackedRows =>
        var offset = 0
        var nextTag = 0
        Iterator.tabulate(p.rows) { i =>
          val size = Platform.getInt(p.bytes, Platform.BYTE_ARRAY_OFFSET + offset)
          val row = new UnsafeRow(numFields)
          row.pointTo(p.bytes, Platform.BYTE_ARRAY_OFFSET + offset + 4, size)
          offset += 4 + size
          val tag =
            if (nextTag < p.tagged.length && p.tagged(nextTag) == i) { nextTag += 1; p.offsets(nextTag - 1) }
            else -1L
          reconcile(row, tag)
        }.filter(_ != null)
      case _ => Iterator.empty
    }
}
