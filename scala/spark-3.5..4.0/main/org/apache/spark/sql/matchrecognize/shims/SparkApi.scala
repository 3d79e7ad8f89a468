package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.catalyst.expressions.{Expression, TimeAdd}
import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.plans.logical.{SubqueryAlias, UnresolvedWith}
import org.apache.spark.sql.catalyst.trees.Origin

/** The Spark 3.5 and 4.0 forms of the internal API calls that differ between Spark lines. */
object SparkApi {

  /**
   * An analysis error with a condition of our own. Spark 3.5 and 4.0 look a condition's SQLSTATE
   * up in its own error registry, which does not know ours, so a subclass supplies it.
   */
  def analysisException(condition: String, sqlState: String, message: String): AnalysisException =
    new ConditionAnalysisException(condition, sqlState, message)

  /** A parse error of one of Spark's own conditions at `start`. */
  def parseException(command: Option[String], start: Origin, condition: String,
      parameters: Map[String, String]): ParseException =
    new ParseException(command, start, start, condition, parameters)

  /** `start` and `interval` of `start + interval` on a timestamp (Spark 3.5 and 4.0: `TimeAdd`). */
  def timestampPlusInterval(e: Expression): Option[(Expression, Expression)] = e match {
    case t: TimeAdd => Some((t.start, t.interval))
    case _ => None
  }

  /** The WITH clause with `f` applied to each common table expression's plan. */
  def mapCteRelations(w: UnresolvedWith)(f: SubqueryAlias => SubqueryAlias): UnresolvedWith =
    w.copy(cteRelations = w.cteRelations.map { case (name, alias) => (name, f(alias)) })
}

private final class ConditionAnalysisException(condition: String, sqlState: String,
    message: String) extends AnalysisException(
    message = s"[$condition] $message SQLSTATE: $sqlState",
    errorClass = Some(condition),
    messageParameters = Map("message" -> message)) {
  override def getSqlState: String = sqlState
}
