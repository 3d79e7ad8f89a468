package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * What [[KeyTreeWatch]] counts of a group's latest rows, as plain data, so that a stream can
 * keep it in a key's state between micro-batches: per bucket (a quarter of the rows a choice
 * reads), the rows each variable's own conditions admit, the rows read and the window position
 * of the first, and for each pair of variables a condition relates, the pairs of their rows
 * tested and those that passed; the bucket filling, the rows read since the group started,
 * and the window positions of the last row read and of the one before it.
 */
final class KeyRateCounts(val variables: Int, pairCount: Int = 0) {
  val admitted: Array[Array[Long]] = Array.ofDim[Long](KeyRateCounts.Buckets, variables)
  val rowsIn: Array[Long] = new Array[Long](KeyRateCounts.Buckets)
  val firstIn: Array[Long] = new Array[Long](KeyRateCounts.Buckets)
  var bucket: Int = 0
  var readSinceStart: Long = 0L
  var position: Long = Long.MinValue
  var previousPosition: Long = Long.MinValue
  // Replaced whole when a key's state kept none (written before pairs were measured).
  var tested: Array[Array[Long]] = Array.ofDim[Long](KeyRateCounts.Buckets, pairCount)
  var passed: Array[Array[Long]] = Array.ofDim[Long](KeyRateCounts.Buckets, pairCount)

  def pairs: Int = tested(0).length

  /** Counts for `n` pairs, empty, where the counts kept are of another number of pairs. */
  def measurePairs(n: Int): Unit = if (pairs != n) {
    tested = Array.ofDim[Long](KeyRateCounts.Buckets, n)
    passed = Array.ofDim[Long](KeyRateCounts.Buckets, n)
  }
}

object KeyRateCounts {
  val Buckets = 4
}
