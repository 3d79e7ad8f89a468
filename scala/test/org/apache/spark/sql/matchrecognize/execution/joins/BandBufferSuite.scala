package org.apache.spark.sql.matchrecognize.execution.joins

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.UnsafeRow

/** The sequence join's band on its own: ring order, growth, and the binary searches. */
class BandBufferSuite extends AnyFunSuite {

  private def row(lo: Long): UnsafeRow = {
    val r = new UnsafeRow(1)
    r.pointTo(new Array[Byte](16), 16)
    r.setLong(0, lo)
    r
  }

  private def contents(b: BandBuffer): Seq[Long] = (0 until b.size).map(b.lo)

  test("rows keep their order across growth and dropping from the front") {
    val b = new BandBuffer
    (0L until 100L).foreach(i => b.addLast(row(i * 10), i * 10))
    assert(b.size == 100)
    (0 until 40).foreach(_ => b.removeFirst())
    (100L until 180L).foreach(i => b.addLast(row(i * 10), i * 10)) // wraps and grows again
    assert(contents(b) == (40L until 180L).map(_ * 10))
    assert(b.iterator.map(_.getLong(0)).toSeq == contents(b))
    b.clear()
    assert(b.isEmpty && b.iterator.isEmpty)
  }

  test("binary searches bound the rows whose lo lies in a closed range") {
    val b = new BandBuffer
    Seq(5L, 7L, 7L, 7L, 9L, 12L).foreach(lo => b.addLast(row(lo), lo))
    assert(b.firstAtLeast(Long.MinValue) == 0)
    assert(b.firstAtLeast(7) == 1) // the first of the ties
    assert(b.firstAtLeast(8) == 4)
    assert(b.firstAtLeast(13) == 6) // past the end
    assert(b.endAtMost(7) == 4) // after the last of the ties
    assert(b.endAtMost(4) == 0)
    assert(b.endAtMost(Long.MaxValue) == 6)
    // Strictly between 5 and 12: the rows 7, 7, 7, 9.
    val (from, to) = (b.firstAtLeast(5 + 1), b.endAtMost(12 - 1))
    assert((from until to).map(b.lo) == Seq(7L, 7L, 7L, 9L))
  }

  test("an empty band finds nothing") {
    val b = new BandBuffer
    assert(b.firstAtLeast(0) == 0 && b.endAtMost(0) == 0)
  }
}
