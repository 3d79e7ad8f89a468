package org.apache.spark.sql.matchrecognize.execution.automaton

/** The live attempts in start order: a ring with indexed access, so steps allocate no iterator. */
private final class AttemptQueue {
  private var items = new Array[Attempt](16)
  private var head = 0
  private var count = 0

  def size: Int = count
  def isEmpty: Boolean = count == 0
  def get(i: Int): Attempt = items((head + i) & (items.length - 1))
  def peekFirst(): Attempt = get(0)
  def peekLast(): Attempt = get(count - 1)

  def addLast(a: Attempt): Unit = {
    if (count == items.length) {
      val bigger = new Array[Attempt](items.length * 2)
      var i = 0
      while (i < count) { bigger(i) = get(i); i += 1 }
      items = bigger
      head = 0
    }
    items((head + count) & (items.length - 1)) = a
    count += 1
  }

  def removeFirst(): Attempt = {
    val a = items(head)
    items(head) = null
    head = (head + 1) & (items.length - 1)
    count -= 1
    a
  }

  def removeLast(): Attempt = {
    val i = (head + count - 1) & (items.length - 1)
    val a = items(i)
    items(i) = null
    count -= 1
    a
  }

  /** Drops the `n` attempts after the first (handing each to `dropped`), keeping the first. */
  def dropAfterFirst(n: Int, dropped: Attempt => Unit): Unit = {
    val first = get(0)
    var i = 0
    while (i < n) {
      val at = (head + i) & (items.length - 1)
      if (i > 0) dropped(items(at))
      items(at) = null
      i += 1
    }
    dropped(items((head + n) & (items.length - 1)))
    head = (head + n) & (items.length - 1)
    items(head) = first
    count -= n
  }

  /** Drops the finished attempts without a match, except the first, keeping the order. */
  def removeDeadAfterFirst(dropped: Attempt => Unit): Unit = {
    var kept = 1
    var i = 1
    while (i < count) {
      val a = get(i)
      if (a.finished && a.candidate == null) dropped(a)
      else {
        items((head + kept) & (items.length - 1)) = a
        kept += 1
      }
      i += 1
    }
    while (i > kept) { i -= 1; items((head + i) & (items.length - 1)) = null }
    count = kept
  }
}

/** The work list of a closure: (thread, program position, parked-to-skip) entries, LIFO. */
private final class ClosureStack {
  private var threads = new Array[MatchThread](16)
  private var pcs = new Array[Int](16)
  private var skips = new Array[Boolean](16)
  private var size = 0
  // The entry taken by the last pop().
  var thread: MatchThread = _
  var pc: Int = 0
  var skip: Boolean = false

  def nonEmpty: Boolean = size > 0
  def clear(): Unit = if (size > 0) {
    java.util.Arrays.fill(threads.asInstanceOf[Array[AnyRef]], 0, size, null)
    size = 0
  }

  def push(t: MatchThread, p: Int, s: Boolean): Unit = {
    if (size == threads.length) {
      threads = java.util.Arrays.copyOf(threads, size * 2)
      pcs = java.util.Arrays.copyOf(pcs, size * 2)
      skips = java.util.Arrays.copyOf(skips, size * 2)
    }
    threads(size) = t
    pcs(size) = p
    skips(size) = s
    size += 1
  }

  def pop(): Unit = {
    size -= 1
    thread = threads(size)
    pc = pcs(size)
    skip = skips(size)
    threads(size) = null
  }
}

/** A growable array of longs. */
private final class LongBuffer {
  private var values = new Array[Long](16)
  private var size = 0
  def clear(): Unit = size = 0
  def add(v: Long): Unit = {
    if (size == values.length) values = java.util.Arrays.copyOf(values, size * 2)
    values(size) = v
    size += 1
  }
  def toArray: Array[Long] = java.util.Arrays.copyOf(values, size)
}

/**
 * A loop register holds the position where the current iteration began; during the loop's
 * first iteration that position is stored as `-position - 2` (-1 means "not in the loop").
 */
private[automaton] object FirstIteration {
  def mark(pos: Long): Long = -pos - 2
  def isMarked(register: Long): Boolean = register <= -2L
  def position(register: Long): Long = -register - 2
}
