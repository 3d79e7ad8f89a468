package org.apache.spark.sql.matchrecognize.streaming

/**
 * Key states as their functions last saved them, kept decoded, so that the next call of the
 * same key does not decode what the previous one encoded: in Real-Time Mode a key's function
 * is called for each of its rows, and decoding took most of each call; in micro-batches,
 * Spark runs a state partition's next task where its state store already is, so a key's
 * next micro-batch finds its state here too.
 *
 * An entry is the object a function saved with the bytes it saved, and is handed back only
 * for those very bytes and the same query (what decoding checks the bytes against: the
 * query's signature and plan): a state written by another task or restored from a
 * checkpoint is decoded as always, and a changed query's state is checked as always.
 * Decoding is a function of the bytes and the query alone, so an entry is what decoding
 * would give. A call takes its key's entry out, so that a call that fails half-way leaves
 * nothing behind. The states held stay within `maxBytes` (in encoded size; or the more a
 * query asks for, see [[allowAtLeast]]): when a new one does not fit, the oldest go, but only
 * those kept for `freshNanos` or more; if that does not make room, the new one is not kept.
 * A plain least-recently-used bound keeps nothing when micro-batches call more keys than fit
 * in the same order each time (each key is pushed out just before its turn comes again);
 * this keeps a stable share of them, while a state no call came back for leaves in time.
 */
private[streaming] final class DecodedStates(
    maxBytes: Long,
    freshNanos: Long = DecodedStates.FreshNanos,
    now: () => Long = () => System.nanoTime()) {

  @volatile private var budget = maxBytes

  /** Keeps up to `bytes` from now on, if that is more than it keeps (0: no change). */
  def allowAtLeast(bytes: Long): Unit = synchronized { if (bytes > budget) budget = bytes }

  /** The encoded bytes of the states it keeps at most. */
  def limit: Long = budget

  private final class Entry(val bytes: Array[Byte], val query: AnyRef, val decoded: AnyRef, val weight: Long,
      val keptAt: Long)

  // In the order they were kept: a call takes its entry out and puts it back.
  private val entries = new java.util.LinkedHashMap[Any, Entry]()
  private var held = 0L

  /** The object `query` saved for `key` with the bytes `stored`, taken out; or none. */
  def take[T <: AnyRef](key: Any, query: AnyRef, stored: Array[Byte]): Option[T] = {
    val entry = synchronized {
      val e = entries.remove(key)
      if (e != null) held -= e.weight
      e
    }
    if (entry != null && entry.query == query && java.util.Arrays.equals(entry.bytes, stored)) {
      Some(entry.decoded.asInstanceOf[T])
    } else None
  }

  /**
   * Keeps `decoded`, saved by `query` for `key` as `stored`; `weight` is the encoded size of
   * all it holds (more than `stored` when the key keeps entries beside it, see [[KeyEntries]]).
   */
  def put(key: Any, query: AnyRef, stored: Array[Byte], decoded: AnyRef,
      weight: Long): Unit = synchronized {
    remove(key)
    if (weight <= budget) {
      val t = now()
      val oldest = entries.values().iterator()
      var room = true
      while (room && held + weight > budget && oldest.hasNext) {
        val e = oldest.next()
        room = t - e.keptAt >= freshNanos
        if (room) {
          held -= e.weight
          oldest.remove()
        }
      }
      if (held + weight <= budget) {
        entries.put(key, new Entry(stored, query, decoded, weight, t))
        held += weight
      }
    }
  }

  def remove(key: Any): Unit = synchronized {
    val entry = entries.remove(key)
    if (entry != null) held -= entry.weight
  }
}

private[streaming] object DecodedStates {

  /** How long a state is kept before a new one may push it out: a minute. */
  val FreshNanos: Long = 60L * 1000 * 1000 * 1000

  /**
   * The states of every query in this JVM: up to a 64th of its heap in encoded bytes (their
   * objects take a few times that), 128 MiB at most, unless a query asks for more
   * (`spark.sql.matchRecognize.streaming.keptStateBytes`).
   */
  lazy val shared: DecodedStates =
    new DecodedStates(math.min(Runtime.getRuntime.maxMemory / 64, 128L * 1024 * 1024))
}
