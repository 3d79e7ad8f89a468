package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.TaskContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Ascending, Attribute, AttributeSet, Expression, GenericInternalRow, JoinedRow, NamedExpression, Predicate, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode, TreeLeafNode, TreeNodeSpec}

/**
 * Runs the one-pass trees of SKIP TILL ANY MATCH alternatives (see [[TreeEvaluator]]) over
 * each group of its input: rows clustered by `keys` (partition key and time slice) and
 * sorted by ORDER BY position, so one shuffle and one sort feed every tree, each row is
 * offered to every alternative, and each keeps its own state per group. Records per node
 * the partial matches it created and the most it buffered at once. `projections(i)`
 * computes an output row from a match of alternative `i` (its keys, leaves' columns and
 * span): the query's measures when they sit right above the operator, so a match is
 * written once.
 */
case class TreeMatchExec(
    keys: Seq[Attribute],
    alternatives: Seq[TreeAlternative],
    projections: Seq[Seq[NamedExpression]],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long,
    child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = projections.head.map(_.toAttribute)

  override def requiredChildDistribution: Seq[Distribution] = Seq(ClusteredDistribution(keys))

  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq(keys.map(SortOrder(_, Ascending)) :+ SortOrder(order, Ascending))

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def producedAttributes: AttributeSet =
    AttributeSet(alternatives.flatMap(_.produced) ++ output)

  override def simpleString(maxFields: Int): String =
    s"CepTreeMatch ${alternatives.map(_.description).mkString(" ∪ ")} within $window, " +
      "one pass over each partition key"

  /** The same operator writing `list` (over its output) instead of its output. */
  def projectedBy(list: Seq[NamedExpression]): TreeMatchExec = {
    val next = projections.map { columns =>
      val byId = columns.map(c =>
        c.exprId -> (c match {
          case a: Alias => a.child
          case other => other
        })).toMap
      list.map {
        case a: Attribute if byId.contains(a.exprId) => Alias(byId(a.exprId), a.name)(a.exprId)
        case e => e.transform {
            case a: Attribute if byId.contains(a.exprId) => byId(a.exprId)
          }.asInstanceOf[NamedExpression]
      }
    }
    copy(projections = next)
  }

  /**
   * Per alternative, its tree's nodes in post order, then its negations (the evaluator's
   * numbering), named for the metrics; with several alternatives, each name starts with
   * the alternative's number.
   */
  @transient private lazy val nodeNames: Seq[Seq[String]] = alternatives.zipWithIndex.map {
    case (alt, i) =>
      def walk(n: TreeNodeSpec): Seq[String] = n match {
        case TreeLeafNode(k) => Seq(alt.leaves(k).variable)
        case j: TreeJoinNode => walk(j.left) ++ walk(j.right) :+ j.description
      }
      val names = walk(alt.root) ++ alt.negations.map("!" + _.leaf.variable) ++
        alt.kleenes.map(_.description)
      if (alternatives.size == 1) names else names.map(name => s"[${i + 1}] $name")
  }

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of events read"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of matches out"),
    "partialMatches" -> SQLMetrics.createMetric(sparkContext, "partial matches created"),
    "peakBuffered" ->
      SQLMetrics.createAverageMetric(sparkContext, "peak buffered partial matches per task")) ++
    nodeNames.flatten.zipWithIndex.flatMap { case (name, i) =>
      Seq(s"created$i" -> SQLMetrics.createMetric(sparkContext, s"partial matches created at $name"),
        s"peak$i" -> SQLMetrics.createAverageMetric(sparkContext,
          s"peak buffered partial matches at $name per task"))
    }

  override protected def doExecute(): RDD[InternalRow] = {
    val input = child.output
    val keyAttrs = keys
    val partitionNames = keys.init.map(_.name)
    val keyTypes = keys.map(_.dataType)
    val alts = alternatives
    val projectionLists = projections
    val (o, l, h, w, narrow, limit) = (order, lo, hi, window, narrowByOrder, maxBuffered)
    val m = metrics
    val sizes = nodeNames.map(_.size)
    val offsets = sizes.scanLeft(0)(_ + _)
    val n = offsets.last
    child.execute().mapPartitionsInternal { rows =>
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
          while (i < sizes(t)) {
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

  override protected def withNewChildInternal(c: SparkPlan): TreeMatchExec = copy(child = c)
}
