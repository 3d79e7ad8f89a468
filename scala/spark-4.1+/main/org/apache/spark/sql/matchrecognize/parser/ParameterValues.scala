package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.analysis.{NamedParameter, PosParameter}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{HybridParameterContext, NamedParameterContext, ParameterContext, PositionalParameterContext}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans.UnresolvedMatchRecognize

/**
 * Parameter values of `spark.sql(query, args)` for a statement with MATCH_RECOGNIZE.
 * Positional markers (`?`) are numbered over the whole statement; those inside a clause
 * are bound here, the others go to Spark's parser with the rest of the statement.
 */
final class ParameterValues(sql: String, context: ParameterContext, clauses: Seq[FoundClause]) {

  /** Offsets of the positional markers of the statement, in order. */
  private val markers: IndexedSeq[Int] =
    scala.util.Try(SqlLexer.tokenize(sql)).getOrElse(IndexedSeq.empty)
      .filter(_.isSymbol("?")).map(_.start)

  private def inClause(offset: Int): Boolean =
    clauses.exists(c => offset >= c.keyword.start && offset < c.end)

  private val (named, positional): (Map[String, Expression], Seq[Expression]) = context match {
    case NamedParameterContext(params) => (params, Nil)
    case PositionalParameterContext(params) => (Map.empty, params)
    case HybridParameterContext(args, names) =>
      (names.zip(args).filter(_._1.nonEmpty).toMap, if (markers.nonEmpty) args else Nil)
  }

  private def outsideClauses[T](values: Seq[T]): Seq[T] =
    values.zipWithIndex.filter { case (_, i) => i >= markers.length || !inClause(markers(i)) }
      .map(_._1)

  /** The context Spark's parser gets for the statement outside the clauses. */
  def forRestOfStatement: ParameterContext = context match {
    case PositionalParameterContext(params) => PositionalParameterContext(outsideClauses(params))
    case HybridParameterContext(args, names) if markers.nonEmpty =>
      HybridParameterContext(outsideClauses(args), outsideClauses(names))
    case other => other
  }

  /** Replaces the markers inside the clauses with their values. */
  def bindInClauses(plan: LogicalPlan): LogicalPlan = plan.transformUpWithSubqueries {
    case u: UnresolvedMatchRecognize => u.transformExpressions {
        case p @ NamedParameter(name) => named.getOrElse(name, p)
        case p @ PosParameter(pos) => positional.lift(markers.indexOf(pos)).getOrElse(p)
      }
  }
}
