package org.apache.spark.sql.matchrecognize.execution

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.SparkEnv
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, RowOrdering, SortOrder, SortPrefix, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.types.DataTypeUtils
import org.apache.spark.sql.execution.{SortPrefixUtils, SparkPlan, UnsafeExternalRowSorter}
import org.apache.spark.sql.execution.UnsafeExternalRowSorter.PrefixComputer
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.util.collection.unsafe.sort.PrefixComparator

/**
 * Sorts one task's rows for an operator that sorts its own input. Rows are first held as
 * an array, and while they stay under `inMemoryBytes` (an internal conf, 1 MB) they are
 * sorted there; only beyond that does Spark's sorter take over (fed the held rows first),
 * with its memory accounting and spilling. Spark's sorter takes a whole memory page for a
 * task's first row (64 MB with a large driver), which costs more than sorting the few
 * hundred rows that many tasks of a SKIP TILL ANY MATCH plan get. Both paths compare by
 * the same ordering, so they return the same order.
 */
private[matchrecognize] final class TaskSort(
    ordering: Seq[SortOrder], input: Seq[Attribute], prefixes: TaskSort.Prefixes,
    inMemoryBytes: Long) extends Serializable {

  /** `rows` in `ordering`; the time spent sorting goes to `sortTime` (nanoseconds). */
  def sort(rows: Iterator[InternalRow], sortTime: SQLMetric): Iterator[InternalRow] = {
    val held = new ArrayBuffer[InternalRow]
    var bytes = 0L
    while (bytes < inMemoryBytes && rows.hasNext) {
      val row = rows.next().asInstanceOf[UnsafeRow].copy()
      bytes += row.getSizeInBytes + TaskSort.RowOverheadBytes
      held += row
    }
    if (!rows.hasNext) {
      val start = System.nanoTime()
      val array = held.toArray
      java.util.Arrays.sort(array, RowOrdering.create(ordering, input))
      sortTime += System.nanoTime() - start
      array.iterator
    } else {
      val (comparator, computer) = prefixes.create()
      val sorter = UnsafeExternalRowSorter.create(DataTypeUtils.fromAttributes(input),
        RowOrdering.create(ordering, input), comparator, computer,
        SparkEnv.get.memoryManager.pageSizeBytes, false)
      val sorted = sorter.sort((held.iterator ++ rows).asInstanceOf[Iterator[UnsafeRow]])
      sortTime += sorter.getSortTimeNanos
      sorted
    }
  }
}

private[matchrecognize] object TaskSort {

  /** What a held row costs besides its bytes (its object, its array and a slot). */
  private val RowOverheadBytes = 48

  /** The 64-bit prefixes Spark's sorter compares first (made on the executor). */
  trait Prefixes extends Serializable {
    def create(): (PrefixComparator, PrefixComputer)
  }

  /**
   * Whether an operator sorts `child`'s rows by `ordering` itself: not when they already
   * come in that order, nor under the internal conf that keeps Spark's Sort.
   */
  def wanted(conf: SQLConf, child: SparkPlan, ordering: Seq[SortOrder]): Boolean =
    conf.getConf(MatchRecognizeConf.OWN_SORT) && ordering.nonEmpty &&
      !SortOrder.orderingSatisfies(child.outputOrdering, ordering)

  /** The in-memory budget of a task's sort (internal conf). */
  def inMemoryBytes(conf: SQLConf): Long = conf.getConf(MatchRecognizeConf.SORT_IN_MEMORY_BYTES)

  /** A sort by `ordering`, with Spark's own prefix of its first key. */
  def apply(ordering: Seq[SortOrder], input: Seq[Attribute], inMemoryBytes: Long): TaskSort =
    new TaskSort(ordering, input,
      new FirstKeyPrefixes(
        BindReferences.bindReference(ordering.head, input)), inMemoryBytes)

  private final class FirstKeyPrefixes(first: SortOrder) extends Prefixes {
    override def create(): (PrefixComparator, PrefixComputer) = {
      val prefixOf = SortPrefix(first)
      val projection = UnsafeProjection.create(Seq(prefixOf))
      val computer = new PrefixComputer {
        private val prefix = new PrefixComputer.Prefix
        override def computePrefix(row: InternalRow): PrefixComputer.Prefix = {
          val p = projection(row)
          prefix.isNull = p.isNullAt(0)
          prefix.value = if (prefix.isNull) prefixOf.nullValue else p.getLong(0)
          prefix
        }
      }
      (SortPrefixUtils.getPrefixComparator(first), computer)
    }
  }
}
