package org.apache.spark.sql.matchrecognize.optimizer

import java.util.concurrent.TimeUnit

/**
 * Statistics of recent patterns (join-order estimates, prefilter coverage), so that EXPLAIN,
 * `explain_pattern` and the runs of the same query sample the input once. Keyed by the canonical MATCH_RECOGNIZE node (its input plan,
 * pattern and conditions) and the sample settings; entries expire after ten minutes, so
 * new data is sampled again. A stale entry only ever changes the plan, never the rows.
 */
object StatisticsCache {

  private val MaxEntries = 64
  private val TtlNanos = TimeUnit.MINUTES.toNanos(10)

  private val entries = new java.util.LinkedHashMap[Any, (Long, Any)](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[Any, (Long, Any)]): Boolean =
      size() > MaxEntries
  }

  /**
   * The cached value for `key`, or `compute()`'s (then cached); the flag is true when it
   * was computed now. Keys carry what the value is (join statistics, prefilter fractions).
   */
  def getOrCompute[T](key: Any)(compute: => T): (T, Boolean) = {
    val now = System.nanoTime()
    entries.synchronized {
      Option(entries.get(key)).filter(e => now - e._1 < TtlNanos)
    } match {
      case Some((_, v)) => (v.asInstanceOf[T], false)
      case None =>
        val v = compute
        entries.synchronized(entries.put(key, (System.nanoTime(), v)))
        (v, true)
    }
  }

  def clear(): Unit = entries.synchronized(entries.clear())
}
