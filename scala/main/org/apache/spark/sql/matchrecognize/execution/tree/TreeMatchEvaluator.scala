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
 * @param nodeCounts per tree a group may run (one, or several with `TreesPerKey`), per unit
 *   (see [[SharedTreeGraph.units]]), its nodes that have metrics, in the order of the metrics'
 *   numbers
 */
class TreeMatchEvaluatorFactory(
    task: TreeTask,
    keys: Seq[Attribute],
    projections: Seq[Seq[NamedExpression]],
    nodeCounts: Seq[Seq[Int]],
    metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] = new TreeMatchEvaluator

  private class TreeMatchEvaluator extends PartitionEvaluator[InternalRow, InternalRow] {
    override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] = {
      val rows = inputs.head
      val input = task.input
      val keyTypes = keys.map(_.dataType)
      val keyOf = UnsafeProjection.create(keys, input)
      // Keys of a case- or accent-insensitive collation compare through their collation key.
      val sameKeyOf =
        if (PartitionKeys.binaryStable(keys)) keyOf
        else UnsafeProjection.create(PartitionKeys.comparable(keys), input)
      // Metrics are looked up once per task, not per row or group.
      val inRows = metrics("numInputRows")
      val outRows = metrics("numOutputRows")
      val partialMatches = metrics("partialMatches")
      val n = nodeCounts.flatten.sum
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
      def describeKey(): String = PartitionKeyText.inOneSlice(keys.init, key)
      val describe = () => describeKey()

      /** The alternatives evaluated as one of the trees a group may run (`TreesPerKey`). */
      final class Run(task: TreeTask, firstNode: Int, counts: Seq[Int]) {
        private val alts = task.alternatives
        // Each unit: one alternative alone, or alternatives evaluated as one shared graph.
        val evaluators = new TreeUnits(task)
        private val units = evaluators.units
        private val offsets = counts.scanLeft(firstNode)(_ + _)
        val projects: Array[UnsafeProjection] = alts.indices.map { i =>
          UnsafeProjection.create(projections(i), alts(i).schema(keys))
        }.toArray
        // Whether a match is the time slice's to keep (when a closure starts the pattern).
        private val keeps = alts.indices.map { i =>
          alts(i).keep.map(e => TaskPredicates.compile(e, alts(i).schema(keys))).orNull
        }.toArray
        private val outputs = alts.indices.map(evaluators.outputRow(_, keyTypes)).toArray
        private val pairOutputs = alts.indices.map(evaluators.pairOutputRow(_, keyTypes)).toArray
        def outputOf(t: Int, pm: PartialMatch): InternalRow = {
          evaluators.rowOf(t, pm)
          outputs(t).of(key, pm.lo, pm.hi)
        }
        def pairOutputOf(t: Int, l: PartialMatch, r: PartialMatch): InternalRow = {
          evaluators.pairRow(t, l, r)
          pairOutputs(t).of(key, math.min(l.lo, r.lo), math.max(l.hi, r.hi))
        }
        private val emits: Array[PartialMatch => Unit] = alts.indices.map { t =>
          new PairSink {
            override def apply(pm: PartialMatch): Unit =
              if (keeps(t) == null || keeps(t).eval(outputOf(t, pm))) pending.add(t, pm)
            override def pair(l: PartialMatch, r: PartialMatch): Unit =
              if (keeps(t) == null || keeps(t).eval(pairOutputOf(t, l, r))) pending.add(t, l, r)
          }
        }.toArray
        val unitEmits: Array[Array[PartialMatch => Unit]] = evaluators.byUnit(emits)

        /** Adds the group's metrics to the task's. */
        def count(states: Array[TreeState]): Unit = {
          var total = 0L
          for (u <- units.indices) {
            val state = states(u)
            var i = 0
            while (i < counts(u)) {
              created(offsets(u) + i) += state.created(i)
              taskPeak(offsets(u) + i) = math.max(taskPeak(offsets(u) + i), state.peak(i))
              total += state.peak(i)
              i += 1
            }
            partialMatches += state.created.sum
          }
          taskPeakTotal = math.max(taskPeakTotal, total)
        }
      }

      // Tree 0 is the alternatives' own; with trees per key, tree i > 0 is the one
      // alternative's class i (built when a group first picks it).
      val perKey = task.alternatives match {
        case Seq(a) => a.perKey
        case _ => None
      }
      val tasks = task +: perKey.toIndexedSeq.flatMap(_.classes.map(c => task.copy(alternatives = Seq(c))))
      val firstNodes = nodeCounts.map(_.sum).scanLeft(0)(_ + _)
      val runs = new Array[Run](tasks.length)
      def runOf(c: Int): Run = {
        if (runs(c) == null) runs(c) = new Run(tasks(c), firstNodes(c), nodeCounts(c))
        runs(c)
      }
      var run = runOf(0)
      val prefix = perKey.map(k => new KeyPrefix(k.chooser, task.alternatives.head, input, task.lo)).orNull
      val keysByTree = tasks.indices.map(c => metrics.get(s"keysTree$c").orNull).toArray

      def startGroup(): Unit =
        if (prefix == null) states = run.evaluators.newStates()
        else prefix.start()
      def add(row: InternalRow): Unit =
        if (states != null) run.evaluators.add(states, row, run.unitEmits, describe)
        else if (prefix.add(row)) choose()
      // The group's tree, from its rows read so far, which it then reads.
      def choose(): Unit = {
        val c = prefix.choice
        keysByTree(c) += 1
        run = runOf(c)
        states = run.evaluators.newStates()
        prefix.drain(r => run.evaluators.add(states, r, run.unitEmits, describe))
      }
      def finishGroup(): Unit = {
        if (prefix != null && prefix.active) choose()
        if (states != null) {
          run.evaluators.finish(states, run.unitEmits, describe)
          run.count(states)
          states = null
        }
      }
      TaskContext.get().addTaskCompletionListener[Unit] { _ =>
        finishGroup()
        metrics("peakBuffered").set(taskPeakTotal.toDouble)
        (0 until n).foreach(i => metrics(s"peak$i").set(taskPeak(i).toDouble))
      }
      new Iterator[InternalRow] {
        private var inGroup = false
        private def fill(): Unit = {
          while (pending.isEmpty && (lookahead != null || rows.hasNext)) {
            val row = if (lookahead != null) lookahead else { inRows += 1; rows.next() }
            lookahead = null
            val k = sameKeyOf(row)
            if (!inGroup || k != sameKey) {
              finishGroup()
              inGroup = false
              if (!pending.isEmpty) lookahead = row
              else {
                sameKey = k.copy()
                key = if (sameKeyOf eq keyOf) sameKey else keyOf(row).copy()
                startGroup()
                inGroup = true
              }
            }
            if (lookahead == null) add(row)
          }
          // The last group's held matches (a trailing negation) come out at the input's end.
          if (pending.isEmpty && inGroup) { finishGroup(); inGroup = false }
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
          run.projects(t)(if (r == null) run.outputOf(t, l) else run.pairOutputOf(t, l, r))
        }
      }
    }
  }
}
