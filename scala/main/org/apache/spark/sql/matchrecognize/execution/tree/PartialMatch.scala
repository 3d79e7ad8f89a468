package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/**
 * A partial match of a tree node: the row bound to each leaf of the tree (`rows(k)` for
 * leaf `k`, null for the leaves outside the node), its window span `lo`..`hi`, and its
 * first and last ORDER BY positions. Combining two partial matches copies references to
 * their rows, never the rows themselves, so a partial match costs the same however wide
 * the variables' rows are.
 *
 * Serializable with the serial version the release writing format 4 computed, only so
 * that Java-serialized checkpoints of that format still read; format 5 is written by
 * `streaming.TreeKeyStateCodec`. Its fields must keep their names and types.
 */
@SerialVersionUID(-5046356682867457348L)
final class PartialMatch(
    val rows: Array[UnsafeRow],
    val lo: Long,
    val hi: Long,
    val firstOrder: Long,
    val lastOrder: Long) extends Serializable
