package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, GenericInternalRow, JoinedRow, Lag, Lead, Literal, Rank, RowNumber, UnsafeProjection, UnsafeRow, WindowExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Count}
import org.apache.spark.sql.types.DataType

/**
 * How far a key's window columns have got: rows passed on, the ORDER BY key and rank of
 * the last one, the last rows PREV can reach (oldest first), and the rows delivered but not
 * passed on yet because NEXT must read rows after them. Kept in the key's state.
 *
 * Serializable with the serial version the release writing format 4 computed, only so
 * that Java-serialized checkpoints of that format still read; format 5 is written by
 * `streaming.TreeKeyStateCodec`. Its fields must keep their names and types.
 */
@SerialVersionUID(6079679825764164078L)
final class WindowProgress(
    var rows: Long,
    var lastKey: UnsafeRow,
    var lastRank: Long,
    var recent: Array[UnsafeRow],
    var pending: Array[UnsafeRow]) extends Serializable

/**
 * The window columns a SKIP TILL ANY MATCH plan adds to its input, computed as a stream
 * delivers a key's rows in physical order, with the values the batch plan's window
 * functions give: RANK over ORDER BY, the count of rows up to the last ORDER BY peer,
 * ROW_NUMBER, LAG (a PREV neighbour) and LEAD (a NEXT neighbour). A row and its ORDER BY
 * peers always arrive in one delivery (the watermark releases every row of one event time
 * at once), so a row's count of peers is known when it is delivered; a row NEXT reads
 * ahead from is passed on once the rows it reads have been delivered.
 */
final class RunningWindowColumns(columns: Seq[Alias], input: Seq[Attribute], orderKeys: Seq[Expression]) {

  import RunningWindowColumns._

  private val kinds: Array[Column] = columns.map { a =>
    a.child match {
      case WindowExpression(_: Rank, _) => RankColumn
      case WindowExpression(e: AggregateExpression, _) if e.aggregateFunction.isInstanceOf[Count] =>
        PeersCount
      case WindowExpression(_: RowNumber, _) => RowNumberColumn
      case WindowExpression(Lag(value, Literal(k: Int, _), _, _), _) =>
        Neighbour(UnsafeProjection.create(Seq(value), input), -k, value.dataType)
      case WindowExpression(Lead(value, Literal(k: Int, _), _, _), _) =>
        Neighbour(UnsafeProjection.create(Seq(value), input), k, value.dataType)
      // No other window function is planned.
      case other => throw new IllegalStateException(s"window column ${other.sql} in a stream")
    }
  }.toArray

  /** How many earlier rows PREV reaches, and later rows NEXT reads. */
  private val behind: Int =
    kinds.collect { case n: Neighbour if n.offset < 0 => -n.offset }.reduceOption(_ max _).getOrElse(0)
  private val ahead: Int =
    kinds.collect { case n: Neighbour if n.offset > 0 => n.offset }.reduceOption(_ max _).getOrElse(0)
  private val keyOf = UnsafeProjection.create(orderKeys, input)

  def attributes: Seq[Attribute] = columns.map(_.toAttribute)

  def start(): WindowProgress = new WindowProgress(0L, null, 0L, Array.empty, Array.empty)

  /**
   * Calls `f` with each of the key's rows that can be passed on now, in physical order,
   * followed by its window columns: the rows held back before, then `delivered` (the key's
   * next rows), except the last rows whose NEXT is not delivered yet, unless the key's rows
   * have `ended` (NEXT past the last row is then NULL, as at a partition's end). Moves
   * `progress`.
   */
  def foreach(progress: WindowProgress, delivered: IndexedSeq[UnsafeRow], ended: Boolean = false)(
      f: InternalRow => Unit): Unit = {
    val rows = progress.pending.toIndexedSeq ++ delivered
    val n = if (ended) rows.length else math.max(0, rows.length - ahead)
    val keys = rows.map(r => keyOf(r).copy())
    // The index of the last ORDER BY peer of each row.
    val lastPeer = new Array[Int](rows.length)
    var i = rows.length - 1
    while (i >= 0) {
      lastPeer(i) = if (i + 1 < rows.length && keys(i + 1) == keys(i)) lastPeer(i + 1) else i
      i -= 1
    }
    val values = new GenericInternalRow(kinds.length)
    val joined = new JoinedRow
    i = 0
    while (i < n) {
      val rank =
        if (progress.lastKey != null && keys(i) == progress.lastKey) progress.lastRank
        else progress.rows + i + 1
      progress.lastKey = keys(i)
      progress.lastRank = rank
      var c = 0
      while (c < kinds.length) {
        val v: Any = kinds(c) match {
          case RankColumn => rank.toInt
          case PeersCount => progress.rows + lastPeer(i) + 1
          case RowNumberColumn => (progress.rows + i + 1).toInt
          case Neighbour(value, k, dataType) =>
            val at = i + k
            val source =
              if (at >= rows.length) null
              else if (at >= 0) rows(at)
              else {
                val j = progress.recent.length + at
                if (j >= 0) progress.recent(j) else null
              }
            if (source == null) null else value(source).copy().get(0, dataType)
        }
        values.update(c, v)
        c += 1
      }
      f(joined(rows(i), values))
      i += 1
    }
    progress.rows += n
    if (behind > 0) progress.recent = (progress.recent ++ rows.take(n)).takeRight(behind)
    progress.pending = rows.drop(n).toArray
  }
}

private object RunningWindowColumns {
  sealed trait Column
  case object RankColumn extends Column
  case object PeersCount extends Column
  case object RowNumberColumn extends Column

  /** The value of `value` on the row `offset` rows away (before when negative). */
  final case class Neighbour(value: UnsafeProjection, offset: Int, dataType: DataType) extends Column
}
