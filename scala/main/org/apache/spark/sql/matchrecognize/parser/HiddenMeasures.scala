package org.apache.spark.sql.matchrecognize.parser

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute
import org.apache.spark.sql.catalyst.expressions.{Alias, Expression, NamedExpression, SubqueryExpression}
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Pattern references inside the subqueries of a measure (`(SELECT name FROM s WHERE
 * s.id = A.id)`) cannot be evaluated inside the subquery: each becomes a hidden measure of
 * the clause, and the subquery reads it by name as an outer reference. The analyzer then
 * computes such measures above the MATCH_RECOGNIZE node (see `MeasureSubqueries`).
 */
final class HiddenMeasures {
  private val hidden = ArrayBuffer.empty[Alias]

  def measures: Seq[NamedExpression] = hidden.toIndexedSeq

  def fromSubqueries(measure: NamedExpression): NamedExpression =
    measure.transformDown {
      case s: SubqueryExpression => s.withNewPlan(s.plan.transformUpWithSubqueries { case p =>
          p.transformExpressionsDown {
            case m if HiddenMeasures.isPatternExpression(m) => hide(m)
          }
        })
    }.asInstanceOf[NamedExpression]

  private def hide(e: Expression): Expression = {
    val name = s"${HiddenMeasures.Prefix}p${hidden.size}"
    hidden += Alias(e, name)()
    UnresolvedAttribute.quoted(name)
  }
}

object HiddenMeasures {

  /** Names of hidden measures start with this; they are never part of the output. */
  val Prefix = "__mr_hidden_"

  def isHidden(name: String): Boolean = name.startsWith(Prefix)

  def isPatternExpression(e: Expression): Boolean = e match {
    case _: VariableScope | _: NavigationCall | _: ClassifierCall | _: MatchNumberCall |
        _: SemanticsMarker => true
    case _ => false
  }
}
