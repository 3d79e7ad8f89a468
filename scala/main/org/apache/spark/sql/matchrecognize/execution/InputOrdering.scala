package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, NullsFirst, RowOrdering, SortOrder}

/**
 * The order in which the matcher reads a partition's rows: the ORDER BY keys, then every
 * other orderable input column ascending, so that rows tied on the keys never depend on
 * shuffle or arrival order. Batch and streaming execution read the same order, which is
 * what makes a stream's matches equal the batch query's.
 */
object InputOrdering {

  /** The other orderable input columns, ascending, after the keys (and a prefilter flag). */
  def tieBreakers(partitionBy: Seq[Attribute], orderBy: Seq[SortOrder],
      notData: Seq[Attribute], input: Seq[Attribute]): Seq[SortOrder] = {
    val keys = AttributeSet(partitionBy ++ orderBy.flatMap(_.references) ++ notData)
    input.filter(a => !keys.contains(a) && RowOrdering.isOrderable(a.dataType))
      .map(a => SortOrder(a, Ascending, NullsFirst, Seq.empty))
  }
}
