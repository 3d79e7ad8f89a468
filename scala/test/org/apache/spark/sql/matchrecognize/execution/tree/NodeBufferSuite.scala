package org.apache.spark.sql.matchrecognize.execution.tree

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/** A tree node's buffer on its own: probes by start range, purges by time. */
class NodeBufferSuite extends AnyFunSuite {

  /** A match spanning lo..hi; buffers receive them in `hi` order. */
  private def partial(lo: Long, hi: Long): PartialMatch =
    new PartialMatch(Array.empty[UnsafeRow], lo, hi, lo, hi)

  private def probed(b: NodeBuffer, from: Long, to: Long): Seq[(Long, Long)] = {
    val out = Seq.newBuilder[(Long, Long)]
    b.probe(from, to)(m => out += ((m.lo, m.hi)))
    out.result()
  }

  private val spans = Seq((1L, 2L), (0L, 3L), (3L, 3L), (2L, 5L), (5L, 5L), (1L, 7L), (7L, 8L))

  test("a probe visits exactly the matches starting in a closed range, in creation order") {
    val b = new NodeBuffer
    spans.foreach { case (lo, hi) => b.add(partial(lo, hi)) }
    assert(b.size == 7)
    for (from <- -1L to 9L; to <- -1L to 9L) {
      assert(probed(b, from, to) == spans.filter { case (lo, _) => lo >= from && lo <= to },
        s"[$from, $to]")
    }
  }

  test("a purge drops the matches that ended before a position, and counts them") {
    val b = new NodeBuffer
    spans.foreach { case (lo, hi) => b.add(partial(lo, hi)) }
    assert(b.purgeBefore(2) == 0)
    assert(b.purgeBefore(4) == 3)
    assert(b.iterator.map(m => (m.lo, m.hi)).toSeq == spans.drop(3))
    // (1, 7) started before 2 but ends after it: it stays, and probes from 2 skip it.
    assert(b.purgeBefore(6) == 2)
    assert(probed(b, 2, 9) == Seq((7L, 8L)))
    assert(b.purgeBefore(100) == 2)
    assert(b.size == 0 && b.iterator.isEmpty)
  }

  test("the buffer grows and reuses its space as matches come and go") {
    val b = new NodeBuffer
    for (t <- 0L until 10000L) {
      b.add(partial(t, t))
      if (t % 7 == 0) b.purgeBefore(t - 20)
    }
    assert(b.iterator.map(_.lo).toSeq == (9976L until 10000L)) // the last purge, at 9996, kept 9976 on
    assert(probed(b, 9990, 9992).map(_._1) == Seq(9990L, 9991L, 9992L))
  }
}
