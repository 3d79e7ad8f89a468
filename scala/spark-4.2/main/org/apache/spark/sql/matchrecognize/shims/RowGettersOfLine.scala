package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.{BinaryView, VariantVal}

/** An [[InternalRow]] view whose fields live in other rows: the getters Spark 4.2 has beyond those every line shares. */
abstract class RowGettersOfLine extends InternalRow {

  /** The row holding field `ordinal`, and its field number there. */
  protected def rowAt(ordinal: Int): InternalRow
  protected def fieldAt(ordinal: Int): Int

  override def getBinaryView(ordinal: Int): BinaryView = rowAt(ordinal).getBinaryView(fieldAt(ordinal))

  override def getVariant(ordinal: Int): VariantVal = rowAt(ordinal).getVariant(fieldAt(ordinal))
}
