package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSet, Cast, Coalesce, Divide, EqualTo, Expression, If, IsNull, Literal, Multiply, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Average, Complete, Count, Max, Min, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.compile.cep.CepPlanBuilder
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, RowsPerMatch, SelectionStrategy}
import org.apache.spark.sql.types.{DoubleType, IntegralType, LongType}

/**
 * Aggregates the matches of a SKIP TILL ANY MATCH query without building them when the
 * aggregate over a MATCH_RECOGNIZE with ONE ROW PER MATCH (through projections and
 * filters) reads only partition keys and measures computed from a match's first row
 * (`A.ts`, so also `date_trunc('HOUR', first_ts)` or a time window of it): `count(*)`, and
 * count, sum, avg, min and max of such measures, grouped by them or not grouped. The
 * aggregate then reads the counts of
 * [[org.apache.spark.sql.matchrecognize.plans.CepMatchCount]], per key or per first row,
 * each row weighted by its matches.
 * When the pattern does not allow it (see `CepPlanBuilder.countRefusal`) the matches are
 * built as usual and EXPLAIN says why. Runs before [[PlanAnyMatchPatterns]].
 */
case class CountAnyMatchPatterns(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!conf.getConf(MatchRecognizeConf.COUNT_WITHOUT_MATCHES)) plan
    else plan.transformDown { case a: Aggregate => rewrite(a).getOrElse(a) }

  private def rewrite(a: Aggregate): Option[LogicalPlan] = between(a.child).flatMap { case (m, above) =>
    val aggregates = a.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae })
    if (aggregates.isEmpty || !aggregates.forall(Weighted.supports)) None
    else {
      val builder = new CepPlanBuilder(m, PlanAnyMatchPatterns.settings(conf, Some(session)))
      // What the groups, the aggregates and the plans in between read must be the partition
      // key or computed from a match's first row: each first row's matches then fall into
      // one group and share the aggregates' arguments.
      val firstRow = builder.firstRowMeasures
      val allowed = AttributeSet(m.partitionBy) ++ firstRow
      val read = AttributeSet((above.flatMap(_.expressions) ++ a.groupingExpressions ++
          a.aggregateExpressions).flatMap(_.references)).intersect(m.outputSet)
      val deterministic = (above.flatMap(_.expressions) ++ a.groupingExpressions).forall(_.deterministic)
      if (!read.subsetOf(allowed) || !deterministic) None
      else builder.countRefusal match {
        case Some(reason) =>
          val built = builder.build(s" | aggregates of the matches: matches built, as $reason")
          Some(a.copy(child = a.child.transformDown { case `m` => built }))
        case None =>
          val matches = AttributeReference("matches", LongType, nullable = false)()
          val byFirstRow = m.output.filter(x => read.contains(x) && firstRow.contains(x))
          val counted = above.foldRight(builder.countPlan(matches, byFirstRow)) {
            case (Project(list, _), child) => Project(list :+ matches, child)
            case (f: Filter, child) => f.copy(child = child)
            case (other, _) => throw new IllegalStateException(s"unexpected ${other.nodeName}")
          }
          // Up: the replacements hold aggregates of their own, which must not be replaced.
          val weighted = a.aggregateExpressions.map(_.transformUp {
            case ae: AggregateExpression => Weighted.of(ae, matches)
          }.asInstanceOf[NamedExpression])
          Some(a.copy(aggregateExpressions = weighted, child = counted))
      }
    }
  }

  /**
   * The MATCH_RECOGNIZE under projections and filters, if it yields SKIP TILL ANY MATCH
   * matches one row each, with the plans in between, top first.
   */
  private def between(plan: LogicalPlan): Option[(MatchRecognize, List[LogicalPlan])] = plan match {
    case p: Project => between(p.child).map { case (m, above) => (m, p :: above) }
    case f: Filter => between(f.child).map { case (m, above) => (m, f :: above) }
    case m: MatchRecognize
        if m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) &&
          m.options.rowsPerMatch == RowsPerMatch.OneRow && !m.isStreaming => Some((m, Nil))
    case _ => None
  }

  /**
   * The aggregates of the matches computed from rows that each stand for `matches` matches
   * sharing the argument's value (a first row's, or a key's): a count or sum weighs each
   * row by them, an average divides those two; min, max and DISTINCT aggregates see the
   * same values either way. Sums and averages of integers only, which the weights keep
   * exact (a floating-point sum would round differently).
   */
  private object Weighted {
    def supports(ae: AggregateExpression): Boolean = ae.mode == Complete && ae.filter.isEmpty && (
      ae.isDistinct && ae.aggregateFunction.children.forall(_.deterministic) ||
        (ae.aggregateFunction match {
          case Count(Seq(_)) | _: Min | _: Max => true
          case Count(children) => children.forall(c => c.foldable && !c.nullable)
          case s: Sum => s.child.dataType.isInstanceOf[IntegralType]
          case av: Average => av.child.dataType.isInstanceOf[IntegralType]
          case _ => false
        }))

    def of(ae: AggregateExpression, matches: Attribute): Expression = {
      def sum(e: Expression) = Sum(e).toAggregateExpression()
      def weightOf(e: Expression): Expression = If(IsNull(e), Literal(0L), matches)
      if (ae.isDistinct) ae
      else ae.aggregateFunction match {
        case Count(Seq(e)) if !(e.foldable && !e.nullable) => Coalesce(Seq(sum(weightOf(e)), Literal(0L)))
        case _: Count => Coalesce(Seq(sum(matches), Literal(0L)))
        case s: Sum => sum(Multiply(Cast(s.child, LongType), matches))
        case av: Average =>
          val n = sum(weightOf(av.child))
          If(EqualTo(Coalesce(Seq(n, Literal(0L))), Literal(0L)), Literal.create(null, DoubleType),
            Divide(Cast(sum(Multiply(Cast(av.child, LongType), matches)), DoubleType), Cast(n, DoubleType)))
        case _ => ae
      }
    }
  }
}
