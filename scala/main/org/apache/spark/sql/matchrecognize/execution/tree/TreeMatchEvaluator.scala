package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, GenericInternalRow, JoinedRow, NamedExpression, Predicate, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.plans.TreeAlternative

/**
 * The per-task part of [[TreeMatchExec]]: what a task needs to run the alternatives' trees
 * over its groups (no reference to the plan node, whose subqueries the tasks cannot
 * deserialize), and the iterator of the rows their matches write. `nodeCounts(i)`: the
 * nodes of alternative `i` that have metrics, in the order of the metrics' numbers.
 */
class TreeMatchEvaluatorFactory(
    input: Seq[Attribute],
    keyAttrs: Seq[Attribute],
    alts: Seq[TreeAlternative],
    projectionLists: Seq[Seq[NamedExpression]],
    o: Expression,
    l: Expression,
    h: Expression,
    w: Long,
    narrow: Boolean,
    limit: Long,
    m: Map[String, SQLMetric],
    nodeCounts: Seq[Int])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new TreeMatchEvaluator

  private class TreeMatchEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val rows = inputs.head
      val partitionNames = keyAttrs.init.map(_.name)
      val keyTypes = keyAttrs.map(_.dataType)
      val offsets = nodeCounts.scanLeft(0)(_ + _)
      val n = offsets.last
      val trees = alts.map(a => TreeEvaluator.of(a, input, o, l, h, w, narrow, limit)).toArray
      val keyOf = UnsafeProjection.create(keyAttrs, input)
      val projects = alts.indices.map { i =>
        UnsafeProjection.create(projectionLists(i), alts(i).schema(keyAttrs))
      }.toArray
      // Whether a match is the time slice's to keep (when a closure starts the pattern).
      val keeps = alts.indices.map { i =>
        alts(i).keep.map { e =>
          val p = Predicate.create(e, alts(i).schema(keyAttrs))
          p.initialize(0)
          p
        }.orNull
      }.toArray
      val inRows = m("numInputRows")
      val outRows = m("numOutputRows")
      val created = (0 until n).map(i => m(s"created$i")).toArray
      val taskPeak = new Array[Long](n)
      var taskPeakTotal = 0L
      var key: UnsafeRow = null
      var states: Array[TreeState] = null
      val pending = new java.util.ArrayDeque[InternalRow]()
      val outer = new JoinedRow
      val inner = new JoinedRow
      val span = new GenericInternalRow(2)
      def describeKey(): String =
        if (partitionNames.isEmpty) "the input (no PARTITION BY) in one time slice"
        else "partition key (" + partitionNames.indices.map { i =>
          s"${partitionNames(i)}=${key.get(i, keyTypes(i))}"
        }.mkString(", ") + ") in one time slice"
      val describe = () => describeKey()
      val emits: Array[PartialMatch => Unit] = trees.indices.map { t => (pm: PartialMatch) =>
        span.setLong(0, pm.lo)
        span.setLong(1, pm.hi)
        val row = outer(key, inner(trees(t).rowOf(pm), span))
        if (keeps(t) == null || keeps(t).eval(row)) pending.add(projects(t)(row).copy())
        ()
      }.toArray
      def finishGroup(): Unit = if (states != null) {
        var total = 0L
        for (t <- trees.indices) {
          val state = states(t)
          trees(t).finish(state, emits(t), describe)
          var i = 0
          while (i < nodeCounts(t)) {
            created(offsets(t) + i) += state.created(i)
            taskPeak(offsets(t) + i) = math.max(taskPeak(offsets(t) + i), state.peak(i))
            total += state.peak(i)
            i += 1
          }
          m("partialMatches") += state.created.sum
        }
        taskPeakTotal = math.max(taskPeakTotal, total)
        states = null
      }
      TaskContext.get().addTaskCompletionListener[Unit] { _ =>
        finishGroup()
        m("peakBuffered").set(taskPeakTotal.toDouble)
        (0 until n).foreach(i => m(s"peak$i").set(taskPeak(i).toDouble))
      }
      new Iterator[InternalRow] {
        private def fill(): Unit = {
          while (pending.isEmpty && rows.hasNext) {
            val row = rows.next()
            inRows += 1
            val k = keyOf(row)
            if (key == null || k != key) {
              finishGroup()
              key = k.copy()
              states = trees.map(_.newState())
            }
            var t = 0
            while (t < trees.length) {
              trees(t).add(states(t), row, emits(t), describe)
              t += 1
            }
          }
          // The last group's held matches (a trailing negation) come out at the input's end.
          if (pending.isEmpty && states != null) finishGroup()
        }
        override def hasNext: Boolean = { fill(); !pending.isEmpty }
        override def next(): InternalRow = {
          fill()
          if (pending.isEmpty) throw new NoSuchElementException
          outRows += 1
          pending.poll()
        }
      }
    }
  }
}
