package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.SparkEnv

/**
 * Bounds the bytes the automaton holds for one partition (its partial matches: thread
 * objects, their per-label arrays and fingerprints, and their row histories), so that a
 * pattern whose state grows without bound fails with an error naming the limit instead of
 * an OutOfMemoryError that would take the executor down.
 *
 * Allocations are added up as they happen; what is freed is not (histories are shared
 * between threads, so no single thread's death frees a known amount). When the live bytes
 * of the last recount plus everything allocated since pass the limit, the caller counts the
 * live state again ([[beginRecount]], [[countThread]], [[endRecount]]); only a recount over
 * the limit fails. A recount is done at most once per `limit / 8` bytes allocated, so the
 * live state stays under 9/8 of the limit and recounts cost a bounded share of the work.
 */
final class MatcherMemory(val limit: Long) {
  private var liveAtRecount = 0L
  private var allocatedSince = 0L
  private var counting = 0L
  private var epoch = 0
  private val recountEvery = math.max(1L, limit / 8)

  def allocated(bytes: Long): Unit = allocatedSince += bytes

  /** Should the caller recount the live state now? */
  def recountDue: Boolean =
    liveAtRecount + allocatedSince > limit && allocatedSince >= recountEvery

  /** Live bytes as of the last recount, plus what was allocated since (an upper bound). */
  def estimate: Long = liveAtRecount + allocatedSince

  def beginRecount(): Unit = {
    epoch += 1
    if (epoch == Int.MaxValue) epoch = 1 // a chunk marked long ago may be counted twice
    counting = 0L
  }

  /** Adds a live thread: its object, arrays and the history chunks not counted yet. */
  def countThread(t: MatchThread): Unit = {
    counting += MatcherMemory.ThreadBytes
    if (t.fingerprint != null) counting += MatcherMemory.arrayBytes(t.fingerprint.length, 8)
    // Shared between forks, so counted once per thread: an upper bound, like the arrays.
    if (t.aggregates != null) counting += 48L + t.aggregates.getSizeInBytes
    var c = t.chunk
    // Histories are a tree: once a chunk was counted, so were all the chunks before it.
    while (c != null && c.mark != epoch) {
      c.mark = epoch
      counting += MatcherMemory.chunkBytes(c.bits.length)
      c = c.prev
    }
  }

  def countBytes(bytes: Long): Unit = counting += bytes

  /** The live bytes just counted; over the limit, the caller fails. */
  def endRecount(): Long = {
    liveAtRecount = counting
    allocatedSince = 0L
    counting
  }

  /** A new partition: nothing is live any more. */
  def reset(): Unit = {
    liveAtRecount = 0L
    allocatedSince = 0L
  }
}

object MatcherMemory {

  /** A [[MatchThread]]: header, references and fields (compressed pointers). */
  val ThreadBytes = 64L

  /** An [[Attempt]] with its two thread lists. */
  val AttemptBytes = 160L

  /** An array of `n` elements of `width` bytes, header included. */
  def arrayBytes(n: Int, width: Int): Long = 16L + ((n.toLong * width + 7) & ~7L)

  /** A [[HistoryChunk]] with `words` longs. */
  def chunkBytes(words: Int): Long = 32L + arrayBytes(words, 8)

  /** Memory Spark reserves before dividing the heap (as its unified memory manager does). */
  private val ReservedBytes = 300L * 1024 * 1024

  /**
   * The default limit: one task slot's share of the heap that Spark leaves to user data
   * structures, (heap - 300 MB) * (1 - spark.memory.fraction) / executor cores, and at least
   * 32 MB. That part of the heap is outside Spark's managed execution and storage memory, so
   * partial matches up to the limit in every running task do not crowd out Spark's sorts.
   */
  def defaultLimit(): Long = {
    val conf = Option(SparkEnv.get).map(_.conf)
    val fraction = conf.map(_.getDouble("spark.memory.fraction", 0.6)).getOrElse(0.6)
    val cores = conf.flatMap(_.getOption("spark.executor.cores")).map(_.toInt)
      .getOrElse(Runtime.getRuntime.availableProcessors())
    val heap = Runtime.getRuntime.maxMemory()
    val user = ((heap - ReservedBytes).toDouble * (1 - fraction)).toLong
    math.max(32L * 1024 * 1024, user / math.max(1, cores))
  }
}
