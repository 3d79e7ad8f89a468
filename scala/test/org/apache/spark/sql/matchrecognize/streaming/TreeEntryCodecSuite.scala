package org.apache.spark.sql.matchrecognize.streaming

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.matchrecognize.execution.tree.{PartialMatch, TreeState}

/**
 * A SKIP TILL ANY MATCH key's state kept per entry (format 7): read back from its value and
 * entries it is the state saved, a save writes one entry of what it added and deletes only
 * entries left with nothing live, no entry outlives the matches in it or the matches holding
 * its rows, and damaged entries are refused.
 */
class TreeEntryCodecSuite extends AnyFunSuite {

  import TreeKeyStateSamples._

  private val signature = QuerySignature(Seq("PATTERN" -> 42L))
  private val anyTrees: Array[TreeState] => Boolean = _ => true

  private def save(state: TreeKeyState, entries: KeyEntries): Array[Byte] =
    TreeEntryCodec.save(state, entries, signature)._1

  private def read(head: Array[Byte], entries: KeyEntries): TreeKeyState =
    TreeEntryCodec.read(head, entries, anyTrees, signature)

  test("a state read back from its value and entries is the state saved, sharing as it did") {
    val state = sample()
    val entries = new MemoryEntries
    val back = read(save(state, entries), entries)
    assert(contents(back) == contents(state))
    val tree = back.trees(0)
    val Seq(m2, m3) = tree.buffers(1).iterator.toSeq
    assert(m2.rows(1) eq m3.rows(1))
    assert(tree.held.get(0).rows(0) eq m2.rows(0))
    // One entry for the save: its rows (the waiting and window rows are in the value) and its
    // matches of both nodes.
    assert(entries.rows.map.isEmpty && entries.matches.map.size == 1)
  }

  test("trees per key: the key's place comes back, and a state of fewer trees is completed") {
    val entries = new MemoryEntries
    val state = withPerKey(sample())
    assert(contents(read(save(state, entries), entries)) == contents(state))
    // Saved with two trees, read by a query of three: the third starts empty, and what it
    // adds later is saved and read back with the rest.
    val plain = new MemoryEntries
    val head = save(sample(), plain)
    val grown = TreeEntryCodec.read(head, plain, _.length == 3, signature, t => t :+ new TreeState(1))
    grown.trees(2).buffers(0).add(new PartialMatch(Array(row(8, 80)), 8, 8, 8, 8))
    val again = read(save(grown, plain), plain)
    assert(contents(again) == contents(grown))
    assert(again.trees(2).buffers(0).iterator.map(_.lo).toSeq == Seq(8L))
  }

  test("a save writes the matches added and deletes those dropped, nothing else") {
    val state = sample()
    val entries = new MemoryEntries
    save(state, entries)
    entries.reset()
    save(state, entries)
    assert((entries.puts, entries.removes) == ((0, 0)), "an unchanged state writes nothing")

    val tree = state.trees(0)
    val r4 = row(4, 40)
    tree.buffers(1).add(new PartialMatch(Array(null, r4), 4, 4, 4, 4))
    tree.buffers(0).purgeBefore(2) // drops m1; its row r1 is still held by m2
    save(state, entries)
    // Added: the match and its new row, in one entry; dropped: m1, whose entry still holds
    // m2 and m3.
    assert((entries.puts, entries.removes) == ((1, 0)))
    assert(contents(read(save(state, entries), entries)) == contents(state))
  }

  test("a read-back state saves only its own changes after") {
    val entries = new MemoryEntries
    val back = read(save(sample(), entries), entries)
    entries.reset()
    back.trees(0).buffers(1).purgeBefore(3) // drops m2 and m3; m2 is still held
    val head = save(back, entries)
    assert(entries.puts == 0 && entries.removes == 0, "the entry still has m1 and the rows m2 holds")
    back.trees(0).held.clear()
    back.trees(0).buffers(0).purgeBefore(3)
    save(back, entries)
    assert(entries.removes == 1, "m1 and the held rows gone, the entry is deleted")
    assert(entries.rows.map.isEmpty && entries.matches.map.isEmpty)
    assert(contents(read(save(back, entries), entries)) == contents(back))
    assert(head.nonEmpty)
  }

