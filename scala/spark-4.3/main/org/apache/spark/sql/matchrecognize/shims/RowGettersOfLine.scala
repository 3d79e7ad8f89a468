package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.{BinaryView, TimestampNanosVal, VariantVal}

/** An [[InternalRow]] view whose fields live in other rows: the getters Spark 4.3 has beyond those every line shares. */
abstract class RowGettersOfLine extends InternalRow {

  /** The row holding field `ordinal`, and its field number there. */
  protected def rowAt(ordinal: Int): InternalRow
  protected def fieldAt(ordinal: Int): Int

  override def getBinaryView(ordinal: Int): BinaryView = rowAt(ordinal).getBinaryView(fieldAt(ordinal))
  override def getTimestampNTZNanos(ordinal: Int): TimestampNanosVal =
    rowAt(ordinal).getTimestampNTZNanos(fieldAt(ordinal))
  override def getTimestampLTZNanos(ordinal: Int): TimestampNanosVal =
    rowAt(ordinal).getTimestampLTZNanos(fieldAt(ordinal))

  override def getVariant(ordinal: Int): VariantVal = rowAt(ordinal).getVariant(fieldAt(ordinal))
}
