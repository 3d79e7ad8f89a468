package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.expressions.{Expression, TimestampAddInterval}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{SubqueryAlias, UnresolvedWith}
import org.apache.spark.sql.catalyst.trees.Origin

/** The Spark 4.1-and-later forms of the internal API calls that differ between Spark lines. */
object SparkApi {

  /** An analysis error with a condition of our own and its SQLSTATE. */
  def analysisException(condition: String, sqlState: String, message: String): AnalysisException =
    new AnalysisException(
      errorClass = condition,
      sqlState = sqlState,
      messageTemplate = "<message>",
      messageParameters = Map("message" -> message),
      cause = None,
      message = Some(s"[$condition] $message SQLSTATE: $sqlState"))

  /** A parse error of one of Spark's own conditions at `start`. */
  def parseException(command: Option[String], start: Origin, condition: String,
      parameters: Map[String, String]): ParseException =
    new ParseException(command = command, start = start, errorClass = condition,
      messageParameters = parameters)

  /** `start` and `interval` of `start + interval` on a timestamp (`TimestampAddInterval` from Spark 4.1). */
  def timestampPlusInterval(e: Expression): Option[(Expression, Expression)] = e match {
    case t: TimestampAddInterval => Some((t.start, t.interval))
    case _ => None
  }

  /** The WITH clause with `f` applied to each common table expression's plan. */
  def mapCteRelations(w: UnresolvedWith)(f: SubqueryAlias => SubqueryAlias): UnresolvedWith =
    w.copy(cteRelations = w.cteRelations.map { case (name, alias, depth) =>
      (name, f(alias), depth)
    })
}
