package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, AttributeSet, Cast, Coalesce, Divide, EqualTo, Expression, If, IsNull, Literal, Multiply, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Average, Complete, Count, Max, Min, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.{AGGREGATE, AGGREGATE_EXPRESSION}
import org.apache.spark.sql.matchrecognize.compile.anymatch.CepPlanBuilder
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{CountedValue, MatchRecognize, RowsPerMatch, SelectionStrategy}
import org.apache.spark.sql.types.{DoubleType, IntegralType, LongType}

/**
 * Aggregates the matches of a SKIP TILL ANY MATCH query without building them when the
 * aggregate over a MATCH_RECOGNIZE with ONE ROW PER MATCH (through projections and
 * filters) reads only partition keys and measures computed from a match's first row
 * (`A.ts`, so also `date_trunc('HOUR', first_ts)` or a time window of it): `count(*)`, and
 * count, sum, avg, min and max of such measures, grouped by them or not grouped; and
 * count, sum, avg, min and max of a measure of one later single-row variable (`C.price`)
 * or of a closure's last or first chosen row (`LAST(B.price)`, `FIRST(B.ts)`).
 * The aggregate then reads the counts of
 * [[org.apache.spark.sql.matchrecognize.plans.CepMatchCount]], per key or per first row,
 * each row weighted by its matches, and the later rows' values aggregated alongside.
 * When the pattern does not allow it (see `CepPlanBuilder.countRefusal`) the matches are
 * built as usual and EXPLAIN says why. Runs before [[PlanAnyMatchPatterns]].
 */
