package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A partial match of a tree node: the columns of its bound rows (its leaves' columns in
 * leaf order), its window span `lo`..`hi`, and its first and last ORDER BY positions.
 */
final class PartialMatch(
    val row: UnsafeRow,
    val lo: Long,
    val hi: Long,
    val firstOrder: Long,
    val lastOrder: Long) extends Serializable
