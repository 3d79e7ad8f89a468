package org.apache.spark.sql.matchrecognize.execution.automaton

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.ByteBuffer

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, UnsafeRow}
import org.apache.spark.sql.matchrecognize.plans.{MatchNumber, SemanticsMarker}
import org.apache.spark.storage.StorageLevel
import org.apache.spark.unsafe.Platform

/** What a task matching a range with MATCH_NUMBER() measures writes: rows, then its counts. */
trait SplitPiece extends Serializable

/** Output rows packed one after the other (a size, then the row's bytes). */
final case class PackedRows(bytes: Array[Byte], rows: Int) extends SplitPiece

/**
 * MATCH_NUMBER() over a split input ([[SplitMatching]]). Each range numbers the matches of
 * its partitions from 1, and how many matches a partition had in the ranges before is known
 * only once those are matched. So the ranges' output rows are kept (Spark's block store:
 * memory, else local disk) while a first job matches every range and reports its
 * [[RangeMatchCounts]]; the rows then handed out have the matches of their partition in the
 * ranges before added to their MATCH_NUMBER() columns. Every range is matched once.
 */
object SplitMatchNumbers {

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

  /** A range's output rows packed, followed by its counts (read once the rows are all out). */
  def pack(rows: Iterator[InternalRow], counts: () => RangeMatchCounts): Iterator[SplitPiece] =
    new Iterator[SplitPiece] {
      private var countsGiven = false
      private val writeBuffer = new Array[Byte](4096)

      override def hasNext: Boolean = rows.hasNext || !countsGiven

      override def next(): SplitPiece =
        if (rows.hasNext) {
          val bytes = new ByteArrayOutputStream(PieceBytes / 8)
          val data = new DataOutputStream(bytes)
          var n = 0
          while (rows.hasNext && data.size < PieceBytes) {
            val row = rows.next().asInstanceOf[UnsafeRow]
            data.writeInt(row.getSizeInBytes)
            row.writeToStream(data, writeBuffer)
            n += 1
          }
          data.flush()
          PackedRows(bytes.toByteArray, n)
        } else if (!countsGiven) {
          countsGiven = true
          counts()
        } else throw new NoSuchElementException
    }

  /**
   * Keeps the ranges' pieces, matches every range (a job), and returns the rows renumbered;
   * `numberColumns` are the MATCH_NUMBER() columns of the `numFields` output columns.
   */
  def renumbered(pieces: RDD[SplitPiece], numberColumns: Array[Int], numFields: Int): RDD[InternalRow] = {
    pieces.persist(StorageLevel.MEMORY_AND_DISK)
    val counts = pieces.context.runJob(pieces, (it: Iterator[SplitPiece]) => countsOf(it))
    val before = RangeMatchCounts.numberedBefore(counts.toIndexedSeq)
    val firstRows = counts.map(_.firstRows)
    pieces.mapPartitionsWithIndex { (i, it) =>
      val add = before(i)
      var n = 0L
      unpacked(it, numFields).map { row =>
        n += 1
        if (add == 0 || n > firstRows(i)) row
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

  private def unpacked(pieces: Iterator[SplitPiece], numFields: Int): Iterator[UnsafeRow] =
    pieces.flatMap {
      case p: PackedRows =>
        val sizes = ByteBuffer.wrap(p.bytes) // DataOutputStream's big-endian ints
        var offset = 0
        Iterator.fill(p.rows) {
          val size = sizes.getInt(offset)
          val row = new UnsafeRow(numFields)
          row.pointTo(p.bytes, Platform.BYTE_ARRAY_OFFSET + offset + 4, size)
          offset += 4 + size
          row
        }
      case _ => Iterator.empty
    }
}
