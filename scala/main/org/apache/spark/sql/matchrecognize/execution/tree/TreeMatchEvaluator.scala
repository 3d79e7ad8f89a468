package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory, TaskContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, NamedExpression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.{PartitionKeyText, TaskPredicates}
import org.apache.spark.sql.matchrecognize.plans.PartitionKeys

/**
 * The per-task part of [[TreeMatchExec]]: what a task needs to run the alternatives' trees
 * over its groups (no reference to the plan node, whose subqueries the tasks cannot
 * deserialize), and the iterator of the rows their matches write.
 *
 * @param task the alternatives (their subqueries' values in place) and the rows' positions
 * @param keys the columns the rows are grouped by: the partition key, then the time slice
 * @param projections per alternative, the output row of one of its matches (over its `schema(keys)`)
 * @param nodeCounts per unit (see [[SharedTreeGraph.units]]), its nodes that have metrics,
 *   in the order of the metrics' numbers
 */
class TreeMatchEvaluatorFactory(
    task: TreeTask,
    keys: Seq[Attribute],
    projections: Seq[Seq[NamedExpression]],
    nodeCounts: Seq[Int],
    metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new TreeMatchEvaluator

  private class TreeMatchEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val rows = inputs.head
      val input = task.input
      val alts = task.alternatives
      val keyTypes = keys.map(_.dataType)
      // Each unit: one alternative alone, or alternatives evaluated as one shared graph.
      val evaluators = new TreeUnits(task)
      val units = evaluators.units
      val offsets = nodeCounts.scanLeft(0)(_ + _)
      val n = offsets.last
      val keyOf = UnsafeProjection.create(keys, input)
      // Keys of a case- or accent-insensitive collation compare through their collation key.
      val sameKeyOf =
        if (PartitionKeys.binaryStable(keys)) keyOf
        else UnsafeProjection.create(PartitionKeys.comparable(keys), input)
      val projects = alts.indices.map { i =>
        UnsafeProjection.create(projections(i), alts(i).schema(keys))
      }.toArray
      // Whether a match is the time slice's to keep (when a closure starts the pattern).
      val keeps = alts.indices.map { i =>
        alts(i).keep.map(e => TaskPredicates.compile(e, alts(i).schema(keys))).orNull
      }.toArray
      // Metrics are looked up once per task, not per row or group.
      val inRows = metrics("numInputRows")
      val outRows = metrics("numOutputRows")
      val partialMatches = metrics("partialMatches")
      val created = Array.tabulate(n)(i => metrics(s"created$i"))
      val taskPeak = new Array[Long](n)
      var taskPeakTotal = 0L
      var key: UnsafeRow = null
      var sameKey: UnsafeRow = null
      var states: Array[TreeState] = null
      // Matches wait here until the consumer asks for them; each is projected when handed
      // out (no copy: the row is valid until the next call).
      val pending = new PendingMatches
      // The first row of the next key, read while the last key's held matches wait.
      var lookahead: InternalRow = null
      val outputs = alts.indices.map(evaluators.outputRow(_, keyTypes)).toArray
      def describeKey(): String = PartitionKeyText.inOneSlice(keys.init, key)
      val describe = () => describeKey()
      val pairOutputs = alts.indices.map(evaluators.pairOutputRow(_, keyTypes)).toArray
      def outputOf(t: Int, pm: PartialMatch): InternalRow = {
        evaluators.rowOf(t, pm)
        outputs(t).of(key, pm.lo, pm.hi)
      }
      def pairOutputOf(t: Int, l: PartialMatch, r: PartialMatch): InternalRow = {
        evaluators.pairRow(t, l, r)
        pairOutputs(t).of(key, math.min(l.lo, r.lo), math.max(l.hi, r.hi))
      }
      val emits: Array[PartialMatch => Unit] = alts.indices.map { t =>
        new PairSink {
          override def apply(pm: PartialMatch): Unit =
            if (keeps(t) == null || keeps(t).eval(outputOf(t, pm))) pending.add(t, pm)
          override def pair(l: PartialMatch, r: PartialMatch): Unit =
            if (keeps(t) == null || keeps(t).eval(pairOutputOf(t, l, r))) pending.add(t, l, r)
        }
      }.toArray
      val unitEmits = evaluators.byUnit(emits)
      def finishGroup(): Unit = if (states != null) {
        evaluators.finish(states, unitEmits, describe)
        var total = 0L
        for (u <- units.indices) {
          val state = states(u)
          var i = 0
          while (i < nodeCounts(u)) {
            created(offsets(u) + i) += state.created(i)
            taskPeak(offsets(u) + i) = math.max(taskPeak(offsets(u) + i), state.peak(i))
            total += state.peak(i)
            i += 1
          }
          partialMatches += state.created.sum
        }
        taskPeakTotal = math.max(taskPeakTotal, total)
        states = null
      }
      TaskContext.get().addTaskCompletionListener[Unit] { _ =>
        finishGroup()
        metrics("peakBuffered").set(taskPeakTotal.toDouble)
        (0 until n).foreach(i => metrics(s"peak$i").set(taskPeak(i).toDouble))
      }
      new Iterator[InternalRow] {
        private def fill(): Unit = {
          while (pending.isEmpty && (lookahead != null || rows.hasNext)) {
            val row = if (lookahead != null) lookahead else { inRows += 1; rows.next() }
            lookahead = null
            val k = sameKeyOf(row)
            if (key == null || k != sameKey) {
              finishGroup()
              if (!pending.isEmpty) lookahead = row
              else {
                sameKey = k.copy()
                key = if (sameKeyOf eq keyOf) sameKey else keyOf(row).copy()
                states = evaluators.newStates()
              }
            }
            if (lookahead == null) evaluators.add(states, row, unitEmits, describe)
          }
          // The last group's held matches (a trailing negation) come out at the input's end.
          if (pending.isEmpty && states != null) finishGroup()
        }
        override def hasNext: Boolean = { fill(); !pending.isEmpty }
        override def next(): InternalRow = {
          fill()
          if (pending.isEmpty) throw new NoSuchElementException
          outRows += 1
          val t = pending.tree
          val l = pending.left
          val r = pending.right
          pending.drop()
          projects(t)(if (r == null) outputOf(t, l) else pairOutputOf(t, l, r))
        }
      }
    }
  }
}
