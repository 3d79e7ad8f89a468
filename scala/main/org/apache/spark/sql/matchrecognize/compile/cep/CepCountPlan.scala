package org.apache.spark.sql.matchrecognize.compile.cep

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans._

/**
 * The count of a SKIP TILL ANY MATCH pattern's matches per partition key, computed without
 * building them ([[CepMatchCount]]), over the same shared input as the other plans, when
 * the pattern allows it: one sequence of single rows and `B+` closures, negations only
 * between two of them, and every DEFINE condition over its own row alone. A condition
 * comparing two rows would need the rows of a match together, which the counts do not keep.
 */
private[cep] final class CepCountPlan(pattern: CepVariables, leaves: CepLeafInput) {
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
      lazy val across = activeConditions(s).collectFirst {
        case c if c.reads.nonEmpty =>
          s"the DEFINE of `${c.owner}` compares its row with ${c.reads.toSeq.sorted.map(v => s"`$v`").mkString(", ")}"
        case c if c.readsPrevious => s"the DEFINE of `${c.owner}` reads the closure's previous row"
      }
      shape.orElse(across).orElse(subqueryInDefine.map(q => s"$q needs the matches"))
    }

  /**
   * The measure columns a count can be grouped by: those computed from the first row alone
   * (the pattern must start with a single-row variable), with their expressions over it.
   */
  lazy val firstRowMeasures: Map[Attribute, Expression] =
    alternatives.head.elements.headOption match {
      case Some(Single(v)) =>
        val columns = columnsOf(v)
        val defined = columns.collect { case a: Alias => a.exprId -> a.child }.toMap
        val available = AttributeSet(columns.map(_.toAttribute))
        node.measureOutput.zip(measures).collect {
          case (a, e) if e.references.subsetOf(available) && e.deterministic =>
            a -> e.transform { case r: Attribute if defined.contains(r.exprId) => defined(r.exprId) }
        }.toMap
      case _ => Map.empty
    }

  /**
   * The counts: one row per partition key and time slice with matches (keys, then
   * `matches`), or, given measure columns `byFirstRow` (of [[firstRowMeasures]]), one row
   * per first row with matches, those columns between.
   */
  def plan(matches: Attribute, byFirstRow: Seq[Attribute] = Nil): LogicalPlan = {
    val s = alternatives.head
    val (shared, flags, slice) = leaves.sharedLeafInput
    val (o, lo, hi) = rowPositions
    val positives = s.elements.filterNot(_.isInstanceOf[Negated])
    val vars = (positives.map(_.variable) ++ s.negations).distinct
    val index = vars.zipWithIndex.toMap
    // The negations between each positive element and the next.
    val negatedAfter = positives.map { e =>
      s.elements.drop(s.elements.indexOf(e) + 1).takeWhile(_.isInstanceOf[Negated]).map(d => index(d.variable))
    }
    val sequence = CountedSequence(positives.map(e => index(e.variable)).toIndexedSeq,
      positives.map(_.isInstanceOf[Kleene]).toIndexedSeq, negatedAfter.toIndexedSeq)
    CepMatchCount(shared, partitionBy :+ slice, partitionBy, vars.map(flags),
      EqualTo(OwningSlice(lo, leaves.sliceLength), slice), sequence, o, lo, hi, window, matches, s.sql,
      FirstRowColumns(byFirstRow.map(a => Alias(firstRowMeasures(a), a.name)(a.exprId))))
  }
}
