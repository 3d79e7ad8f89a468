package org.apache.spark.sql.matchrecognize.execution.tree

import org.scalatest.funsuite.AnyFunSuite

/** The queue of matches a task has found: first in first out, built matches and pairs mixed. */
class PendingMatchesSuite extends AnyFunSuite {

  private def at(t: Long): PartialMatch = new PartialMatch(Array.empty, t, t, t, t)

  test("hands out matches in the order queued, across growth and reuse") {
    val q = new PendingMatches
    assert(q.isEmpty)
    var next = 0L
    var expected = 0L
    // Rounds of different sizes: the first grows the arrays, later ones wrap around to the front.
    for (round <- Seq(3, 200, 1, 70, 130)) {
      (0 until round).foreach { i =>
        if (i % 2 == 0) q.add(i % 5, at(next)) else q.add(i % 5, at(next), at(-next))
        next += 1
      }
      (0 until round).foreach { i =>
        assert(!q.isEmpty)
        assert(q.tree == i % 5)
        assert(q.left.lo == expected)
        if (i % 2 == 0) assert(q.right == null) else assert(q.right.lo == -expected)
        q.drop()
        expected += 1
      }
      assert(q.isEmpty)
    }
  }

  test("keeps order when matches are queued while older ones wait") {
    val q = new PendingMatches
    (0 until 50).foreach(i => q.add(0, at(i)))
    (0 until 30).foreach { i => assert(q.left.lo == i); q.drop() }
    (50 until 150).foreach(i => q.add(1, at(i)))
    (30 until 150).foreach { i => assert(q.left.lo == i); q.drop() }
    assert(q.isEmpty)
  }
}
