package org.apache.spark.sql.matchrecognize.execution.cep

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
    val boundExprs = (lower.toSeq ++ upper.toSeq).map(BindReferences.bindReference(_, left.output))
    val hasLower = lower.isDefined
    val hasUpper = upper.isDefined
    val lLo = left.output.indexWhere(_.exprId == leftSpan.lo.exprId)
    val lHi = left.output.indexWhere(_.exprId == leftSpan.hi.exprId)
    val rOrder = right.output.indexWhere(_.exprId == rightOrder.exprId)
    val rLo = right.output.indexWhere(_.exprId == rightSpan.lo.exprId)
    val rHi = right.output.indexWhere(_.exprId == rightSpan.hi.exprId)
    val previousOrdinals = previous.map { case (cell, _) => right.output.indexWhere(_.exprId == cell.exprId) }
    val previousTypes = previous.map(_._1.dataType)
    val conditionSchema = left.output ++ right.output ++ previous.map(_._2)
    // The output row: the partial match, then one value per Kleene output, then bounds and span.
    val extraTypes = outputs.map(_.attribute.dataType) ++ Seq(firstOrder.dataType,
      lastOrder.dataType, outLo.dataType, outHi.dataType)
    val outSchema = left.output ++ outputs.map(_.attribute) ++ Seq(firstOrder, lastOrder, outLo, outHi)
    val project = (output: Seq[Attribute]).map(a => BindReferences.bindReference[Expression](a, outSchema))
    left.execute().zipPartitionsWithEvaluator(right.execute(),
      new KleeneEvaluatorFactory(boundExprs, hasLower, hasUpper, lLo, lHi, rOrder, rLo, rHi,
        previousOrdinals, previousTypes, conditionSchema, extraTypes, project, right.output, outputs, rowCondition,
        min, max, window, maxBindings, description, metrics, sweepSpec, sortInputs))
  }

  override protected def withNewChildrenInternal(l: SparkPlan, r: SparkPlan): KleeneExec =
    copy(left = l, right = r)
}
