package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeRow}
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.matchrecognize.plans.TreeLeafSpec
import org.apache.spark.sql.matchrecognize.shims.RowGettersOfLine
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

/**
 * A row with the columns of a sequence of leaves (each leaf's columns, in leaf order) that
 * reads them in place from the leaf rows of partial matches: conditions and the output
 * projection read a combination through it without its rows being copied into one. The
 * first `split` columns come from the rows given first, the others from the second.
 */
private[tree] final class LeafRowsView(leafOrder: Seq[Int], leaves: Seq[TreeLeafSpec], split: Int)
  extends RowGettersOfLine {
  private val leafOf: Array[Int] =
    leafOrder.flatMap(k => Seq.fill(leaves(k).columns.size)(k)).toArray
  private val fieldOf: Array[Int] =
    leafOrder.flatMap(k => leaves(k).columns.indices).toArray
  private val splitColumn: Int =
    leafOrder.take(split).map(k => leaves(k).columns.size).sum
  private var first: Array[UnsafeRow] = _
  private var second: Array[UnsafeRow] = _

  /** The columns of one partial match binding every leaf of the sequence. */
  def of(rows: Array[UnsafeRow]): InternalRow = { first = rows; second = rows; this }

  /** The columns of the first `split` leaves from `l`, of the others from `r`. */
  def of(l: Array[UnsafeRow], r: Array[UnsafeRow]): InternalRow = { first = l; second = r; this }

  override protected def rowAt(i: Int): InternalRow =
    (if (i < splitColumn) first else second) (leafOf(i))
  override protected def fieldAt(i: Int): Int = fieldOf(i)

  override def numFields: Int = leafOf.length
  override def isNullAt(i: Int): Boolean = rowAt(i).isNullAt(fieldOf(i))
  override def getBoolean(i: Int): Boolean = rowAt(i).getBoolean(fieldOf(i))
  override def getByte(i: Int): Byte = rowAt(i).getByte(fieldOf(i))
  override def getShort(i: Int): Short = rowAt(i).getShort(fieldOf(i))
  override def getInt(i: Int): Int = rowAt(i).getInt(fieldOf(i))
  override def getLong(i: Int): Long = rowAt(i).getLong(fieldOf(i))
  override def getFloat(i: Int): Float = rowAt(i).getFloat(fieldOf(i))
  override def getDouble(i: Int): Double = rowAt(i).getDouble(fieldOf(i))
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal =
    rowAt(i).getDecimal(fieldOf(i), precision, scale)
  override def getUTF8String(i: Int): UTF8String = rowAt(i).getUTF8String(fieldOf(i))
  override def getBinary(i: Int): Array[Byte] = rowAt(i).getBinary(fieldOf(i))
  override def getInterval(i: Int): CalendarInterval = rowAt(i).getInterval(fieldOf(i))
  override def getStruct(i: Int, numFields: Int): InternalRow = rowAt(i).getStruct(fieldOf(i), numFields)
  override def getArray(i: Int): ArrayData = rowAt(i).getArray(fieldOf(i))
  override def getMap(i: Int): MapData = rowAt(i).getMap(fieldOf(i))
  override def get(i: Int, dataType: DataType): AnyRef = rowAt(i).get(fieldOf(i), dataType)

  override def setNullAt(i: Int): Unit = throw new UnsupportedOperationException("a read-only view")
  override def update(i: Int, value: Any): Unit = throw new UnsupportedOperationException("a read-only view")

  /** A detached copy of the values (not of the view). */
  override def copy(): InternalRow = {
    val leafTypes = leafOrder.flatMap(k => leaves(k).columns.map(_.dataType))
    new GenericInternalRow(leafTypes.indices.map { i =>
      if (isNullAt(i)) null else InternalRow.copyValue(get(i, leafTypes(i)))
    }.toArray[Any])
  }
}
