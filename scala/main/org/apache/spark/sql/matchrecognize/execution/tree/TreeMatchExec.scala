package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Ascending, Attribute, AttributeSet, Expression, Literal, NamedExpression, ScalarSubquery, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.{ScalarSubquery => ScalarSubqueryExec, SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.{KeyTreeChooser, TreeAlternative, TreesPerKey}

/**
 * Runs the one-pass trees of SKIP TILL ANY MATCH alternatives (see [[TreeGraphEvaluator]]) over
 * each group of its input: rows clustered by `keys` (partition key and time slice) and
 * sorted by ORDER BY position, so one shuffle and one sort feed every tree, each row is
 * offered to every alternative, and each keeps its own state per group. Records per node
 * the partial matches it created and the most it buffered at once. `projections(i)`
 * computes an output row from a match of alternative `i` (its keys, leaves' columns and
 * span): the query's measures when they sit right above the operator, so a match is
 * written once.
 *
 * `conditionSubqueries`: the scalar subqueries of the conditions inside the alternatives,
 * here where Spark plans and runs them before the tasks (as for any operator's
 * expressions); the tasks get the alternatives with their values in their place.
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
    conditionSubqueries: Seq[Expression],
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
      "one pass over each partition key" + SharedTreeGraph.describe(alternatives) +
      perKey.fold("")(k =>
        s", trees per key: ${k.chooser.trees.mkString(" | ")} (each key runs one, chosen from " +
          s"its first ${k.chooser.prefixRows} rows, and again after each ${k.chooser.prefixRows} more)")

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

  /** With trees per key (one alternative only), the others a group may run. */
  private def perKey: Option[TreesPerKey] = alternatives match {
    case Seq(a) => a.perKey
    case _ => None
  }

  /**
   * Per tree a group may run (the alternatives' own, then those of [[perKey]]), per unit, the
   * names of its state's buffers, in the evaluator's numbering (see [[TreeUnits.bufferNames]]).
   */
  @transient private lazy val nodeNames: Seq[Seq[Seq[String]]] = {
    val own = TreeUnits.bufferNames(alternatives, window)
    perKey.fold(Seq(own)) { k =>
      val trees = k.chooser.trees
      (own +: k.classes.map(c => TreeUnits.bufferNames(Seq(c), window))).zipWithIndex.map { case (names, c) =>
        names.map(_.map(name => s"$name (tree ${trees(c)})"))
      }
    }
  }

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of events read"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of matches out"),
    "partialMatches" -> SQLMetrics.createMetric(sparkContext, "partial matches created"),
    "peakBuffered" ->
      SQLMetrics.createAverageMetric(sparkContext, "peak buffered partial matches per task")) ++
    nodeNames.flatten.flatten.zipWithIndex.flatMap { case (name, i) =>
      Seq(s"created$i" -> SQLMetrics.createMetric(sparkContext, s"partial matches created at $name"),
        s"peak$i" -> SQLMetrics.createAverageMetric(sparkContext,
          s"peak buffered partial matches at $name per task"))
    } ++
    perKey.toSeq.flatMap(_.chooser.trees.zipWithIndex.map { case (tree, c) =>
        s"keysTree$c" -> SQLMetrics.createMetric(sparkContext, s"keys run with tree $tree")
      } ++ perKey.toSeq.flatMap(k =>
        TreeMatchExec.measuredMetrics(k.chooser).map { case (key, name) =>
          key -> SQLMetrics.createMetric(sparkContext, name)
        }) :+ ("treeMoves" -> SQLMetrics.createMetric(sparkContext, "moves of a key to another tree")))

  override protected def doExecute(): RDD[InternalRow] =
    child.execute().mapPartitionsWithEvaluator(new TreeMatchEvaluatorFactory(
        TreeTask(withSubqueryValues(alternatives), child.output, order, lo, hi, window, narrowByOrder, maxBuffered),
        keys, projections, nodeNames.map(_.map(_.size)), metrics))

  /** `alternatives` with each subquery replaced by its value (Spark has run them by now). */
  private def withSubqueryValues(alternatives: Seq[TreeAlternative]): Seq[TreeAlternative] = {
    val values = conditionSubqueries.collect { case s: ScalarSubqueryExec =>
      s.exprId -> Literal(s.eval(null), s.dataType)
    }.toMap
    if (values.isEmpty) alternatives
    else alternatives.map(_.map(_.transform {
      case s: ScalarSubquery if values.contains(s.exprId) => values(s.exprId)
    }))
  }

  override protected def withNewChildInternal(c: SparkPlan): TreeMatchExec = copy(child = c)
}

object TreeMatchExec {

  /**
   * The metrics of what the keys measured to choose their trees by (`rows_A`: the rows A's
   * own conditions admitted; `pairs_tested_A_B`, `pairs_passed_A_B`: the pairs of A and B
   * rows tested against the conditions relating them, and those that passed), keyed as in a
   * stream's progress, with their display names.
   */
  def measuredMetrics(chooser: KeyTreeChooser): Seq[(String, String)] =
    chooser.variables.map(v => s"rows_$v" -> s"rows $v's own conditions admitted (the rates keys choose trees by)") ++
      chooser.pairs.flatMap { case (a, b) =>
        Seq(s"pairs_tested_${a}_$b" -> s"$a-$b pairs tested (the pass rates keys choose trees by)",
          s"pairs_passed_${a}_$b" -> s"$a-$b pairs passed of those tested")
      }
}
