package org.apache.spark.sql.matchrecognize.streaming

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.IntegerType

/** Format 8: a standard-semantics key's rows one entry per position. */
class KeyRowEntriesSuite extends AnyFunSuite {

  private val signature = QuerySignature(Seq("PATTERN" -> 7L))
  private val x = AttributeReference("x", IntegerType, nullable = false)()
  private val toRow = UnsafeProjection.create(Seq(x), Seq(x))
  private def row(v: Int): UnsafeRow = toRow(InternalRow(v)).copy()
  private def valueAt(pos: Long): Int = (pos * 7919 % 1000).toInt

  private def state(base: Long, end: Long, waiting: Int): KeyState =
    KeyState(base, base + 1, base / 3, base - 1, (base until end).map(p => row(valueAt(p))),
      (0 until waiting).map(i => row(-i)))

  test("each save writes the rows released since and deletes those before the base, and reads back") {
    val rng = new Random(8)
    val entries = new MemoryEntries
    var base = 0L
    var end = 0L
    var held = (0L, 0L)
    for (_ <- 1 to 200) {
      val nextBase = math.min(end, base + rng.nextInt(4) * rng.nextInt(20))
      val nextEnd = end + rng.nextInt(30)
      val next = state(nextBase, nextEnd, rng.nextInt(3))
      entries.reset()
      val head = KeyRowEntries.save(next, held._1, held._2, entries, signature)
      assert(entries.puts == nextEnd - end && entries.removes == math.min(nextBase, end) - base)
      val back = KeyRowEntries.read(head, entries, 1, signature)
      assert(back.state.copy(released = IndexedSeq.empty, waiting = IndexedSeq.empty) ==
        next.copy(released = IndexedSeq.empty, waiting = IndexedSeq.empty))
      assert(back.state.released.map(_.getInt(0)) == (nextBase until nextEnd).map(valueAt))
      assert(back.state.waiting.map(_.getInt(0)) == next.waiting.map(_.getInt(0)))
      assert(entries.rows.map.keySet().toArray.toSet == (nextBase until nextEnd).toSet[Long])
      held = (back.entriesFrom, back.entriesUntil)
      base = nextBase
      end = nextEnd
    }
  }

  test("a state whose entries lost a row is refused with the position named") {
    val entries = new MemoryEntries
    val head = KeyRowEntries.save(state(5, 9, 0), 5, 5, entries, signature)
    entries.rows.remove(7)
    val e = intercept[IllegalStateException](KeyRowEntries.read(head, entries, 1, signature))
    assert(e.getMessage.contains("position 7") && e.getMessage.contains("5 until 9"))
  }

  test("flatMapGroupsWithState refuses a state kept per row, naming the operator to set") {
    val head = KeyRowEntries.save(state(0, 3, 1), 0, 0, new MemoryEntries, signature)
    val e = intercept[IllegalStateException](KeyState.decode(head, 1, signature))
    assert(e.getMessage.contains("spark.sql.matchRecognize.streaming.operator back to transformWithState"))
  }

  test("a changed query is refused by the signature kept with the rows") {
    val entries = new MemoryEntries
    val head = KeyRowEntries.save(state(0, 3, 0), 0, 0, entries, signature)
    val e = intercept[IllegalStateException](
      KeyRowEntries.read(head, entries, 1, QuerySignature(Seq("PATTERN" -> 8L))))
    assert(e.getMessage.contains("PATTERN changed"))
  }
}
