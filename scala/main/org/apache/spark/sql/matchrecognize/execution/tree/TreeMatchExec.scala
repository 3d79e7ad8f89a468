package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, Expression, GenericInternalRow, NamedExpression, JoinedRow, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.{TreeJoinNode, TreeLeafNode, TreeLeafSpec, TreeNegationSpec, TreeNodeSpec}

/**
 * Runs a one-pass tree (see [[TreeEvaluator]]) over each group of its input: rows
 * clustered by `keys` (partition key and time slice) and sorted by ORDER BY position, so
 * one shuffle and one sort feed the whole tree. Records per node the partial matches it
 * created and the most it buffered at once. `projection` computes each output row from a
 * match's columns (the keys, every leaf's columns and the span): the query's measures when
 * they sit right above the tree, so a match is written once.
 */
case class TreeMatchExec(
    keys: Seq[Attribute],
    leaves: Seq[TreeLeafSpec],
    root: TreeNodeSpec,
    negations: Seq[TreeNegationSpec],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long,
    outLo: Attribute,
    outHi: Attribute,
    description: String,
    output: Seq[Attribute],
    projection: Seq[NamedExpression],
    child: SparkPlan) extends UnaryExecNode {

  override def requiredChildDistribution: Seq[Distribution] = Seq(ClusteredDistribution(keys))

  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq(keys.map(SortOrder(_, Ascending)) :+ SortOrder(order, Ascending))

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def producedAttributes: AttributeSet =
    AttributeSet(leaves.flatMap(_.columns.map(_.toAttribute)) :+ outLo :+ outHi)

  override def simpleString(maxFields: Int): String =
    s"CepTreeMatch $description within $window, one pass over each partition key"

  /**
   * The tree's nodes in post order, then its negations (the evaluator's numbering), named
   * for the metrics.
   */
  @transient private lazy val nodeNames: Seq[String] = {
    def walk(n: TreeNodeSpec): Seq[String] = n match {
      case TreeLeafNode(k) => Seq(leaves(k).variable)
      case j: TreeJoinNode => walk(j.left) ++ walk(j.right) :+ j.description
    }
    walk(root) ++ negations.map("!" + _.leaf.variable)
  }

  private def evaluator(input: Seq[Attribute]): TreeEvaluator =
    new TreeEvaluator(leaves, root, negations, input, order, lo, hi, window, narrowByOrder, maxBuffered)

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of events read"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of matches out"),
    "partialMatches" -> SQLMetrics.createMetric(sparkContext, "partial matches created"),
    "peakBuffered" ->
      SQLMetrics.createAverageMetric(sparkContext, "peak buffered partial matches per task")) ++
    nodeNames.zipWithIndex.flatMap { case (name, i) =>
      Seq(s"created$i" -> SQLMetrics.createMetric(sparkContext, s"partial matches created at $name"),
        s"peak$i" -> SQLMetrics.createAverageMetric(sparkContext,
          s"peak buffered partial matches at $name per task"))
    }

  override protected def doExecute(): RDD[InternalRow] = {
    val input = child.output
    val keyAttrs = keys
    val partitionNames = keys.init.map(_.name)
    val keyTypes = keys.map(_.dataType)
    val schema = keys ++ root.leafIndexes.flatMap(i => leaves(i).columns.map(_.toAttribute)) :+
      outLo :+ outHi
    val outputList = projection
    val m = metrics
    val n = nodeNames.size
    val makeEvaluator = (in: Seq[Attribute]) => evaluator(in)
    child.execute().mapPartitionsInternal { rows =>
      val tree = makeEvaluator(input)
      val keyOf = UnsafeProjection.create(keyAttrs, input)
      val project = UnsafeProjection.create(outputList, schema)
      val inRows = m("numInputRows")
      val outRows = m("numOutputRows")
      val created = (0 until n).map(i => m(s"created$i")).toArray
      val taskPeak = new Array[Long](n)
      var taskPeakTotal = 0L
      var key: UnsafeRow = null
      var state: TreeState = null
      val pending = new java.util.ArrayDeque[InternalRow]()
      val outer = new JoinedRow
      val inner = new JoinedRow
      val span = new GenericInternalRow(2)
      def describeKey(): String =
        if (partitionNames.isEmpty) "the input (no PARTITION BY) in one time slice"
        else "partition key (" + partitionNames.indices.map { i =>
          s"${partitionNames(i)}=${key.get(i, keyTypes(i))}"
        }.mkString(", ") + ") in one time slice"
      val emit = (pm: PartialMatch) => {
        span.setLong(0, pm.lo)
        span.setLong(1, pm.hi)
        pending.add(project(outer(key, inner(tree.rowOf(pm), span))).copy())
        ()
      }
      def finishGroup(): Unit = if (state != null) {
        tree.finish(state, emit)
        var i = 0
        var total = 0L
        while (i < n) {
          created(i) += state.created(i)
          taskPeak(i) = math.max(taskPeak(i), state.peak(i))
          total += state.peak(i)
          i += 1
        }
        m("partialMatches") += state.created.sum
        taskPeakTotal = math.max(taskPeakTotal, total)
        state = null
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
              state = tree.newState()
            }
            tree.add(state, row, emit, () => describeKey())
          }
          // The last group's held matches (a trailing negation) come out at the input's end.
          if (pending.isEmpty && state != null) finishGroup()
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

  override protected def withNewChildInternal(c: SparkPlan): TreeMatchExec = copy(child = c)
}
