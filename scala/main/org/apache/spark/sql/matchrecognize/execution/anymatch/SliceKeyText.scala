package org.apache.spark.sql.matchrecognize.execution.anymatch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute

/** How a SKIP TILL ANY MATCH limit error names the group it counted in: one time slice of a key. */
object SliceKeyText {

  /** `partition key (k=7) in one time slice`, the `keys` read from the first fields of `values`. */
  def of(keys: Seq[Attribute], values: InternalRow): String =
    if (keys.isEmpty) "the input (no PARTITION BY) in one time slice"
    else keys.indices.map(i => s"${keys(i).name}=${values.get(i, keys(i).dataType)}")
      .mkString("partition key (", ", ", ") in one time slice")
}
