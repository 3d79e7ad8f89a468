package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.InternalRow

/**
 * An [[InternalRow]] view whose fields live in other rows: Spark 3.5 has no getters beyond
 * the ones every line shares, which the view implements itself.
 */
abstract class RowGettersOfLine extends InternalRow {

  /** The row holding field `ordinal`, and its field number there. */
  protected def rowAt(ordinal: Int): InternalRow
  protected def fieldAt(ordinal: Int): Int
}
