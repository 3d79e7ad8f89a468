package org.apache.spark.sql.matchrecognize.execution.tree

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.plans.SortableLongs
import org.apache.spark.sql.matchrecognize.plans.CountedSequence.Pair
import org.apache.spark.sql.matchrecognize.plans.TreeLeafSpec
import org.apache.spark.sql.types._

/**
 * A comparison (=, <, <=, >, >=) at the top of a join node's condition between an
 * expression of one child's rows and an expression of the other's, by which the partial
 * matches buffered at one child can be looked up in order of their value
 * ([[NodeValueIndex]]) instead of each being tested: a partial match of the other child
 * (the probing one) reads only those whose value relates to its own as `code` says (a
 * `CountedSequence.Pair` code: the buffered value below, at most, equal to, at least or
 * above the probing one). Values are read as longs that sort as Spark compares them.
 *
 * The lookup only narrows: every pair it yields is still tested against the whole
 * condition. A value that is null relates to nothing (the condition cannot be true); one
 * whose evaluation fails is reported as such, and its match is then tested as before, so
 * that the error, if the condition raises it, comes where it came without the index.
 */
private[tree] final class IndexedComparison(
    val code: Int,
    buffered: Expression,
    bufferedLeaves: Seq[Int],
    probing: Expression,
    probingLeaves: Seq[Int],
    leaves: Seq[TreeLeafSpec]) {
  import IndexedComparison._

  private def reader(e: Expression, leafIndexes: Seq[Int]): (LeafRowsView, UnsafeProjection) =
    (new LeafRowsView(leafIndexes, leaves, leafIndexes.size),
      UnsafeProjection.create(Seq(e), leafIndexes.flatMap(k => leaves(k).columns.map(_.toAttribute))))

  private val (bufferedView, bufferedValue) = reader(buffered, bufferedLeaves)
  private val (probingView, probingValue) = reader(probing, probingLeaves)
  // The value as a long that sorts as Spark compares values of its type, chosen once.
  private val asLong = SortableLongs.reader(buffered.dataType)

  /** The value the last `ofBuffered` or `ofProbing` read, when it returned [[Valued]]. */
  var value: Long = 0L

  /** Reads a buffered match's value into `value`: [[Valued]], [[IsNull]] or [[Failed]]. */
  def ofBuffered(m: PartialMatch): Int = read(bufferedValue, bufferedView.of(m.rows))

  /** Reads a probing match's value into `value`: [[Valued]], [[IsNull]] or [[Failed]]. */
  def ofProbing(m: PartialMatch): Int = read(probingValue, probingView.of(m.rows))

  private def read(projection: UnsafeProjection, row: InternalRow): Int =
    try {
      val r = projection(row)
      if (r.isNullAt(0)) IsNull
      else {
        value = asLong(r, 0)
        Valued
      }
    } catch {
      case NonFatal(_) => Failed
    }
}

private[tree] object IndexedComparison extends PredicateHelper {
  val Valued = 0
  val IsNull = 1
  val Failed = 2

  def indexable(t: DataType): Boolean = SortableLongs.supports(t)

  def sortable(d: Double): Long = SortableLongs.ofDouble(d)

  /**
   * The comparison of join node `condition` (over the `left` leaves' columns, then the
   * `right` ones') by which the buffered child's matches can be looked up when the other
   * probes: an equality if there is one, else the first order comparison, in either case
   * not one between two ORDER BY positions (`isPosition`), which the window's bounds
   * already narrow. None when the condition has no such comparison.
   */
  def find(condition: Expression, leftLeaves: Seq[Int], rightLeaves: Seq[Int], bufferedIsLeft: Boolean,
      leaves: Seq[TreeLeafSpec], isPosition: Attribute => Boolean): Option[IndexedComparison] = {
    def attributes(leafIndexes: Seq[Int]) = AttributeSet(leafIndexes.flatMap(k => leaves(k).columns.map(_.toAttribute)))
    val (bufferedLeaves, probingLeaves) = if (bufferedIsLeft) (leftLeaves, rightLeaves) else (rightLeaves, leftLeaves)
    val (ofBuffered, ofProbing) = (attributes(bufferedLeaves), attributes(probingLeaves))
    def reads(e: Expression, side: AttributeSet) =
      e.deterministic && e.references.nonEmpty && e.references.subsetOf(side)
    def positions(l: Expression, r: Expression) = (l, r) match {
      case (a: Attribute, b: Attribute) => isPosition(a) && isPosition(b)
      case _ => false
    }
    // (code when the buffered side is on the left, code when it is on the right)
    val candidates = splitConjunctivePredicates(condition).flatMap {
      case EqualTo(l, r) => Some((l, r, Pair.EQUAL, Pair.EQUAL))
      case LessThan(l, r) => Some((l, r, Pair.BELOW, Pair.ABOVE))
      case LessThanOrEqual(l, r) => Some((l, r, Pair.AT_MOST, Pair.AT_LEAST))
      case GreaterThan(l, r) => Some((l, r, Pair.ABOVE, Pair.BELOW))
      case GreaterThanOrEqual(l, r) => Some((l, r, Pair.AT_LEAST, Pair.AT_MOST))
      case _ => None
    }.flatMap { case (l, r, bufferedLeft, bufferedRight) =>
      if (l.dataType != r.dataType || !indexable(l.dataType) || positions(l, r)) None
      else if (reads(l, ofBuffered) && reads(r, ofProbing)) Some((bufferedLeft, l, r))
      else if (reads(r, ofBuffered) && reads(l, ofProbing)) Some((bufferedRight, r, l))
      else None
    }
    candidates.sortBy(c => if (c._1 == Pair.EQUAL) 0 else 1).headOption.map { case (code, b, p) =>
      new IndexedComparison(code, b, bufferedLeaves, p, probingLeaves, leaves)
    }
  }
}
