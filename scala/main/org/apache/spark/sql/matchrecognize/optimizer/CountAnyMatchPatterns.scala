package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, AttributeSet, Coalesce, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Count, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.compile.cep.CepPlanBuilder
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, RowsPerMatch, SelectionStrategy}
import org.apache.spark.sql.types.LongType

/**
 * Counts the matches of a SKIP TILL ANY MATCH query without building them when only their
 * number per group is asked for: `count(*)` directly over a MATCH_RECOGNIZE with ONE ROW
 * PER MATCH (through projections and filters), grouped by partition keys and by measures
 * computed from a match's first row (`A.ts`, so also `date_trunc('HOUR', first_ts)` or a
 * time window of it), or not grouped. The aggregate then sums the counts of
 * [[org.apache.spark.sql.matchrecognize.plans.CepMatchCount]], per key or per first row.
 * When the pattern does not allow it (see `CepPlanBuilder.countRefusal`) the matches are
 * built as usual and EXPLAIN says why. Runs before [[PlanAnyMatchPatterns]].
 */
case class CountAnyMatchPatterns(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!conf.getConf(MatchRecognizeConf.COUNT_WITHOUT_MATCHES)) plan
    else plan.transformDown { case a: Aggregate => rewrite(a).getOrElse(a) }

  private def rewrite(a: Aggregate): Option[LogicalPlan] = between(a.child).flatMap { case (m, above) =>
    val counts = a.aggregateExpressions.collect { case c @ Alias(CountOfRows(), _) => c }
    val rest = a.aggregateExpressions.filterNot(counts.contains)
    if (counts.isEmpty || rest.exists(_.exists(_.isInstanceOf[AggregateExpression]))) None
    else {
      val builder = new CepPlanBuilder(m, PlanAnyMatchPatterns.settings(conf, Some(session)))
      // What the groups and the plans in between read must be the partition key or computed
      // from a match's first row: each first row's matches then fall into one group.
      val firstRow = builder.firstRowMeasures
      val allowed = AttributeSet(m.partitionBy) ++ firstRow
      val read = AttributeSet((above.flatMap(_.expressions) ++ a.groupingExpressions ++ rest)
          .flatMap(_.references)).intersect(m.outputSet)
      val deterministic = (above.flatMap(_.expressions) ++ a.groupingExpressions).forall(_.deterministic)
      if (!read.subsetOf(allowed) || !deterministic) None
      else builder.countRefusal match {
        case Some(reason) =>
          val built = builder.build(s" | count(*) over the matches: matches built, as $reason")
          Some(a.copy(child = a.child.transformDown { case `m` => built }))
        case None =>
          val matches = AttributeReference("matches", LongType, nullable = false)()
          val byFirstRow = m.output.filter(x => read.contains(x) && firstRow.contains(x))
          val counted = above.foldRight(builder.countPlan(matches, byFirstRow)) {
            case (Project(list, _), child) => Project(list :+ matches, child)
            case (f: Filter, child) => f.copy(child = child)
            case (other, _) => throw new IllegalStateException(s"unexpected ${other.nodeName}")
          }
          val summed: Seq[NamedExpression] = a.aggregateExpressions.map {
            case c: Alias if counts.contains(c) =>
              Alias(Coalesce(Seq(Sum(matches).toAggregateExpression(), Literal(0L))), c.name)(c.exprId)
            case other => other
          }
          Some(a.copy(aggregateExpressions = summed, child = counted))
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

  /** `count(*)`: a plain count of a literal that is never NULL. */
  private object CountOfRows {
    def unapply(e: AggregateExpression): Boolean = e match {
      case AggregateExpression(Count(children), _, false, None, _) =>
        children.forall(c => c.foldable && !c.nullable)
      case _ => false
    }
  }
}
