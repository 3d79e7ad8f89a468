package org.apache.spark.sql.matchrecognize.streaming

import org.scalatest.funsuite.AnyFunSuite

class DecodedStatesSuite extends AnyFunSuite {

  private def bytes(n: Int, fill: Byte = 1): Array[Byte] = Array.fill(n)(fill)

  test("a state is handed back only for the very bytes it was saved with, and only once") {
    val states = new DecodedStates(maxBytes = 1000)
    val saved = new Object
    states.put("k", "q", bytes(10), saved, 10)
    assert(states.take[AnyRef]("other", "q", bytes(10)).isEmpty)
    assert(states.take[AnyRef]("k", "q", bytes(10)).contains(saved))
    // Taken out: a call that fails after taking it must not find it again.
    assert(states.take[AnyRef]("k", "q", bytes(10)).isEmpty)

    states.put("k", "q", bytes(10), saved, 10)
    // The store holds other bytes (another task wrote them, or a restart restored older ones).
    assert(states.take[AnyRef]("k", "q", bytes(10, fill = 2)).isEmpty)
    assert(states.take[AnyRef]("k", "q", bytes(10)).isEmpty, "a mismatch drops the entry")

    // Another query (a changed one restarted in the same JVM) decodes, and so checks, anew.
    states.put("k", "q", bytes(10), saved, 10)
    assert(states.take[AnyRef]("k", "changed q", bytes(10)).isEmpty)
  }

  test("past the bound, the states kept longest go, once kept for the fresh time") {
    var clock = 0L
    val states = new DecodedStates(maxBytes = 25, freshNanos = 100, now = () => clock)
    Seq("a", "b").foreach(k => states.put(k, "q", bytes(10), k, 10))
    clock = 50
    states.put("a", "q", bytes(10), "a again", 10) // now "b" has been kept longest
    states.put("c", "q", bytes(10), "c", 10)
    // "b" is still fresh: it stays and "c" is not kept.
    assert(states.take[AnyRef]("c", "q", bytes(10)).isEmpty)
    clock = 120
    states.put("c", "q", bytes(10), "c", 10) // "b", kept at 0, goes; "a", kept at 50, stays
    assert(states.take[AnyRef]("b", "q", bytes(10)).isEmpty)
    assert(states.take[AnyRef]("a", "q", bytes(10)).contains("a again"))
    assert(states.take[AnyRef]("c", "q", bytes(10)).contains("c"))
  }

  test("keys called in the same order each round, more than fit: a stable share is kept") {
    var clock = 0L
    val states = new DecodedStates(maxBytes = 40, freshNanos = 1000, now = () => clock)
    val keys = (0 until 10).map(i => s"k$i")
    var hits = 0
    for (_ <- 0 until 5; k <- keys) {
      clock += 10 // a round takes 100, well within the fresh time
      if (states.take[AnyRef](k, "q", bytes(10)).isDefined) hits += 1
      states.put(k, "q", bytes(10), k, 10)
    }
    // The first four keys stay, each found in every round after the first (least recently
    // used out first would find none).
    assert(hits == 4 * 4)
  }

  test("a state larger than the bound is not kept") {
    val states = new DecodedStates(maxBytes = 5)
    states.put("k", "q", bytes(10), "k", 10)
    assert(states.take[AnyRef]("k", "q", bytes(10)).isEmpty)
  }

  test("a state is weighed with the entries it keeps beside its bytes") {
    val states = new DecodedStates(maxBytes = 100)
    states.put("k", "q", bytes(10), "k", 1000)
    assert(states.take[AnyRef]("k", "q", bytes(10)).isEmpty)
  }

  test("a removed key's state is gone") {
    val states = new DecodedStates(maxBytes = 100)
    states.put("k", "q", bytes(10), "k", 10)
    states.remove("k")
    assert(states.take[AnyRef]("k", "q", bytes(10)).isEmpty)
  }

  test("a query asking for more room raises the bound, never lowers it") {
    val states = new DecodedStates(maxBytes = 15)
    states.put("k", "q", bytes(10), "k", 20)
    assert(states.take[AnyRef]("k", "q", bytes(10)).isEmpty)
    states.allowAtLeast(30)
    states.allowAtLeast(0)
    states.allowAtLeast(12)
    assert(states.limit == 30)
    states.put("k", "q", bytes(10), "k", 20)
    assert(states.take[AnyRef]("k", "q", bytes(10)).contains("k"))
  }
}
