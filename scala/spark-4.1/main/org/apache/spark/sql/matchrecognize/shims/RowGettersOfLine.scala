package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.{GeographyVal, GeometryVal}

/** An [[InternalRow]] view whose fields live in other rows: the getters only Spark 4.1 has. */
abstract class RowGettersOfLine extends InternalRow {

  /** The row holding field `ordinal`, and its field number there. */
  protected def rowAt(ordinal: Int): InternalRow
  protected def fieldAt(ordinal: Int): Int

  override def getGeography(ordinal: Int): GeographyVal = rowAt(ordinal).getGeography(fieldAt(ordinal))
  override def getGeometry(ordinal: Int): GeometryVal = rowAt(ordinal).getGeometry(fieldAt(ordinal))
}
