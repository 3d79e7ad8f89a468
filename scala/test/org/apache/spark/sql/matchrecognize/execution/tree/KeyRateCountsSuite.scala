package org.apache.spark.sql.matchrecognize.execution.tree

import org.scalatest.funsuite.AnyFunSuite

/** Which of a group's buckets a choice of tree reads: those since its figures last changed. */
class KeyRateCountsSuite extends AnyFunSuite {

  /** Counts of two variables and one pair, filled bucket by bucket, oldest first. */
  private def counts(buckets: Seq[(Long, Long, Long, Long)], rows: Long = 250): KeyRateCounts = {
    val c = new KeyRateCounts(2, 1)
    buckets.zipWithIndex.foreach { case ((a, b, tested, passed), i) =>
      c.rowsIn(i) = rows
      c.admitted(i)(0) = a
      c.admitted(i)(1) = b
      c.tested(i)(0) = tested
      c.passed(i)(0) = passed
    }
    // The bucket filling next is the one after the last filled (empty, as after a fill).
    c.bucket = buckets.size % KeyRateCounts.Buckets
    c
  }

  test("figures alike within chance: every bucket holding rows, newest first") {
    val c = counts(Seq((60, 120, 256, 30), (70, 110, 256, 22), (55, 125, 256, 27)))
    assert(c.sinceChange() == Seq(2, 1, 0))
  }

  test("a pair's pass rate that changed: only the buckets since") {
    val c = counts(Seq((60, 120, 256, 0), (62, 118, 256, 1), (61, 119, 256, 256)))
    assert(c.sinceChange() == Seq(2))
    val later = counts(Seq((60, 120, 256, 0), (62, 118, 256, 250), (61, 119, 256, 256)))
    assert(later.sinceChange() == Seq(2, 1))
  }

  test("a variable's rate that changed: only the buckets since") {
    val c = counts(Seq((60, 120, 256, 30), (3, 120, 256, 30), (2, 122, 256, 25)))
    assert(c.sinceChange() == Seq(2, 1))
  }

  test("a change between older buckets leaves out the older side only") {
    // Buckets 1 to 3 filled, the oldest poor in B; bucket 0, filling again, holds 40 rows.
    val c = counts(Seq((8, 16, 40, 5), (60, 10, 256, 30), (60, 120, 256, 30), (58, 118, 256, 31)))
    c.rowsIn(0) = 40
    c.bucket = 0
    assert(c.sinceChange() == Seq(0, 3, 2))
  }

  test("nothing to compare: a single bucket, or none") {
    assert(counts(Seq((1, 2, 3, 3))).sinceChange() == Seq(0))
    assert(new KeyRateCounts(2, 1).sinceChange() == Nil)
  }

  test("two shares differ only beyond chance") {
    assert(KeyRateCounts.differ(64, 64, 0, 64))
    assert(!KeyRateCounts.differ(30, 256, 22, 256))
    assert(!KeyRateCounts.differ(0, 256, 0, 256) && !KeyRateCounts.differ(5, 5, 9, 9))
    assert(!KeyRateCounts.differ(1, 0, 5, 10))
  }
}