  test("random adds, drops and held matches: entries always read back as the state") {
    val random = new Random(7)
    (1 to 40).foreach { round =>
      var state = new TreeKeyState(Array.empty, new WindowProgress(0, null, 0, Array.empty, Array.empty),
        Array(new TreeState(3), new TreeState(2)))
      val entries = new MemoryEntries
      var position = 0L
      val recent = scala.collection.mutable.ArrayBuffer[UnsafeRow]()
      (1 to 60).foreach { _ =>
        position += 1
        recent += row(position, round)
        if (recent.size > 5) recent.remove(0)
        val trees = state.trees
        (0 until random.nextInt(4)).foreach { _ =>
          val t = random.nextInt(trees.length)
          val n = random.nextInt(trees(t).buffers.length)
          val rows = Array.fill(3)(if (random.nextBoolean()) recent(random.nextInt(recent.size)) else null)
          val m = new PartialMatch(rows, position - random.nextInt(3), position, position, position)
          trees(t).buffers(n).add(m)
          if (random.nextInt(5) == 0) trees(t).held.add(m)
        }
        if (random.nextInt(3) == 0) {
          trees.foreach(t => t.buffers.foreach(_.purgeBefore(position - random.nextInt(6))))
        }
        if (random.nextInt(4) == 0 && !trees(0).held.isEmpty) trees(0).held.remove(0)
        if (random.nextInt(3) == 0) {
          val head = save(state, entries)
          if (random.nextBoolean()) {
            val back = read(head, entries) // as after a restart, or in another task
            assert(contents(back) == contents(state), s"round $round at $position")
            state = back
          }
        }
      }
      val head = save(state, entries)
      val held = state.trees.flatMap(t => t.buffers.flatMap(_.iterator) ++ t.held.asScala)
      // No entry of which no row is held and no match is still buffered.
      val liveRows = held.flatMap(_.rows).filter(_ != null).map(longs).toSet
      entries.matches.map.forEach { (id, bytes) =>
        val in = StateBytes.reader(bytes)
        in.readLong()
        val rows = Seq.fill(in.readInt())(TreeKeyStateCodec.readRow(in))
        val liveParts = (0 until in.readInt()).count { _ =>
          val (t, n, start) = (in.readInt(), in.readInt(), in.readLong())
          val matches = in.readInt()
          (0 until matches).foreach(_ => TreeKeyStateCodec.readMatch(in) { () => in.readLong(); null })
          val buffer = state.trees(t).buffers(n)
          start + matches > buffer.added - buffer.size
        }
        assert(liveParts > 0 || rows.exists(r => liveRows(longs(r))), s"round $round: dead entry $id is kept")
      }
      assert(entries.rows.map.isEmpty)
      assert(contents(read(head, entries)) == contents(state))
    }
  }

  test("a missing entry or one of another node is refused as damaged") {
    val entries = new MemoryEntries
    val head = save(sample(), entries)
    val (id, bytes) = entries.matches.iterator.next()
    entries.matches.map.remove(id)
    val missing = intercept[CheckpointStateException](read(head, entries))
    assert(missing.getMessage.contains("state of format 7 that does not read as that layout"), missing.getMessage)
    assert(missing.getMessage.contains("which it does not have"), missing.getMessage)
    entries.matches.map.put(id, bytes)
    val (out, stray) = StateBytes.writer()
    out.writeLong(100L) // no rows; one part, of node 7
    out.writeInt(0)
    out.writeInt(1)
    out.writeInt(0)
    out.writeInt(7)
    out.writeLong(0L)
    out.writeInt(0)
    out.flush()
    entries.matches.map.put(id + 1, stray())
    val node = intercept[CheckpointStateException](read(head, entries))
    assert(node.getMessage.contains("node 7 of tree state 0"), node.getMessage)
  }
}
