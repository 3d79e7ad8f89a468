package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Expression, GenericInternalRow, JoinedRow, Lag, Literal, Rank, RowNumber, UnsafeProjection, UnsafeRow, WindowExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Count}
import org.apache.spark.sql.types.DataType

/**
 * How far a key's window columns have got: rows seen, the ORDER BY key and rank of the
 * last one, and the last rows PREV can reach (oldest first). Kept in the key's state.
 */
final class WindowProgress(
    var rows: Long,
    var lastKey: UnsafeRow,
    var lastRank: Long,
    var recent: Array[UnsafeRow]) extends Serializable

/**
 * The window columns a SKIP TILL ANY MATCH plan adds to its input, computed as a stream
 * delivers a key's rows in physical order, with the values the batch plan's window
 * functions give: RANK over ORDER BY, the count of rows up to the last ORDER BY peer, ROW_NUMBER,
 * and LAG (a PREV neighbour). A row and its ORDER BY peers always arrive in one delivery
 * (the watermark releases every row of one event time at once), so a row's count of peers
 * is known when it is delivered.
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
        Previous(UnsafeProjection.create(Seq(value), input), k, value.dataType)
      // The plan refuses NEXT over a stream; no other window function is planned.
      case other => throw new IllegalStateException(s"window column ${other.sql} in a stream")
    }
  }.toArray

  /** How many earlier rows PREV reaches. */
  private val reach: Int = kinds.collect { case p: Previous => p.offset }.maxOption.getOrElse(0)
  private val keyOf = UnsafeProjection.create(orderKeys, input)

  def attributes: Seq[Attribute] = columns.map(_.toAttribute)

  def start(): WindowProgress = new WindowProgress(0L, null, 0L, Array.empty)

  /**
   * Calls `f` with each of `rows` (the key's next rows, in physical order) followed by its
   * window columns, and moves `progress` past them.
   */
  def foreach(progress: WindowProgress, rows: IndexedSeq[UnsafeRow])(f: InternalRow => Unit): Unit = {
    val n = rows.length
    val keys = rows.map(r => keyOf(r).copy())
    // The index of the last ORDER BY peer of each row.
    val lastPeer = new Array[Int](n)
    var i = n - 1
    while (i >= 0) {
      lastPeer(i) = if (i + 1 < n && keys(i + 1) == keys(i)) lastPeer(i + 1) else i
      i -= 1
    }
    val values = new GenericInternalRow(kinds.length)
    val joined = new JoinedRow
    i = 0
    while (i < n) {
      val row = rows(i)
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
          case Previous(value, k, dataType) =>
            val back = i - k
            val source =
              if (back >= 0) rows(back)
              else {
                val j = progress.recent.length + back
                if (j >= 0) progress.recent(j) else null
              }
            if (source == null) null else value(source).copy().get(0, dataType)
        }
        values.update(c, v)
        c += 1
      }
      f(joined(row, values))
      i += 1
    }
    progress.rows += n
    if (reach > 0) progress.recent = (progress.recent ++ rows).takeRight(reach)
  }
}

private object RunningWindowColumns {
  sealed trait Column
  case object RankColumn extends Column
  case object PeersCount extends Column
  case object RowNumberColumn extends Column
  final case class Previous(value: UnsafeProjection, offset: Int, dataType: DataType) extends Column
}
