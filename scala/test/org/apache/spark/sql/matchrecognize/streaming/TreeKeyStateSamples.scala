package org.apache.spark.sql.matchrecognize.streaming

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.matchrecognize.execution.tree.{KeyRateCounts, PartialMatch, TreeState}
import org.apache.spark.sql.types.LongType

/** SKIP TILL ANY MATCH key states for the codec suites, and what they hold, compared by value. */
object TreeKeyStateSamples {

  def row(values: Long*): UnsafeRow =
    UnsafeProjection.create(values.indices.map(i => BoundReference(i, LongType, nullable = true)))(
      InternalRow(values: _*)).copy()

  def longs(r: UnsafeRow): Seq[Long] = (0 until r.numFields).map(r.getLong)

  /** Three rows, the second shared by two partial matches, one of them also held. */
  def sample(): TreeKeyState = {
    val (r1, r2, r3) = (row(1, 10), row(2, 20), row(3, 30))
    val m1 = new PartialMatch(Array(r1, null), 1, 1, 1, 1)
    val m2 = new PartialMatch(Array(r1, r2), 1, 2, 1, 2)
    val m3 = new PartialMatch(Array(null, r2), 2, 2, 2, 2)
    val tree = new TreeState(2)
    tree.buffers(0).add(m1)
    tree.buffers(1).add(m2)
    tree.buffers(1).add(m3)
    tree.held.add(m2)
    tree.heldUntil = 21
    tree.lastPosition = 2
    tree.buffered = 4
    tree.matches = 7
    tree.created(0) = 5
    tree.peak(1) = 3
    val window = new WindowProgress(2, row(2), 2, Array(r2), Array(row(4, 40)))
    new TreeKeyState(Array(row(5, 50)), window, Array(tree, new TreeState(1)),
      Array(row(9)), 3, Array(row(1, 2)), Array(30L))
  }

  /** `state` with trees per key: running tree 1, leaving tree 0, its rates counted. */
  def withPerKey(state: TreeKeyState): TreeKeyState = {
    val rates = new KeyRateCounts(3, 2)
    rates.admitted(1)(2) = 7
    rates.tested(1)(0) = 40
    rates.passed(1)(0) = 3
    rates.tested(3)(1) = 8
    rates.estimates(0) = 0.034
    rates.rowsIn(1) = 9
    rates.firstIn(1) = -4
    rates.bucket = 2
    rates.readSinceStart = 31
    rates.position = 12
    rates.previousPosition = 11
    val p = new KeyTreeProgress(0x5eedL, rates)
    p.tree = 1
    p.retiring = 0
    p.emitBefore = 12
    p.retireAfter = 42
    p.moveTo = -1
    p.leavesFrom = 7
    state.perKey = p
    state
  }

  def contents(s: TreeKeyState): Seq[Any] = {
    def rows(a: Array[UnsafeRow]) = a.toSeq.map(r => if (r == null) null else longs(r))
    def matches(it: Iterator[PartialMatch]) =
      it.map(m => (rows(m.rows), m.lo, m.hi, m.firstOrder, m.lastOrder)).toSeq
    Seq(rows(s.waiting), s.window.rows, Option(s.window.lastKey).map(longs).orNull, s.window.lastRank,
      rows(s.window.recent), rows(s.window.pending), rows(s.unnumbered), s.numbered,
      rows(s.written), s.writtenUntil.toSeq) ++ s.trees.toSeq.map { t =>
      (t.buffers.toSeq.map(b => matches(b.iterator)), matches(t.held.asScala.iterator),
        t.heldUntil, t.lastPosition, t.buffered, t.matches, t.created.toSeq, t.peak.toSeq)
    } ++ Option(s.perKey).map { p =>
      val r = p.rates
      (p.trees, p.tree, p.retiring, p.emitBefore, p.retireAfter, p.moveTo, r.admitted.toSeq.map(_.toSeq),
        r.rowsIn.toSeq, r.firstIn.toSeq, r.bucket, r.readSinceStart, r.position, r.previousPosition,
        r.tested.toSeq.map(_.toSeq), r.passed.toSeq.map(_.toSeq),
        r.estimates.toSeq.map(java.lang.Double.doubleToLongBits), p.leavesFrom)
    }
  }

}
