package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute

/** How a limit error names the group it counted in: one partition key, or the whole input. */
object PartitionKeyText {

  /** `partition key (k=7)`, the `keys` read from the first fields of `values`. */
  def of(keys: Seq[Attribute], values: InternalRow): String =
    if (keys.isEmpty) "the input (no PARTITION BY)"
    else keys.indices.map(i => s"${keys(i).name}=${values.get(i, keys(i).dataType)}")
      .mkString("partition key (", ", ", ")")

  /** `partition key (k=7) in one time slice`, where SKIP TILL ANY MATCH counts per slice. */
  def inOneSlice(keys: Seq[Attribute], values: InternalRow): String = of(keys, values) + " in one time slice"
}
