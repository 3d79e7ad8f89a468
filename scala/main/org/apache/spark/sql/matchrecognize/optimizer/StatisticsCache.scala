package org.apache.spark.sql.matchrecognize.optimizer

import java.util.concurrent.TimeUnit

/**
 * Statistics of recent patterns, so that EXPLAIN, `explain_pattern` and the run of the same
 * query sample the input once. Keyed by the canonical MATCH_RECOGNIZE node (its input plan,
 * pattern and conditions) and the sample settings; entries expire after ten minutes, so
 * new data is sampled again. A stale entry only ever changes the plan, never the rows.
 */
object StatisticsCache {

  private val MaxEntries = 64
  private val TtlNanos = TimeUnit.MINUTES.toNanos(10)

  private val entries = new java.util.LinkedHashMap[Any, (Long, Option[StatisticsEstimator.Estimates])](
    16, 0.75f, true) {
    override def removeEldestEntry(
        e: java.util.Map.Entry[Any, (Long, Option[StatisticsEstimator.Estimates])]): Boolean =
      size() > MaxEntries
  }

  /** The cached estimates for `key`, or `compute()`'s (then cached); `fresh` tells which. */
  def getOrCompute(key: Any)(compute: => Option[StatisticsEstimator.Estimates])
      : (Option[StatisticsEstimator.Estimates], Boolean) = {
    val now = System.nanoTime()
    entries.synchronized {
      Option(entries.get(key)).filter(e => now - e._1 < TtlNanos)
    } match {
      case Some((_, v)) => (v, false)
      case None =>
        val v = compute
        entries.synchronized(entries.put(key, (System.nanoTime(), v)))
        (v, true)
    }
  }

  def clear(): Unit = entries.synchronized(entries.clear())
}
