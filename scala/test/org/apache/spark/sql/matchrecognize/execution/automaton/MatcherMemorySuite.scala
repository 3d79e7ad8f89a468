package org.apache.spark.sql.matchrecognize.execution.automaton

import org.scalatest.funsuite.AnyFunSuite

/** The packed row histories of partial matches and the byte accounting that bounds them. */
class MatcherMemorySuite extends AnyFunSuite {

  private def thread(): MatchThread =
    new MatchThread(new Attempt(0, 1), 0, null, 0, null, null, null, 0, skipping = false,
      afterSkip = false)

  private def labels(store: HistoryStore, t: MatchThread): Seq[Int] = {
    val codes = new Array[Int](t.length)
    store.decode(t.chunk, t.length, codes)
    codes.toSeq.map(store.labelOf)
  }

  test("codes take the fewest power-of-two bits that hold every label") {
    val memory = new MatcherMemory(Long.MaxValue)
    assert(new HistoryStore(1, exclusions = false, memory).bitsPerCode == 1) // X, skipped
    assert(new HistoryStore(3, exclusions = false, memory).bitsPerCode == 2)
    assert(new HistoryStore(3, exclusions = true, memory).bitsPerCode == 4)
    assert(new HistoryStore(200, exclusions = false, memory).bitsPerCode == 8)
    assert(new HistoryStore(300, exclusions = true, memory).bitsPerCode == 16)
    val s = new HistoryStore(3, exclusions = true, memory)
    assert(s.labelOf(s.code(2, excluded = true)) == 2 && s.excludedOf(s.code(2, excluded = true)))
    assert(s.labelOf(s.code(2, excluded = false)) == 2 && !s.excludedOf(s.code(2, excluded = false)))
    assert(s.labelOf(s.code(-1, excluded = true)) == -1)
  }

  test("forked threads share their common rows and keep their own") {
    val store = new HistoryStore(3, exclusions = false, new MatcherMemory(Long.MaxValue))
    val t = thread()
    (0 until 1000).foreach(i => store.append(t, store.code(i % 3, excluded = false)))
    val u = t.fork()
    store.append(t, store.code(0, excluded = false)) // in place
    store.append(u, store.code(1, excluded = false)) // diverges: own chunk
    (0 until 500).foreach(_ => store.append(u, store.code(2, excluded = false)))
    val common = (0 until 1000).map(_ % 3)
    assert(labels(store, t) == common :+ 0)
    assert(labels(store, u) == (common :+ 1) ++ Seq.fill(500)(2))
    // A fork of a fork that diverges right after the fork copies its few rows.
    val v = u.fork()
    store.append(u, store.code(0, excluded = false))
    store.append(v, store.code(1, excluded = false))
    assert(labels(store, v) == (common :+ 1) ++ Seq.fill(500)(2) :+ 1)
    assert(labels(store, u) == (common :+ 1) ++ Seq.fill(500)(2) :+ 0)
  }

  test("the recount counts shared chunks once and what was allocated is an upper bound") {
    val memory = new MatcherMemory(Long.MaxValue)
    val store = new HistoryStore(1, exclusions = false, memory)
    val t = thread()
    val rows = 64 * 1000 // one bit each: 1000 words = 8000 bytes, in chunks of at most 256
    (0 until rows).foreach(_ => store.append(t, store.code(0, excluded = false)))
    val forks = (0 until 10).map(_ => t.fork())
    memory.beginRecount()
    (t +: forks).foreach(memory.countThread)
    val live = memory.endRecount()
    val threads = 11 * MatcherMemory.ThreadBytes
    // 4 chunks of 256 words minus what the last one does not use yet.
    assert(live >= 8000 + threads && live <= 4 * MatcherMemory.chunkBytes(256) + threads, live)
    // Growing chunks by doubling copied them: allocations add up to more than is live.
    val again = new MatcherMemory(Long.MaxValue)
    val s2 = new HistoryStore(1, exclusions = false, again)
    val t2 = thread()
    (0 until rows).foreach(_ => s2.append(t2, s2.code(0, excluded = false)))
    assert(again.estimate > live - threads)
  }

  test("a recount is due once the estimate passes the limit, at most every limit / 8") {
    val memory = new MatcherMemory(8000)
    memory.allocated(7000)
    assert(!memory.recountDue)
    memory.allocated(2000)
    assert(memory.recountDue)
    memory.beginRecount()
    memory.countBytes(7900)
    assert(memory.endRecount() == 7900 && !memory.recountDue)
    memory.allocated(500) // over the limit, but less than limit / 8 since the recount
    assert(!memory.recountDue)
    memory.allocated(500)
    assert(memory.recountDue)
    memory.reset()
    assert(memory.estimate == 0 && !memory.recountDue)
  }

  test("the default limit is a share of the heap, at least 32 MB") {
    val limit = MatcherMemory.defaultLimit()
    assert(limit >= 32L * 1024 * 1024 && limit < Runtime.getRuntime.maxMemory())
  }
}
