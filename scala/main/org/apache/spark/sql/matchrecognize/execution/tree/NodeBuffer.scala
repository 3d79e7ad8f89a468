package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * The partial matches one tree node keeps for its sibling to combine with, indexed by
 * their first window position `lo`: a probe visits only the `lo` range a partner can have,
 * and a purge drops every match starting before a position in one step.
 */
final class NodeBuffer extends Serializable {
  private val byLo = new java.util.TreeMap[java.lang.Long, java.util.ArrayList[PartialMatch]]()
  private var count = 0L

  def size: Long = count

  def add(m: PartialMatch): Unit = {
    var list = byLo.get(m.lo)
    if (list == null) {
      list = new java.util.ArrayList[PartialMatch](4)
      byLo.put(m.lo, list)
    }
    list.add(m)
    count += 1
  }

  /** Calls `f` on every match whose `lo` lies in [from, to]. */
  def probe(from: Long, to: Long)(f: PartialMatch => Unit): Unit =
    if (from <= to && count > 0) {
      val it = byLo.subMap(from, true, to, true).values().iterator()
      while (it.hasNext) {
        val list = it.next()
        var i = 0
        val n = list.size()
        while (i < n) { f(list.get(i)); i += 1 }
      }
    }

  /** Drops every match whose `lo` is below `position`; returns how many. */
  def purgeBefore(position: Long): Long = {
    if (count == 0) return 0L
    val head = byLo.headMap(position, false)
    if (head.isEmpty) return 0L
    var removed = 0L
    val it = head.values().iterator()
    while (it.hasNext) removed += it.next().size()
    head.clear()
    count -= removed
    removed
  }

  /** Every buffered match, in `lo` order. */
  def iterator: Iterator[PartialMatch] = {
    import scala.jdk.CollectionConverters._
    byLo.values().asScala.iterator.flatMap(_.asScala)
  }
}
