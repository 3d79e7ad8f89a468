package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.logical.LogicalGroupState
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

/**
 * What both streaming MATCH_RECOGNIZE functions share: a key's new rows arrive as the
 * struct of the input columns (`input`), of which `eventTime` is the event time; `keys` are
 * the PARTITION BY columns that name a key in errors. The function is Spark's
 * `flatMapGroupsWithState` function as it is; under `transformWithState` a
 * [[MatchRecognizeProcessor]] calls [[process]]. Each task deserializes its own copy, so what
 * is compiled from it is per task.
 */
abstract class KeyedStreamFunction(
    input: Seq[Attribute],
    eventTime: Attribute,
    keys: Seq[Attribute],
    description: String)
  extends ((Any, Iterator[Any], LogicalGroupState[Any]) => Iterator[Any]) with Serializable {

  protected val timeOrdinal: Int = input.indexWhere(_.exprId == eventTime.exprId)
  require(timeOrdinal >= 0, s"event-time column $eventTime is not among the input columns")

  /**
   * Matches a key's new rows (none when called back), keeping its state in `state`; returns
   * the output rows decided now, then one statistics row.
   */
  def process(key: InternalRow, values: Iterator[Any], state: KeyStateAccess): Iterator[Any]

  /**
   * The JVM's budget of states kept decoded, raised to what the query's session asks for
   * (SQL settings reach a task with it); touched before a task's first call.
   */
  @transient protected lazy val stateBudget: Unit =
    DecodedStates.shared.allowAtLeast(MatchRecognizeConf.keptStateBytes(SQLConf.get))

  override final def apply(key: Any, values: Iterator[Any], group: LogicalGroupState[Any]): Iterator[Any] = {
    // A copy: the operator may reuse the key's row, which names the key's decoded state.
    val row = key.asInstanceOf[InternalRow].copy()
    process(row, values, new GroupStateAccess(group.asInstanceOf[GroupState[Array[Byte]]], row))
  }

  /**
   * Whether the function keeps a key's state per entry where the operator can
   * ([[KeyStateAccess.entries]]): the operator then gives it [[KeyEntries]].
   */
  def keepsEntries: Boolean = false

  /** The columns of an arriving row. */
  def inputSchema: StructType = DataTypeUtils.fromAttributes(input)

  /** The event time of an arriving row (the struct of the input columns), NULL as None. */
  def eventTimeOf(value: Any): Option[Long] = {
    val row = value.asInstanceOf[InternalRow]
    if (row.isNullAt(timeOrdinal)) None else Some(row.getLong(timeOrdinal))
  }

  @transient private lazy val toUnsafe = UnsafeProjection.create(
    input.zipWithIndex.map { case (a, i) => BoundReference(i, a.dataType, a.nullable) })

  @transient private lazy val toExternal = CatalystTypeConverters.createToScalaConverter(inputSchema)

  /** An arriving row's input columns (not the operator's tag) as a `Row`. */
  def externalRowOf(value: Any): Row =
    toExternal(toUnsafe(value.asInstanceOf[InternalRow])).asInstanceOf[Row]

  /** The key's new rows as unsafe rows; rows whose event time is NULL have no place in event time. */
  protected def arrivals(values: Iterator[Any]): Iterator[UnsafeRow] =
    values.map(v => toUnsafe(v.asInstanceOf[InternalRow]).copy()).filterNot(_.isNullAt(timeOrdinal))

  /** `PARTITION BY k = v, ...` for a key's row of `keys`, or "" without PARTITION BY. */
  protected def describe(key: InternalRow): String =
    if (keys.isEmpty || key == null) ""
    else keys.zipWithIndex.map { case (k, i) =>
      val v = if (key.isNullAt(i)) "NULL" else key.get(i, k.dataType).toString
      s"${k.name} = ${if (v.length > 40) v.take(40) + "..." else v}"
    }.mkString("PARTITION BY ", ", ", "")

  override def toString: String = description
}
