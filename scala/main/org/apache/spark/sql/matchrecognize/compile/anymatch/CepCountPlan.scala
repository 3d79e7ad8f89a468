package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.LongType

/**
 * The count of a SKIP TILL ANY MATCH pattern's matches per partition key, computed without
 * building them ([[CepMatchCount]]), over the same shared input as the other plans, when
 * the pattern allows it: one sequence of single rows and `B+` closures, negations only
 * between two of them, and every DEFINE condition over its own row alone or comparing a
 * single row with the one just before it, or any row with the match's first row
 * ([[CepCountedConditions]]). Other conditions comparing
 * two rows would need the rows of a match together, which the counts do not keep.
 */
private[anymatch] final class CepCountPlan(pattern: CepVariables, leaves: CepLeafInput) {
  import pattern._

  /** Why the matches must be built to be counted; None when they can be counted directly. */
  lazy val refusal: Option[String] =
    if (alternatives.size != 1) Some("the pattern has alternatives (or PERMUTE)")
    else {
      val s = alternatives.head
      val last = s.elements.size - 1
      val shape = s.elements.zipWithIndex.collectFirst {
        case (k: Kleene, _) if k.min != 1 || k.max.isDefined =>
          s"the closure `${CepSequence(Seq(k)).sql}` is not of the form `${k.variable}+`"
        case (Negated(d), i) if i == 0 || i == last => s"the negation `!$d` ends the pattern"
      }
      lazy val across = pairs.left.toOption
      shape.orElse(across).orElse(subqueryInDefine.map(q => s"$q needs the matches"))
    }

  private lazy val conditions = new CepCountedConditions(pattern, alternatives.head)
  private lazy val pairs = conditions.pairs

  /**
   * The measure columns a count can be grouped by: those computed from the first row alone
   * (the pattern must start with a single-row variable), with their expressions over it.
   */
  lazy val firstRowMeasures: Map[Attribute, Expression] =
    alternatives.head.elements.headOption match {
      case Some(Single(v)) => measuresOfRow(v)
      case _ => Map.empty
    }

  /** The measure columns computed from the row of single-row variable `v` alone, over it. */
  private def measuresOfRow(v: String): Map[Attribute, Expression] = {
    val columns = columnsOf(v)
    val defined = columns.collect { case a: Alias => a.exprId -> a.child }.toMap
    val available = AttributeSet(columns.map(_.toAttribute))
    node.measureOutput.zip(measures).collect {
      case (a, e) if e.references.subsetOf(available) && e.deterministic =>
        a -> e.transform { case r: Attribute if defined.contains(r.exprId) => defined(r.exprId) }
    }.toMap
  }

  private lazy val positives = alternatives.head.elements.filterNot(_.isInstanceOf[Negated])

  /** Each later single-row element's position among the positive ones, and its measures. */
  private lazy val laterRowMeasures: Seq[(Int, String, Map[Attribute, Expression])] =
    positives.zipWithIndex.drop(1).collect { case (Single(v), j) => (j, v, measuresOfRow(v)) }

  /**
   * Each closure's position among the positive elements, and the measure columns computed
   * from its first chosen row alone (`FIRST(B.x)`, true) or from its last alone (`B.x`,
   * `LAST(B.x)`, false), over that row.
   */
  private lazy val closureMeasures: Seq[(Int, String, Boolean, Map[Attribute, Expression])] =
    positives.zipWithIndex.collect { case (k: Kleene, j) => (j, k.variable) }.flatMap { case (j, v) =>
      val outputs = rewriter.kleeneOutputs.get(v).toIndexedSeq.flatten.collect {
        case KleeneOutput.Value(t, cell, fromFirst, 0) => t.exprId -> (cell, fromFirst)
      }.toMap
      val defined = columnsOf(v).collect { case a: Alias => a.exprId -> a.child }.toMap
      Seq(true, false).map { first =>
        val ends = outputs.filter(_._2._2 == first)
        val over = node.measureOutput.zip(measures).collect {
          case (a, e)
              if e.references.nonEmpty && e.deterministic && e.references.forall(r => ends.contains(r.exprId)) =>
            a -> e.transform { case r: Attribute if ends.contains(r.exprId) => ends(r.exprId)._1 }
              .transform { case r: Attribute if defined.contains(r.exprId) => defined(r.exprId) }
        }.toMap
        (j, v, first, over)
      }
    }

  /**
   * `e` (over the measure columns) as a value the count can aggregate over the matches: when
   * it reads measures of one later single-row element only, or of one end (first or last
   * row) of one closure, deterministically, and has a type the counter keeps (see
   * [[CountedValue.supports]]); summed when `summed`.
   */
  def countedValue(e: Expression, summed: Boolean): Option[CountedValue] =
    if (!e.deterministic || e.references.isEmpty || !CountedValue.supports(e.dataType)) None
    else (laterRowMeasures.map { case (j, v, m) => (j, v, false, m) } ++ closureMeasures).collectFirst {
      case (j, v, first, measures) if e.references.forall(r => measures.keys.exists(_.exprId == r.exprId)) =>
        val defined = measures.map { case (a, d) => a.exprId -> d }
        val over = e.transform { case r: Attribute if defined.contains(r.exprId) => defined(r.exprId) }
        val name = s"#${v.toLowerCase}_value"
        CountedValue(j, v, over, summed, AttributeReference(s"${name}_sum", LongType)(),
          AttributeReference(s"${name}_present", LongType, nullable = false)(),
          AttributeReference(s"${name}_least", e.dataType)(),
          AttributeReference(s"${name}_greatest", e.dataType)(), first)
    }

  /**
   * The counts: one row per partition key and time slice with matches (keys, then
   * `matches`), or, given measure columns `byFirstRow` (of [[firstRowMeasures]]), one row
   * per first row with matches, those columns between; then the aggregates of `values` (of
   * [[countedValue]]) over those matches.
   */
  def plan(matches: Attribute, byFirstRow: Seq[Attribute] = Nil, values: Seq[CountedValue] = Nil): LogicalPlan = {
    val s = alternatives.head
    val related = pairs.getOrElse(Nil)
    val (shared, flags, slice) = leaves.sharedLeafInput
    val (o, lo, hi) = rowPositions
    val vars = (positives.map(_.variable) ++ s.negations).distinct
    val index = vars.zipWithIndex.toMap
    val toFirst = conditions.relations.map(r => r.copy(flag = index(r.variable)))
    // The negations between each positive element and the next.
    val negatedAfter = positives.map { e =>
      s.elements.drop(s.elements.indexOf(e) + 1).takeWhile(_.isInstanceOf[Negated]).map(d => index(d.variable))
    }
    val sequence = CountedSequence(positives.map(e => index(e.variable)).toIndexedSeq,
      positives.map(_.isInstanceOf[Kleene]).toIndexedSeq, negatedAfter.toIndexedSeq,
      values.map(_.element).toIndexedSeq, values.map(_.summed).toIndexedSeq,
      positives.indices.map(j => related.find(_.element == j).map(_.code).getOrElse(CountedSequence.Pair.NONE)),
      toFirst.map(_.flag).toSet, values.map(_.fromFirst).toIndexedSeq)
    CepMatchCount(shared, partitionBy :+ slice, partitionBy, vars.map(flags),
      EqualTo(OwningSlice(lo, leaves.sliceLength), slice), sequence, o, lo, hi, window, matches, s.sql,
      FirstRowColumns(byFirstRow.map(a => Alias(firstRowMeasures(a), a.name)(a.exprId))),
      CountedValues(values), CountedPairs(related), CountedRelations(toFirst))
  }
}
