package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.reflect.ClassTag

import org.apache.spark.{NarrowDependency, Partition, TaskContext}
import org.apache.spark.rdd.RDD

/**
 * Groups consecutive partitions of `prev` into `tasks` tasks and maps each group with `f`,
 * which may also read the other partitions of `prev` (`read(j)`, each read computing that
 * partition again): the ranges of a split partition ([[SplitMatching]]) read the rows just
 * before and after their own. `prev`'s partitions are finer than the tasks, so that what a
 * task reads of its neighbours is a fraction of what it reads of its own. The dependency
 * names each group's partitions and their two neighbours, where most reads go.
 *
 * `f(first, end, total, rows, read)`: the task's own partitions are `first` until `end`
 * (exclusive) of `total`, and `rows` are theirs, one after the other.
 */
final class NeighbourReadingRDD[T, U: ClassTag](
    prev: RDD[T],
    tasks: Int,
    f: (Int, Int, Int, Iterator[T], Int => Iterator[T]) => Iterator[U])
  extends RDD[U](prev.context,
    Seq(new NarrowDependency[T](prev) {
      private val total = prev.partitions.length
      override def getParents(partitionId: Int): Seq[Int] = {
        val (first, end) = NeighbourReadingRDD.group(partitionId, tasks, total)
        (first - 1 to end).filter(p => p >= 0 && p < total)
      }
    })) {

  private val parentPartitions: Array[Partition] = prev.partitions

  override protected def getPartitions: Array[Partition] = {
    val total = parentPartitions.length
    (0 until math.max(1, math.min(tasks, total))).map { i =>
      val (first, end) = NeighbourReadingRDD.group(i, tasks, total)
      NeighbourReadingPartition(i, first, end, parentPartitions): Partition
    }.toArray
  }

  override def compute(split: Partition, context: TaskContext): Iterator[U] = {
    val p = split.asInstanceOf[NeighbourReadingPartition]
    val read = (j: Int) => prev.iterator(p.all(j), context)
    f(p.first, p.end, p.all.length, (p.first until p.end).iterator.flatMap(read), read)
  }
}

object NeighbourReadingRDD {

  /** The parent partitions of task `i` of `tasks` over `total`: `first` until `end`. */
  def group(i: Int, tasks: Int, total: Int): (Int, Int) = {
    val n = math.max(1, math.min(tasks, total))
    (i * total / n, (i + 1) * total / n)
  }
}

private final case class NeighbourReadingPartition(index: Int, first: Int, end: Int, all: Array[Partition])
  extends Partition
