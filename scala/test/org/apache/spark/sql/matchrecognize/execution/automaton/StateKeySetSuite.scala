package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** The step's set of state keys, against a plain Scala set of the same keys. */
class StateKeySetSuite extends AnyFunSuite {

  private def hash(a: Array[Long]): Int = java.util.Arrays.hashCode(a)

  test("keys equal in every part are one key; a difference in any part makes another") {
    val set = new StateKeySet
    val regs = Array(3L, -1L)
    val fp = Array(7L, 8L)
    assert(set.add(4, 10L, regs, fp, hash(fp)))
    // Equal contents in other arrays are the same key.
    assert(!set.add(4, 10L, regs.clone(), fp.clone(), hash(fp)))
    assert(set.add(5, 10L, regs, fp, hash(fp)), "another program position")
    assert(set.add(4, 11L, regs, fp, hash(fp)), "another start row")
    assert(set.add(4, 10L, Array(3L, 0L), fp, hash(fp)), "other registers")
    val otherFp = Array(7L, 9L)
    assert(set.add(4, 10L, regs, otherFp, hash(otherFp)), "another fingerprint")
    assert(set.add(4, 10L, null, null, 0), "no registers, no fingerprint")
    assert(!set.add(4, 10L, null, null, 0))
  }

  test("keys whose hashes collide are told apart by their parts") {
    val set = new StateKeySet
    // position * 31 + hash(start) is 134 for both.
    assert(set.add(4, 10L, null, null, 0))
    assert(set.add(3, 41L, null, null, 0))
    // One position more weighs 31^3 in the hash, one fingerprint hash unit 1.
    assert(set.add(4, 0L, null, Array(5L), 0))
    assert(set.add(3, 0L, null, Array(5L), 29791))
    // Long.hashCode(1) == Long.hashCode(1 << 32).
    assert(set.add(2, 1L, null, null, 0))
    assert(set.add(2, 1L << 32, null, null, 0))
    // Arrays.hashCode([0, 31]) == Arrays.hashCode([1, 0]).
    assert(set.add(1, 0L, Array(0L, 31L), null, 0))
    assert(set.add(1, 0L, Array(1L, 0L), null, 0))
    // The fingerprint's hash is the caller's; equal hashes, other rows.
    assert(set.add(0, 0L, null, Array(5L), 99))
    assert(set.add(0, 0L, null, Array(6L), 99))
    assert(!set.add(0, 0L, null, Array(6L), 99))
  }

  test("clear forgets every key; growth keeps them") {
    val set = new StateKeySet
    val rnd = new Random(11)
    for (round <- 1 to 5) {
      set.clear()
      assert(set.isEmpty)
      val reference = scala.collection.mutable.Set.empty[(Int, Long, Seq[Long], Seq[Long])]
      // Up to 2,000 adds per round: several growths from the initial 64 slots.
      for (_ <- 1 to 400 * round) {
        val pc = rnd.nextInt(20)
        val start = rnd.nextInt(30).toLong
        val regs = if (rnd.nextBoolean()) null else Array(rnd.nextInt(3).toLong)
        val fp = Array(rnd.nextInt(4).toLong, rnd.nextInt(2).toLong)
        val key = (pc, start, Option(regs).map(_.toSeq).orNull, fp.toSeq)
        assert(set.add(pc, start, regs, fp, hash(fp)) == reference.add(key), s"key $key")
      }
    }
  }
}