case class CountAnyMatchPatterns(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!conf.getConf(MatchRecognizeConf.COUNT_WITHOUT_MATCHES)) plan
    else plan.transformDownWithPruning(_.containsPattern(AGGREGATE)) { case a: Aggregate => rewrite(a).getOrElse(a) }

  private def rewrite(a: Aggregate): Option[LogicalPlan] = between(a.child).flatMap { case (m, above) =>
    val aggregates = a.aggregateExpressions.flatMap(_.collect { case ae: AggregateExpression => ae })
    if (aggregates.isEmpty || !aggregates.forall(Weighted.supports)) None
    else {
      val builder = new CepPlanBuilder(m, PlanAnyMatchPatterns.settings(conf, Some(session)))
      // The aggregates of a measure of one later row: that row's value rides along the counts.
      val laterRow = aggregates.filter(ae => !ae.isDistinct && Weighted.ofLaterRow(ae))
        .flatMap(ae => ae.aggregateFunction.children.map(c => ae -> down(above, 0, c)))
      val values = laterRow.groupBy(_._2.canonicalized).values.toIndexedSeq.flatMap { uses =>
        val summed = uses.exists(u => Weighted.summed(u._1))
        builder.countedValue(uses.head._2, summed).map(v => uses.map(_._1 -> v))
      }.flatten.toMap
      // What else the groups, the aggregates and the filters in between read must be the
      // partition key or computed from a match's first row: each first row's matches then
      // fall into one group and share the aggregates' arguments.
      val firstRow = builder.firstRowMeasures
      val allowed = AttributeSet(m.partitionBy) ++ firstRow
      val rest = a.groupingExpressions ++ a.aggregateExpressions.map(_.transformUpWithPruning(
          _.containsPattern(AGGREGATE_EXPRESSION)) {
          case ae: AggregateExpression if values.contains(ae) => Literal(0L)
        })
      val filters = above.zipWithIndex.collect { case (f: Filter, i) => down(above, i + 1, f.condition) }
      val read = AttributeSet((rest.map(down(above, 0, _)) ++ filters).flatMap(_.references))
        .intersect(m.outputSet)
      val deterministic = (above.flatMap(_.expressions) ++ a.groupingExpressions).forall(_.deterministic)
      if (!read.subsetOf(allowed) || !deterministic) None
      else builder.countRefusal match {
        case Some(reason) =>
          val built = builder.build(s" | aggregates of the matches: matches built, as $reason")
          Some(a.copy(child = a.child.transformDown { case `m` => built }))
        case None =>
          val matches = AttributeReference("matches", LongType, nullable = false)()
          val byFirstRow = m.output.filter(x => read.contains(x) && firstRow.contains(x))
          val counted = values.values.toIndexedSeq.distinct
          val carried = matches +: counted.flatMap(_.columns)
          val plan = above.foldRight(builder.countPlan(matches, byFirstRow, counted)) {
            // A column computed from a later row's measures was read only by its aggregates.
            case (Project(list, _), child) =>
              Project(list.filter(_.references.subsetOf(child.outputSet)) ++ carried, child)
            case (f: Filter, child) => f.copy(child = child)
            case (other, _) => throw new IllegalStateException(s"unexpected ${other.nodeName}")
          }
          // Up: the replacements hold aggregates of their own, which must not be replaced.
          val weighted = a.aggregateExpressions.map(_.transformUpWithPruning(_.containsPattern(AGGREGATE_EXPRESSION)) {
            case ae: AggregateExpression =>
              values.get(ae).map(Weighted.ofValue(ae, _)).getOrElse(Weighted.of(ae, matches))
          }.asInstanceOf[NamedExpression])
          Some(a.copy(aggregateExpressions = weighted, child = plan))
      }
    }
  }

  /**
   * `e`, read above the plans `above.drop(from)`, over the MATCH_RECOGNIZE's columns: the
   * columns the projections in between compute replaced by their expressions.
   */
  private def down(above: List[LogicalPlan], from: Int, e: Expression): Expression =
    above.drop(from).foldLeft(e) {
      case (x, Project(list, _)) =>
        val defined = list.collect { case al: Alias => al.exprId -> al.child }.toMap
        x.transform { case r: Attribute if defined.contains(r.exprId) => defined(r.exprId) }
      case (x, _) => x
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
   * exact (a floating-point sum would round differently). An aggregate of a later row's
   * value reads that value's aggregates over the same matches ([[CountedValue]]).
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

    /** Whether `ae` could read a later row's value: one argument, not a constant. */
    def ofLaterRow(ae: AggregateExpression): Boolean = ae.aggregateFunction match {
      case Count(Seq(c)) => !c.foldable
      case _: Min | _: Max | _: Sum | _: Average => true
      case _ => false
    }

    def summed(ae: AggregateExpression): Boolean = ae.aggregateFunction match {
      case _: Sum | _: Average => true
      case _ => false
    }

    private def sum(e: Expression) = Sum(e).toAggregateExpression()

    def of(ae: AggregateExpression, matches: Attribute): Expression = {
      def weightOf(e: Expression): Expression = If(IsNull(e), Literal(0L), matches)
      if (ae.isDistinct) ae
      else ae.aggregateFunction match {
        case Count(Seq(e)) if !(e.foldable && !e.nullable) => Coalesce(Seq(sum(weightOf(e)), Literal(0L)))
        case _: Count => Coalesce(Seq(sum(matches), Literal(0L)))
        case s: Sum => sum(Multiply(Cast(s.child, LongType), matches))
        case av: Average => average(sum(Multiply(Cast(av.child, LongType), matches)), sum(weightOf(av.child)))
        case _ => ae
      }
    }

    def ofValue(ae: AggregateExpression, v: CountedValue): Expression = ae.aggregateFunction match {
      case _: Count => Coalesce(Seq(sum(v.present), Literal(0L)))
      case _: Sum => sum(v.sum)
      case _: Average => average(sum(v.sum), sum(v.present))
      case _: Min => Min(v.least).toAggregateExpression()
      case _: Max => Max(v.greatest).toAggregateExpression()
      case other => throw new IllegalStateException(s"unexpected ${other.prettyName}")
    }

    /** A sum over a count, as a double; null when the count is 0 (no value to average). */
    private def average(total: Expression, n: Expression): Expression =
      If(EqualTo(Coalesce(Seq(n, Literal(0L))), Literal(0L)), Literal.create(null, DoubleType),
        Divide(Cast(total, DoubleType), Cast(n, DoubleType)))
  }
}
