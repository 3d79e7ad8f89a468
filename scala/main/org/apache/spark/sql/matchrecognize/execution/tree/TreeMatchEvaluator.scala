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

      /**
       * The alternatives evaluated as one of the trees a group may run (`TreesPerKey`). Its
       * matches wait in `pending` under `tag`: the alternative's number, or with trees per
       * key (one alternative), the tree's. With trees per key its leaves keep their rows, from
       * which a group moving to another tree builds that tree.
       */
      final class Run(task: TreeTask, firstNode: Int, counts: Seq[Int], tag: Int => Int, keepsLeaves: Boolean) {
        private val alts = task.alternatives
        // Each unit: one alternative alone, or alternatives evaluated as one shared graph.
        val evaluators = new TreeUnits(task, keepsLeaves)
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
              if (keeps(t) == null || keeps(t).eval(outputOf(t, pm))) {
                pending.add(tag(t), pm)
              }
            override def pair(l: PartialMatch, r: PartialMatch): Unit =
              if (keeps(t) == null || keeps(t).eval(pairOutputOf(t, l, r))) {
                pending.add(tag(t), l, r)
              }
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
        if (runs(c) == null) {
          runs(c) = new Run(tasks(c), firstNodes(c), nodeCounts(c), t => if (perKey.isEmpty) t else c, perKey.isDefined)
        }
        runs(c)
      }
      var run = runOf(0)
      var tree = 0
      val window = task.alternatives.head.window.getOrElse(task.window)
      val watch = perKey.map(k => new KeyTreeWatch(k, task.alternatives.head, input, task.lo, window)).orNull
      val keysByTree = tasks.indices.map(c => metrics.get(s"keysTree$c").orNull).toArray
      var moveTo = -1

      def startGroup(): Unit = {
        moveTo = -1
        if (watch == null) states = run.evaluators.newStates()
        else { states = null; watch.start() }
      }
      def runTree(c: Int): Unit = {
        keysByTree(c) += 1
        tree = c
        run = runOf(c)
        states = run.evaluators.newStates()
      }
      def add(row: InternalRow): Unit =
        if (watch == null) run.evaluators.add(states, row, run.unitEmits, describe)
        else {
          val due = watch.read(row)
          if (watch.holding) { if (due) firstTree() }
          else {
            // A move happens at a row past the one before it: the next tree is built from the
            // rows the leaves of the last kept, and reads every row from there on.
            if (moveTo >= 0 && watch.position > watch.previousPosition) {
              val from = tree
              val left = run
              val leftStates = states
              runTree(moveTo)
              val rebuilt = run.evaluators.rebuildFrom(left.evaluators, leftStates, states, run.unitEmits, describe)
              left.count(leftStates)
              moveTo = -1
              metrics("treeMoves") += 1
              KeyTreeMoves.moved(describeKey(), tasks(from).alternatives.head.description,
                tasks(tree).alternatives.head.description, watch.position, rebuilt, watch.describeLastChoice())
            }
            run.evaluators.add(states, row, run.unitEmits, describe)
            if (due && moveTo < 0) {
              val c = watch.choose(tree)
              if (c != tree) moveTo = c
            }
          }
        }
      // The group's first tree, from its first rows, which it then reads.
      def firstTree(): Unit = {
        runTree(watch.choose(-1))
        watch.drain(r => run.evaluators.add(states, r, run.unitEmits, describe))
      }
      def finishGroup(): Unit = {
        if (watch != null && watch.holding) firstTree()
        if (states != null) {
          run.evaluators.finish(states, run.unitEmits, describe)
          run.count(states)
          states = null
        }
      }
      TaskContext.get().addTaskCompletionListener[Unit] { _ =>
        finishGroup()
        metrics("peakBuffered").set(taskPeakTotal.toDouble)
        if (watch != null) addMeasured(watch)
        (0 until n).foreach(i => metrics(s"peak$i").set(taskPeak(i).toDouble))
      }
      // What the keys measured to choose their trees by, summed over the task's keys.
      def addMeasured(w: KeyTreeWatch): Unit = {
        val k = perKey.get.chooser
        k.variables.indices.foreach(i => metrics(s"rows_${k.variables(i)}") += w.admittedSinceResume(i))
        k.pairs.indices.foreach { i =>
          val (a, b) = k.pairs(i)
          metrics(s"pairs_tested_${a}_$b") += w.testedSinceResume(i)
          metrics(s"pairs_passed_${a}_$b") += w.passedSinceResume(i)
        }
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
          // With trees per key a match's tag is its tree (of the one alternative).
          val from = if (perKey.isEmpty) run else runs(pending.tree)
          val t = if (perKey.isEmpty) pending.tree else 0
          val l = pending.left
          val r = pending.right
          pending.drop()
          from.projects(t)(if (r == null) from.outputOf(t, l) else from.pairOutputOf(t, l, r))
        }
      }
    }
  }
}
