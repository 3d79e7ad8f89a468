package org.apache.spark.sql.matchrecognize.analysis

import java.util.Locale

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedFunction}
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, Exists, Expression, InSubquery, ListQuery, NamedExpression, SubqueryExpression}
import org.apache.spark.sql.matchrecognize.parser.HiddenMeasures
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Subqueries in MEASURES that depend on the match (`(SELECT name FROM s WHERE s.id = A.id)`,
 * `A.sym IN (SELECT ...)`, `EXISTS (...)`) are evaluated above the MATCH_RECOGNIZE node,
 * where Spark plans correlated subqueries as usual. The match-dependent parts of such a
 * measure become hidden measures of the node:
 *
 *  - outside the subqueries, every pattern expression (`A.x`, navigation, CLASSIFIER,
 *    MATCH_NUMBER, aggregates, and bare columns, which read the current row);
 *  - inside them, every pattern reference (made a hidden measure by the parser, see
 *    `HiddenMeasures`);
 *
 * and the measure itself, rewritten over the hidden columns, is computed by a projection
 * over the node (which drops the hidden columns again). Bare columns inside a subquery that
 * refer to the input are available there too, as hidden columns named like the input
 * columns (the current row; for ONE ROW PER MATCH the last row of the match).
 */
private[analysis] final class MeasureSubqueries(session: SparkSession, u: UnresolvedMatchRecognize) {

  private val hidden = ArrayBuffer.empty[Alias]

  /** Measures that need lifting: they contain a subquery depending on the match. */
  def needed: Boolean = u.measures.exists(m => subqueries(m).exists(dependsOnMatch))

  private def subqueries(e: Expression): Seq[SubqueryExpression] =
    e.collect { case s: SubqueryExpression => s }

  // IN and EXISTS predicates are lifted even when uncorrelated: Spark plans them only in
  // projections, filters, joins and aggregates.
  private def dependsOnMatch(s: SubqueryExpression): Boolean = s match {
    case _: ListQuery | _: Exists => true
    case _ => !s.plan.resolved || s.isCorrelated
  }

  /**
   * The node with hidden measures in place of the lifted ones, and the lifted measures
   * (rewritten over hidden column names) keyed by their position among the measures.
   */
  def lift(): (UnresolvedMatchRecognize, Seq[(Int, Alias)]) = {
    val lifted = ArrayBuffer.empty[(Int, Alias)]
    val kept = ArrayBuffer.empty[NamedExpression]
    u.measures.zipWithIndex.foreach { case (m, i) =>
      val a = m.asInstanceOf[Alias]
      if (HiddenMeasures.isHidden(a.name)) kept += m
      else if (subqueries(a.child).exists(dependsOnMatch)) {
        lifted += ((i, a.withNewChildren(Seq(outer(a.child))).asInstanceOf[Alias]))
      } else kept += m
    }
    // Input columns a subquery may name as outer references (ONE ROW PER MATCH does not
    // output them otherwise): those a lifted subquery names.
    if (u.options.rowsPerMatch == RowsPerMatch.OneRow) {
      val taken = (u.measures.map(_.name) ++ u.partitionBy.collect { case a: Attribute => a.name })
        .map(_.toLowerCase(Locale.ROOT)).toSet
      val named = lifted.flatMap(l => subqueries(l._2)).flatMap(namesIn).toSet
      u.child.output.filter { c =>
        val name = c.name.toLowerCase(Locale.ROOT)
        !taken.contains(name) && named.contains(name)
      }.foreach { c =>
        hidden += Alias(UnresolvedAttribute.quoted(c.name), c.name)()
        inputColumns += 1
      }
    }
    (u.copy(measures = kept.toIndexedSeq ++ hidden.toIndexedSeq), lifted.toIndexedSeq)
  }

  private var inputColumns = 0

  /** The last parts of the column names a subquery's plan mentions, lower-cased. */
  private def namesIn(s: SubqueryExpression): Seq[String] =
    s.plan.collectWithSubqueries { case p => p.expressions }.flatten.flatMap(_.collect {
      case a: UnresolvedAttribute => a.nameParts.last.toLowerCase(Locale.ROOT)
    })

  /** Number of hidden measures named like input columns, appended last. */
  def inputColumnCount: Int = inputColumns

  private def hide(e: Expression): Expression = {
    val name = s"${HiddenMeasures.Prefix}${hidden.size}"
    hidden += Alias(e, name)()
    UnresolvedAttribute.quoted(name)
  }

  /** The part of a measure outside its subqueries (those were handled by the parser). */
  private def outer(e: Expression): Expression = e match {
    case s: InSubquery => InSubquery(s.values.map(outer), s.query)
    case s: SubqueryExpression => s
    case _: VariableScope | _: NavigationCall | _: ClassifierCall | _: MatchNumberCall |
        _: SemanticsMarker => hide(e)
    case f: UnresolvedFunction if isAggregate(f) => hide(e)
    case a: UnresolvedAttribute => hide(a)
    case a: Attribute if u.child.outputSet.contains(a) => hide(a)
    case other => other.mapChildren(outer)
  }

  private def isAggregate(f: UnresolvedFunction): Boolean = {
    val id = FunctionIdentifier(f.nameParts.last, f.nameParts.init.lastOption)
    scala.util.Try(session.sessionState.catalog.lookupFunctionInfo(id))
      .toOption.exists(info => Option(info.getGroup).exists(_.contains("agg_funcs")))
  }
}
