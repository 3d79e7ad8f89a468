package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * What [[KeyTreeWatch]] counts of a group's latest rows, as plain data, so that a stream can
 * keep it in a key's state between micro-batches: per bucket (a quarter of the rows a choice
 * reads), the rows each variable's own conditions admit, the rows read and the window position
 * of the first, and for each pair of variables a condition relates, the pairs of their rows
 * tested and those that passed; the bucket filling, the rows read since the group started,
 * and the window positions of the last row read and of the one before it; and the pass rate
 * each pair is costed at, as the last choice left it (`KeyTreeChooser.choose`).
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
  // NaN: the planned rate (no choice has measured the pair yet).
  var estimates: Array[Double] = Array.fill(pairCount)(Double.NaN)

  def pairs: Int = tested(0).length

  /** Counts for `n` pairs, empty, where the counts kept are of another number of pairs. */
  def measurePairs(n: Int): Unit = if (pairs != n) {
    tested = Array.ofDim[Long](KeyRateCounts.Buckets, n)
    passed = Array.ofDim[Long](KeyRateCounts.Buckets, n)
    estimates = Array.fill(n)(Double.NaN)
  }

  /**
   * The buckets holding rows, newest first, back to the last change: an older bucket is
   * left out, with those before it, when a variable's share of its rows or a pair's pass
   * rate differs from that of the newer buckets beyond chance ([[KeyRateCounts.differ]]).
   * So a choice after the rates or pass rates moved reads only the rows since, as soon as
   * one bucket holds them, instead of averaging them with the rows before.
   */
  def sinceChange(): Seq[Int] = {
    val newestFirst = (0 until KeyRateCounts.Buckets).map(i => Math.floorMod(bucket - i, KeyRateCounts.Buckets))
      .filter(rowsIn(_) > 0)
    if (newestFirst.isEmpty) Nil
    else {
      val rows = rowsIn(newestFirst.head)
      val sumAdmitted = admitted(newestFirst.head).clone()
      val sumTested = tested(newestFirst.head).clone()
      val sumPassed = passed(newestFirst.head).clone()
      var taken = 1
      var total = rows
      def same(b: Int): Boolean =
        sumAdmitted.indices.forall(i => !KeyRateCounts.differ(sumAdmitted(i), total, admitted(b)(i), rowsIn(b))) &&
          sumTested.indices.forall(i => !KeyRateCounts.differ(sumPassed(i), sumTested(i), passed(b)(i), tested(b)(i)))
      while (taken < newestFirst.size && same(newestFirst(taken))) {
        val b = newestFirst(taken)
        sumAdmitted.indices.foreach(i => sumAdmitted(i) += admitted(b)(i))
        sumTested.indices.foreach { i => sumTested(i) += tested(b)(i); sumPassed(i) += passed(b)(i) }
        total += rowsIn(b)
        taken += 1
      }
      newestFirst.take(taken)
    }
  }
}

object KeyRateCounts {
  val Buckets = 4

  /**
   * Standard errors between two shares beyond which they are taken to differ: with a
   * handful of shares tested at each choice, one choice in some tens reads fewer buckets
   * than it could on noise alone, which costs only a smaller sample.
   */
  val ChangeZ = 3.0

  /** Whether `x1` of `n1` and `x2` of `n2` differ by more than [[ChangeZ]] standard errors (pooled). */
  def differ(x1: Long, n1: Long, x2: Long, n2: Long): Boolean =
    n1 > 0 && n2 > 0 && {
      val pooled = (x1 + x2).toDouble / (n1 + n2)
      val variance = pooled * (1 - pooled) * (1.0 / n1 + 1.0 / n2)
      variance > 0 && math.abs(x1.toDouble / n1 - x2.toDouble / n2) > ChangeZ * math.sqrt(variance)
    }
}
