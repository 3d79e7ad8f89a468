package org.apache.spark.sql.matchrecognize.streaming

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.IntegerType

/** Format 8: a standard-semantics key's rows, each call's new rows in one entry. */
class KeyRowEntriesSuite extends AnyFunSuite {

  private val signature = QuerySignature(Seq("PATTERN" -> 7L))
  private val x = AttributeReference("x", IntegerType, nullable = false)()
  private val toRow = UnsafeProjection.create(Seq(x), Seq(x))
  private def row(v: Int): UnsafeRow = toRow(InternalRow(v)).copy()
  private def valueAt(pos: Long): Int = (pos * 7919 % 1000).toInt

  private def state(base: Long, end: Long, waiting: Int): KeyState =
    KeyState(base, base + 1, base / 3, base - 1, (base until end).map(p => row(valueAt(p))),
      (0 until waiting).map(i => row(-i)))

  private def noStarts = new java.util.ArrayDeque[java.lang.Long]()

  test("each save writes the rows released since in one entry, deletes the entries before the base, and reads back") {
    val rng = new Random(8)
    val entries = new MemoryEntries
    var base = 0L
    var end = 0L
    var decoded = new DecodedKeyState(KeyState.empty, null, noStarts, 0L)
    for (_ <- 1 to 300) {
      val nextBase = math.min(end, base + rng.nextInt(4) * rng.nextInt(20))
      val nextEnd = end + (if (rng.nextBoolean()) 0 else rng.nextInt(30))
      val next = state(nextBase, nextEnd, rng.nextInt(3))
      entries.reset()
      val starts = decoded.entryStarts
      val head = KeyRowEntries.save(next, starts, decoded.entriesUntil, entries, signature)
      assert(entries.puts == (if (nextEnd > end) 1 else 0))
      val back = KeyRowEntries.read(head, entries, 1, signature)
      assert(back.state.copy(released = IndexedSeq.empty, waiting = IndexedSeq.empty) ==
        next.copy(released = IndexedSeq.empty, waiting = IndexedSeq.empty))
      assert(back.state.released.map(_.getInt(0)) == (nextBase until nextEnd).map(valueAt))
      assert(back.state.waiting.map(_.getInt(0)) == next.waiting.map(_.getInt(0)))
      // No entry is kept whose rows are all before the base; the saved starts are the entries'.
      val kept = entries.rows.map.keySet().toArray.map(_.asInstanceOf[Long]).sorted
      assert(kept.toSeq == starts.toArray.map(_.asInstanceOf[java.lang.Long].longValue).toSeq)
      kept.indices.foreach { i =>
        val entryEnd = if (i + 1 < kept.length) kept(i + 1) else nextEnd
        assert(entryEnd > nextBase, s"entry at ${kept(i)} holds no row from $nextBase on")
      }
      // Alternate between the state as saved (kept decoded) and as read back (a restart).
      decoded = if (rng.nextBoolean()) new DecodedKeyState(next, null, starts, nextEnd) else back
      base = nextBase
      end = nextEnd
    }
  }

  test("a state whose entries lost a row is refused with the position named") {
    val entries = new MemoryEntries
    val head = KeyRowEntries.save(state(5, 9, 0), noStarts, 0L, entries, signature)
    KeyRowEntries.save(state(5, 12, 0),
      new java.util.ArrayDeque(java.util.Collections.singletonList[java.lang.Long](5L)), 9L,
      entries, signature)
    entries.rows.remove(5L)
    val e = intercept[CheckpointStateException](KeyRowEntries.read(head, entries, 1, signature))
    assert(e.getMessage.contains("position 5") && e.getMessage.contains("5 until 9"))
  }

  test("flatMapGroupsWithState refuses a state kept per entry, naming the operator to set") {
    val head = KeyRowEntries.save(state(0, 3, 1), noStarts, 0L, new MemoryEntries, signature)
    val e = intercept[CheckpointStateException](KeyState.decode(head, 1, signature))
    assert(e.getMessage.contains("spark.sql.matchRecognize.streaming.operator back to transformWithState"))
  }

  test("a changed query is refused by the signature kept with the rows") {
    val entries = new MemoryEntries
    val head = KeyRowEntries.save(state(0, 3, 0), noStarts, 0L, entries, signature)
    val e = intercept[CheckpointStateException](
      KeyRowEntries.read(head, entries, 1, QuerySignature(Seq("PATTERN" -> 8L))))
    assert(e.getMessage.contains("PATTERN changed"))
  }
}
