package org.apache.spark.sql.matchrecognize.execution.tree

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/** A tree node's buffer on its own: probes by start range, purges by time. */
class NodeBufferSuite extends AnyFunSuite {

  private def partial(lo: Long): PartialMatch = new PartialMatch(new UnsafeRow(0), lo, lo + 1, lo, lo)

  private def probed(b: NodeBuffer, from: Long, to: Long): Seq[Long] = {
    val out = Seq.newBuilder[Long]
    b.probe(from, to)(m => out += m.lo)
    out.result()
  }

  test("a probe visits exactly the matches starting in a closed range, in start order") {
    val b = new NodeBuffer
    Seq(9L, 5L, 7L, 7L, 12L, 7L).foreach(lo => b.add(partial(lo)))
    assert(b.size == 6)
    assert(probed(b, 7, 9) == Seq(7L, 7L, 7L, 9L))
    assert(probed(b, 8, 8).isEmpty)
    assert(probed(b, 10, 9).isEmpty) // an empty range
    assert(probed(b, Long.MinValue, Long.MaxValue) == Seq(5L, 7L, 7L, 7L, 9L, 12L))
  }

  test("a purge drops every match starting before a position and counts them") {
    val b = new NodeBuffer
    Seq(1L, 2L, 2L, 3L, 8L).foreach(lo => b.add(partial(lo)))
    assert(b.purgeBefore(1) == 0)
    assert(b.purgeBefore(3) == 3)
    assert(b.size == 2)
    assert(b.iterator.map(_.lo).toSeq == Seq(3L, 8L))
    assert(b.purgeBefore(100) == 2)
    assert(b.size == 0 && b.iterator.isEmpty)
  }
}
