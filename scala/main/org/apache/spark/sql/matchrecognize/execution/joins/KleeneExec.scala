package org.apache.spark.sql.matchrecognize.execution.joins

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, BindReferences, Expression, SortOrder}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.matchrecognize.plans.{KleeneOutput, MatchSpan}

/**
 * Kleene closure `B{min,max}` under SKIP TILL ANY MATCH, attached to partial matches that
 * bind its neighbours: each partial match is extended by every key-increasing subset of
 * the B rows between its neighbours (power-set semantics), within the window, whose rows
 * satisfy the row condition (which may read the row chosen before, SASE+ `b[i-1]`). The
 * subsets are enumerated depth-first; more than `maxBindings` for one partial match (one
 * pair of neighbours) fails the query, whatever the join tree.
 */
case class KleeneExec(
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    rightOrder: Attribute,
    lower: Option[Expression],
    upper: Option[Expression],
    rowCondition: Option[Expression],
    previous: Seq[(Attribute, Attribute)],
    min: Int,
    max: Option[Int],
    outputs: Seq[KleeneOutput],
    firstOrder: Attribute,
    lastOrder: Attribute,
    window: Long,
    outLo: Attribute,
    outHi: Attribute,
    maxBindings: Long,
    description: String,
    output: Seq[Attribute],
    left: SparkPlan,
    right: SparkPlan) extends CepBinaryExec {

  override def producedAttributes: AttributeSet =
    AttributeSet(outputs.map(_.attribute) ++ Seq(firstOrder, lastOrder, outLo, outHi) ++ previous.map(_._2))

  // It reads its left side in start order (sorting it, or Spark does). With a neighbour
  // before it (`lower`), every binding lies after a row of the partial match, so the output
  // starts where its left row does and keeps that order; a closure that opens the pattern
  // may start the match earlier.
  override def outputOrdering: Seq[SortOrder] =
    if (lower.isEmpty || !(leftSpan.keys :+ outLo).forall(outputSet.contains)) Nil
    else (leftSpan.keys :+ outLo).map(SortOrder(_, Ascending))

  override def simpleString(maxFields: Int): String =
    s"KleeneClosure $description within $window" +
      rowCondition.map(c => s", row condition: ${c.sql}").getOrElse("") + ownSortNote

  override protected def doExecute(): RDD[InternalRow] = {
    def leftOrdinal(a: Attribute) = left.output.indexWhere(_.exprId == a.exprId)
    def rightOrdinal(a: Attribute) = right.output.indexWhere(_.exprId == a.exprId)
    // The output row: the partial match, then the closure's outputs, bounds and span.
    val outSchema = left.output ++ outputs.map(_.attribute) ++ Seq(firstOrder, lastOrder, outLo, outHi)
    val project = (output: Seq[Attribute]).map(a => BindReferences.bindReference[Expression](a, outSchema))
    // The description reads `<partial match> + <closure>`; the keys, the partition key then the slice.
    val task = KleeneTask(sweepSpec, closure = description.substring(description.lastIndexOf(" + ") + 3), min, max,
      lower, upper, rowCondition, previous, outputs, partitionKeys = leftSpan.keys.init,
      leftHi = leftOrdinal(leftSpan.hi), rightOrder = rightOrdinal(rightOrder), rightHi = rightOrdinal(rightSpan.hi),
      projection = project, window, maxBindings)
    left.execute().zipPartitionsWithEvaluator(right.execute(), new KleeneEvaluatorFactory(task, metrics))
  }

  override protected def withNewChildrenInternal(l: SparkPlan, r: SparkPlan): KleeneExec =
    copy(left = l, right = r)
}
