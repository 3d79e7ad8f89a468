package org.apache.spark.sql.matchrecognize.execution.automaton

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, AttributeSet, Expression, If, IsNull, Literal, NamedExpression, SubqueryExpression, Unevaluable}
import org.apache.spark.sql.matchrecognize.plans.{MatchNumber, MatchRecognize, PatternAggregate, PatternNavigation}

/**
 * Measures that compute with MATCH_NUMBER() (`MATCH_NUMBER() * 100 + count(*)`), for split
 * matching. A range numbers its matches from 1, and only columns that are MATCH_NUMBER()
 * itself are numbered on once every range is matched ([[SplitReconciliation]]); so such a
 * measure is computed above the matcher instead, as Python UDFs over pattern expressions
 * are: the matcher writes MATCH_NUMBER() and each pattern expression the measure reads
 * (navigations, aggregates) as hidden columns, and a projection computes the measure from
 * them once they are numbered on. A MATCH_NUMBER() inside a navigation or an aggregate
 * (`FIRST(MATCH_NUMBER())`) cannot be lifted so; such queries are not split.
 */
object MatchNumberAbove {

  /** The node with hidden measures instead, and the projection that restores its columns. */
  final case class Lifted(node: MatchRecognize, projection: Seq[NamedExpression])

  def usesMatchNumber(e: Expression): Boolean = e.exists(_.isInstanceOf[MatchNumber])

  /** Whether a measure computes with MATCH_NUMBER() rather than being it. */
  def computesWith(e: Expression): Boolean =
    usesMatchNumber(e) && !SplitReconciliation.isMatchNumber(e)

  /**
   * `m` with its measures that compute with MATCH_NUMBER() lifted above it; None when it has
   * none or one cannot be lifted.
   */
  def lift(m: MatchRecognize): Option[Lifted] = {
    if (!m.measures.exists(computesWith)) return None
    val hidden = ArrayBuffer.empty[(Expression, AttributeReference)]
    def column(p: Expression): Attribute =
      hidden.find(_._1.semanticEquals(p)).map(_._2).getOrElse {
        val a = AttributeReference(s"#measure_part${hidden.size}", p.dataType, nullable = true)()
        hidden += (p -> a)
        a
      }
    val number = column(MatchNumber())
    val lifted = m.measures.zip(m.measureOutput).collect {
      case (e, out) if computesWith(e) =>
        val above = e.transformDown {
          case p if SplitReconciliation.isMatchNumber(p) => number
          case p @ (_: PatternNavigation | _: PatternAggregate) => column(p)
        }
        // Rows outside every match (WITH UNMATCHED ROWS) have NULL measures.
        out.exprId -> Alias(If(IsNull(number), Literal.create(null, e.dataType), above), out.name)(
          exprId = out.exprId, qualifier = out.qualifier)
    }.toMap
    val kept = m.measures.zip(m.measureOutput).filterNot { case (_, out) => lifted.contains(out.exprId) }
    val node = m.copy(measures = kept.map(_._1) ++ hidden.map(_._1),
      measureOutput = kept.map(_._2) ++ hidden.map(_._2))
    val readable = AttributeSet(node.output)
    // What the projection computes must be Spark's to evaluate, over the node's columns.
    def matcherOnly(p: Expression) = p match {
      case _: Attribute | _: SubqueryExpression => false
      case _ => p.isInstanceOf[Unevaluable]
    }
    val exact = lifted.values.forall { a =>
      !a.child.exists(matcherOnly) && a.child.references.subsetOf(readable)
    } && !hidden.exists { case (p, _) => p != MatchNumber() && usesMatchNumber(p) }
    if (!exact) None
    else Some(Lifted(node, m.output.map(a => lifted.getOrElse(a.exprId, a))))
  }
}
