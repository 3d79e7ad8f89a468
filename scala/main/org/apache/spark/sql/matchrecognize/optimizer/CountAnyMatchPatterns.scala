package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, AttributeSet, Coalesce, Literal, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Count, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.compile.cep.CepPlanBuilder
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, RowsPerMatch, SelectionStrategy}
import org.apache.spark.sql.types.LongType

/**
 * Counts the matches of a SKIP TILL ANY MATCH query without building them when only their
 * number per group is asked for: `count(*)` grouped by some of the partition keys (or by
 * none) directly over a MATCH_RECOGNIZE with ONE ROW PER MATCH. The aggregate then sums
 * the per-key counts of [[org.apache.spark.sql.matchrecognize.plans.CepMatchCount]]. When
 * the pattern does not allow it (see `CepPlanBuilder.countRefusal`) the matches are built
 * as usual and EXPLAIN says why. Runs before [[PlanAnyMatchPatterns]].
 */
case class CountAnyMatchPatterns(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!conf.getConf(MatchRecognizeConf.COUNT_WITHOUT_MATCHES)) plan
    else plan.transformDown { case a: Aggregate => rewrite(a).getOrElse(a) }

  private def rewrite(a: Aggregate): Option[LogicalPlan] = underProjects(a.child).flatMap { m =>
    val keys = AttributeSet(m.partitionBy)
    val grouped = a.groupingExpressions.forall {
      case k: Attribute => keys.contains(k)
      case _ => false
    }
    val counts = a.aggregateExpressions.collect { case c @ Alias(CountOfRows(), _) => c }
    val rest = a.aggregateExpressions.filterNot(counts.contains)
    val passThrough = rest.forall {
      case k: Attribute => a.groupingExpressions.exists(_.semanticEquals(k))
      case _ => false
    }
    if (!grouped || counts.isEmpty || !passThrough) None
    else {
      val builder = new CepPlanBuilder(m, PlanAnyMatchPatterns.settings(conf, Some(session)))
      builder.countRefusal match {
        case Some(reason) =>
          val built = builder.build(s" | count(*) over the matches: matches built, as $reason")
          Some(a.copy(child = a.child.transformDown { case `m` => built }))
        case None =>
          val matches = AttributeReference("matches", LongType, nullable = false)()
          val summed: Seq[NamedExpression] = a.aggregateExpressions.map {
            case c: Alias if counts.contains(c) =>
              Alias(Coalesce(Seq(Sum(matches).toAggregateExpression(), Literal(0L))), c.name)(c.exprId)
            case other => other
          }
          Some(a.copy(aggregateExpressions = summed, child = builder.countPlan(matches)))
      }
    }
  }

  /** The MATCH_RECOGNIZE under projections of columns, if it counts SKIP TILL ANY MATCH matches. */
  private def underProjects(plan: LogicalPlan): Option[MatchRecognize] = plan match {
    case Project(list, child) if list.forall(_.isInstanceOf[Attribute]) => underProjects(child)
    case m: MatchRecognize
        if m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) &&
          m.options.rowsPerMatch == RowsPerMatch.OneRow && !m.isStreaming => Some(m)
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
