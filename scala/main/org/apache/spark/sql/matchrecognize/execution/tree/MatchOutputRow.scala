package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeRow}
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.matchrecognize.shims.RowGettersOfLine
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

/**
 * The row the output projection reads a match from (`TreeAlternative.schema`): the
 * partition key's columns, the match's columns (a [[LeafRowsView]] over its rows), then
 * its window span `lo`, `hi`. Each getter reaches the leaf row in two calls of known
 * classes, where nested [[org.apache.spark.sql.catalyst.expressions.JoinedRow]]s took
 * four virtual ones: the projection runs once per match, millions of times per task.
 */
private[tree] final class MatchOutputRow(keyTypes: Seq[DataType], view: LeafRowsView) extends RowGettersOfLine {
  private val keyWidth = keyTypes.length
  private val spanAt = keyWidth + view.numFields
  private var key: UnsafeRow = _
  private var lo = 0L
  private var hi = 0L

  /** The row of a match whose rows `view` reads now, under `key`. */
  def of(key: UnsafeRow, lo: Long, hi: Long): InternalRow = {
    this.key = key
    this.lo = lo
    this.hi = hi
    this
  }

  override protected def rowAt(i: Int): InternalRow = if (i < keyWidth) key else view
  override protected def fieldAt(i: Int): Int = if (i < keyWidth) i else i - keyWidth

  override def numFields: Int = spanAt + 2
  override def isNullAt(i: Int): Boolean =
    if (i < keyWidth) key.isNullAt(i) else i < spanAt && view.isNullAt(i - keyWidth)
  override def getLong(i: Int): Long =
    if (i >= spanAt) { if (i == spanAt) lo else hi }
    else if (i < keyWidth) key.getLong(i)
    else view.getLong(i - keyWidth)
  override def get(i: Int, dataType: DataType): AnyRef =
    if (i >= spanAt) java.lang.Long.valueOf(getLong(i))
    else if (i < keyWidth) key.get(i, dataType)
    else view.get(i - keyWidth, dataType)

  override def getBoolean(i: Int): Boolean = if (i < keyWidth) key.getBoolean(i) else view.getBoolean(i - keyWidth)
  override def getByte(i: Int): Byte = if (i < keyWidth) key.getByte(i) else view.getByte(i - keyWidth)
  override def getShort(i: Int): Short = if (i < keyWidth) key.getShort(i) else view.getShort(i - keyWidth)
  override def getInt(i: Int): Int = if (i < keyWidth) key.getInt(i) else view.getInt(i - keyWidth)
  override def getFloat(i: Int): Float = if (i < keyWidth) key.getFloat(i) else view.getFloat(i - keyWidth)
  override def getDouble(i: Int): Double = if (i < keyWidth) key.getDouble(i) else view.getDouble(i - keyWidth)
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal =
    if (i < keyWidth) key.getDecimal(i, precision, scale) else view.getDecimal(i - keyWidth, precision, scale)
  override def getUTF8String(i: Int): UTF8String =
    if (i < keyWidth) key.getUTF8String(i) else view.getUTF8String(i - keyWidth)
  override def getBinary(i: Int): Array[Byte] = if (i < keyWidth) key.getBinary(i) else view.getBinary(i - keyWidth)
  override def getInterval(i: Int): CalendarInterval =
    if (i < keyWidth) key.getInterval(i) else view.getInterval(i - keyWidth)
  override def getStruct(i: Int, numFields: Int): InternalRow =
    if (i < keyWidth) key.getStruct(i, numFields) else view.getStruct(i - keyWidth, numFields)
  override def getArray(i: Int): ArrayData = if (i < keyWidth) key.getArray(i) else view.getArray(i - keyWidth)
  override def getMap(i: Int): MapData = if (i < keyWidth) key.getMap(i) else view.getMap(i - keyWidth)

  override def setNullAt(i: Int): Unit = throw new UnsupportedOperationException("a read-only view")
  override def update(i: Int, value: Any): Unit = throw new UnsupportedOperationException("a read-only view")

  /** A detached copy of the values (not of the view). */
  override def copy(): InternalRow = {
    val matchPart = view.copy()
    new GenericInternalRow(
      keyTypes.indices.map(i =>
        if (key.isNullAt(i)) null else InternalRow.copyValue(key.get(i, keyTypes(i)))).toArray ++
        (0 until view.numFields).map(i => matchPart.get(i, null): Any) ++ Array[Any](lo, hi))
  }
}
