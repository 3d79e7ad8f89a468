package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, Expression, Greatest, Least, NamedExpression, SortOrder, SubqueryExpression}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.MatchSpan

/**
 * The sequence join of SKIP TILL ANY MATCH: a band join of two sets of partial matches on
 * their start within each partition key and time slice. For each left partial match, the
 * right ones starting within a window of it are tested for the combined window, the order
 * of the variables and the DEFINE conditions evaluable here. Where the pattern order puts
 * the right side after (before) some left variables, only right rows starting strictly
 * after (before) them are tested: a binary search in the band rather than a predicate
 * per row.
 */
case class SequenceJoinExec(
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    condition: Expression,
    window: Long,
    outLo: Attribute,
    outHi: Attribute,
    description: String,
    output: Seq[Attribute],
    left: SparkPlan,
    right: SparkPlan,
    rightAfter: Seq[Attribute] = Nil,
    rightBefore: Seq[Attribute] = Nil,
    projection: Seq[NamedExpression] = Nil) extends CepBinaryExec {

  // The right side starts after a left variable, so each left row's output starts where
  // it does: the output keeps the left side's order, and the next join needs no sort.
  override def outputOrdering: Seq[SortOrder] =
    if (rightAfter.isEmpty || !(leftSpan.keys :+ outLo).forall(outputSet.contains)) Nil
    else (leftSpan.keys :+ outLo).map(SortOrder(_, Ascending))

  // A projection may drop the key and slice columns the rows are partitioned by.
  override def outputPartitioning: Partitioning = left.outputPartitioning match {
    case p: Expression if !p.references.subsetOf(outputSet) => UnknownPartitioning(p.numPartitions)
    case p => p
  }

  override def producedAttributes: AttributeSet = AttributeSet(Seq(outLo, outHi))

  // The band rows tested against the window and the condition: the join's work, of which
  // the output is the part that passed.
  override protected def operatorMetrics: Map[String, SQLMetric] = Map(
    "numCandidatesTested" -> SQLMetrics.createMetric(sparkContext, "number of candidate pairs tested"))

  override def simpleString(maxFields: Int): String =
    s"SequenceJoin $description within $window" +
      (if (rightAfter.isEmpty) "" else s", right after ${rightAfter.map(_.name).mkString(", ")}") +
      (if (rightBefore.isEmpty) "" else s", right before ${rightBefore.map(_.name).mkString(", ")}") +
      s", condition: ${condition.sql}" +
      (if (projection.isEmpty) "" else s", output: ${projection.map(_.name).mkString(", ")}") +
      ownSortNote

  override protected def doExecute(): RDD[InternalRow] = {
    def leftOrdinal(a: Attribute) = left.output.indexWhere(_.exprId == a.exprId)
    val span: PartialFunction[Expression, Expression] = {
      case a: Attribute if a.exprId == outLo.exprId => Least(Seq(leftSpan.lo, rightSpan.lo))
      case a: Attribute if a.exprId == outHi.exprId => Greatest(Seq(leftSpan.hi, rightSpan.hi))
    }
    val projectionExprs =
      if (projection.isEmpty) output.map(a => span.applyOrElse(a, identity[Expression]))
      else projection.map(_.transformUp(span))
    val after = rightAfter.map(leftOrdinal)
    val before = rightBefore.map(leftOrdinal)
    require(!(after ++ before).contains(-1), s"band bounds of $description not in the left input")
    val task = SequenceJoinTask(sweepSpec, leftHi = leftOrdinal(leftSpan.hi),
      rightHi = right.output.indexWhere(_.exprId == rightSpan.hi.exprId), window, condition, rightAfter = after,
      rightBefore = before, projection = projectionExprs)
    left.execute().zipPartitionsWithEvaluator(right.execute(), new SequenceJoinEvaluatorFactory(task, metrics))
  }

  override protected def withNewChildrenInternal(l: SparkPlan, r: SparkPlan): SequenceJoinExec =
    copy(left = l, right = r)
}

object SequenceJoinExec {

  /** A projection the join can compute itself as it builds each output row. */
  def canProject(list: Seq[NamedExpression]): Boolean =
    !list.exists(e => SubqueryExpression.hasSubquery(e))
}
