package org.apache.spark.sql.matchrecognize.execution.counting

import java.util.{HashMap => JHashMap, TreeMap => JTreeMap}

import org.apache.spark.sql.matchrecognize.plans.CountedSequence.Pair

/**
 * The prefixes of one START that end at an element whose next element's DEFINE compares the
 * two rows, kept per [[PairKey]] of their last row (equality part, then range part in
 * order), each key with its run of [[PrefixAggregates]]. A row of the next element extends
 * the prefixes under the keys its probe matches: the same equality part, and a range part
 * below, at most, above, at least or other than its own (`Pair` codes), found in order in
 * a tree.
 */
private[counting] final class KeyedPrefixes(aggregates: PrefixAggregates) {
  private val byEqual = new JHashMap[AnyRef, JTreeMap[java.lang.Long, Array[Long]]]()

  def isEmpty: Boolean = byEqual.isEmpty

  def clear(): Unit = byEqual.clear()

  /** Adds the run at `src(s)` under `key`. */
  def add(key: PairKey, src: Array[Long], s: Int): Unit = {
    var ranges = byEqual.get(key.equal)
    if (ranges == null) {
      ranges = new JTreeMap[java.lang.Long, Array[Long]]()
      byEqual.put(key.equal, ranges)
    }
    var run = ranges.get(key.range)
    if (run == null) {
      run = new Array[Long](aggregates.width)
      ranges.put(key.range, run)
    }
    aggregates.combine(run, 0, src, s)
  }

  /** Adds every run of `other` to this one's. */
  def addAll(other: KeyedPrefixes): Unit =
    other.byEqual.forEach { (equal, ranges) =>
      ranges.forEach((range, run) => add(new PairKey(equal, range), run, 0))
    }

  /** Adds to `dst` the runs of the keys `probe` matches under `pair`. */
  def matching(probe: PairKey, pair: Int, dst: Array[Long]): Unit = {
    val ranges = byEqual.get(probe.equal)
    if (ranges != null) {
      val p = java.lang.Long.valueOf(probe.range)
      def take(picked: java.util.Map[java.lang.Long, Array[Long]]): Unit =
        picked.values.forEach(run => aggregates.combine(dst, 0, run, 0))
      pair match {
        case Pair.EQUAL => take(ranges)
        case Pair.BELOW => take(ranges.headMap(p, false))
        case Pair.AT_MOST => take(ranges.headMap(p, true))
        case Pair.ABOVE => take(ranges.tailMap(p, false))
        case Pair.AT_LEAST => take(ranges.tailMap(p, true))
        case Pair.DIFFERENT =>
          take(ranges.headMap(p, false))
          take(ranges.tailMap(p, false))
      }
    }
  }
}
