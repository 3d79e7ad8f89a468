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

  test("the least recently used keys go once the states held pass the bound") {
    val states = new DecodedStates(maxBytes = 25)
    Seq("a", "b").foreach(k => states.put(k, "q", bytes(10), k, 10))
    states.put("a", "q", bytes(10), "a again", 10) // now "b" is the least recently used
    states.put("c", "q", bytes(10), "c", 10)
    assert(states.take[AnyRef]("b", "q", bytes(10)).isEmpty)
    assert(states.take[AnyRef]("a", "q", bytes(10)).contains("a again"))
    assert(states.take[AnyRef]("c", "q", bytes(10)).contains("c"))
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
