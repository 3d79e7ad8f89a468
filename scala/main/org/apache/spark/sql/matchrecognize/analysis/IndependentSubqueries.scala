package org.apache.spark.sql.matchrecognize.analysis

import org.apache.spark.sql.catalyst.expressions.{Alias, CreateStruct, Exists, Expression, InSubquery, IsNotNull, ListQuery, Literal, ScalarSubquery, SubqueryExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.CollectList
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Limit, Project}
import org.apache.spark.sql.catalyst.trees.TreePattern.{EXISTS_SUBQUERY, IN_SUBQUERY}
import org.apache.spark.sql.matchrecognize.plans.SubqueryMembership

/**
 * IN and EXISTS subqueries that do not depend on the match, as scalar subqueries (which
 * Spark computes once, before the matcher runs). They are rewritten anywhere in DEFINE, and
 * in MEASURES inside the arguments of navigation and aggregate functions (a measure's other
 * subqueries are computed above the node, see [[MeasureSubqueries]]):
 *
 *  - `EXISTS (q)` is whether `q` has a first row;
 *  - `v IN (q)` tests `v` against the rows of `q`, collected into one array
 *    ([[SubqueryMembership]]).
 *
 * Spark plans IN and EXISTS as joins, which cannot see the rows of a match. Subqueries that
 * refer to the input are left alone here and refused by the analysis.
 */
private[analysis] object IndependentSubqueries {

  def independent(s: SubqueryExpression): Boolean = s.plan.resolved && !s.isCorrelated

  /** `e` with every independent IN and EXISTS predicate rewritten. */
  def rewriteAll(e: Expression): Expression = e.transformUpWithPruning(
    _.containsAnyPattern(IN_SUBQUERY, EXISTS_SUBQUERY)) {
    case in: InSubquery if independent(in.query) => this.in(in, in.values)
    case ex: Exists if independent(ex) => exists(ex)
  }

  /** `EXISTS (q)` as a scalar subquery. */
  def exists(e: Exists): Expression = {
    val first = Limit(Literal(1), Project(Seq(Alias(Literal(true), "found")()), e.plan))
    IsNotNull(ScalarSubquery(first))
  }

  /** `values IN (q)` with `values` already canonicalized. */
  def in(in: InSubquery, values: Seq[Expression]): Expression = {
    val q: ListQuery = in.query
    val rows = CollectList(CreateStruct(q.plan.output)).toAggregateExpression()
    val all = Aggregate(Nil, Seq(Alias(rows, "rows")()), q.plan)
    val text = in.values.map(_.sql).mkString(if (values.size > 1) "(" else "", ", ",
      if (values.size > 1) ")" else "") + " IN (subquery)"
    SubqueryMembership(values, ScalarSubquery(all), text)
  }
}
