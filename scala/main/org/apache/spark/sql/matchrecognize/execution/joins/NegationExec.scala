package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, Expression, SortOrder}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.matchrecognize.plans.MatchSpan

/**
 * Negation `!D` as an anti band join: a partial match survives only if no row of D lies
 * strictly between its `lower` and `upper` ORDER BY positions (trailing negation: after
 * `lower`, and within the window of the match's first row, as a match ending at the D row
 * would be) while satisfying `condition`. A trailing negation is attached where the
 * pattern's first element is bound, so the left span's `lo` is the match's first row.
 */
case class NegationExec(
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    rightOrder: Attribute,
    lower: Expression,
    upper: Option[Expression],
    condition: Option[Expression],
    window: Long,
    description: String,
    left: SparkPlan,
    right: SparkPlan) extends CepBinaryExec {

  override def output: Seq[Attribute] = left.output

  // A filter of its left side, which it reads in start order whether or not it came so
  // (it sorts it, or Spark does): its output is in start order.
  override def outputOrdering: Seq[SortOrder] =
    if (!(leftSpan.keys :+ leftSpan.lo).forall(outputSet.contains)) Nil
    else (leftSpan.keys :+ leftSpan.lo).map(SortOrder(_, Ascending))

  override def simpleString(maxFields: Int): String =
    s"Negation $description" + condition.map(c => s", condition: ${c.sql}").getOrElse("") +
      ownSortNote

  override protected def doExecute(): RDD[InternalRow] = {
    def rightOrdinal(a: Attribute) = right.output.indexWhere(_.exprId == a.exprId)
    val task = NegationTask(sweepSpec, lower, upper, rightOrder = rightOrdinal(rightOrder),
      rightHi = rightOrdinal(rightSpan.hi), condition, window)
    left.execute().zipPartitionsWithEvaluator(right.execute(), new NegationEvaluatorFactory(task, metrics))
  }

  override protected def withNewChildrenInternal(l: SparkPlan, r: SparkPlan): NegationExec =
    copy(left = l, right = r)
}
