package org.apache.spark.sql.matchrecognize.analysis

import java.util.Locale

import org.apache.spark.sql.catalyst.analysis.{Resolver, UnresolvedAttribute, UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions.{Expression, Generator, SubqueryExpression}
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.parser.HiddenMeasures
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.matchrecognize.plans.SelectionStrategy._

/**
 * Checks of a MATCH_RECOGNIZE clause that need no resolved expressions: variable and
 * SUBSET names, clause combinations, and the restrictions of the CEP strategies. They run
 * as soon as the input is resolved, so that a misspelt variable is reported as such rather
 * than as an unresolved column.
 */
object ClauseChecks {

  def check(node: UnresolvedMatchRecognize, resolver: Resolver): Unit = {
    val o = node.options
    checkVariables(o)
    checkSkipAndStrategy(o)
    checkPatternShape(o)
    checkReferences(node, resolver)
    checkGenerators(node)
  }

  private def checkVariables(o: MatchRecognizeOptions): Unit = {
    val primary = o.patternVariables.toSet
    o.definedVariables.groupBy(identity).collectFirst { case (v, vs) if vs.size > 1 => v }
      .foreach(v =>
        throw analysis("DUPLICATE_DEFINITION",
          s"pattern variable `$v` is defined more than once in DEFINE."))
    o.definedVariables.find(v => !primary.contains(v)).foreach { v =>
      throw analysis("UNKNOWN_PATTERN_VARIABLE",
        s"DEFINE names pattern variable `$v`, which does not occur in PATTERN.")
    }
    val seen = scala.collection.mutable.Set.empty[String]
    o.subsets.foreach { s =>
      if (primary.contains(s.name)) {
        throw analysis("INVALID_SUBSET",
          s"SUBSET `${s.name}` has the name of a pattern variable of PATTERN.")
      }
      if (!seen.add(s.name)) {
        throw analysis("INVALID_SUBSET", s"SUBSET `${s.name}` is defined more than once.")
      }
      s.members.find(m => !primary.contains(m)).foreach { m =>
        throw analysis("INVALID_SUBSET",
          s"SUBSET `${s.name}` includes `$m`, which is not a pattern variable of PATTERN.")
      }
    }
  }

  private def checkSkipAndStrategy(o: MatchRecognizeOptions): Unit = {
    val names = o.patternVariables.toSet ++ o.subsets.map(_.name)
    o.afterMatchSkip.foreach {
      case AfterMatchSkip.ToVariable(v, _) if !names.contains(v) =>
        throw MatchRecognizeErrors.unknownVariable(v, "AFTER MATCH SKIP TO")
      case _ =>
    }
    (o.strategy, o.afterMatchSkip) match {
      case (Some(s), Some(skip)) =>
        throw analysis("AFTER_MATCH_SKIP_WITH_STRATEGY",
          s"${skip.sql} cannot be combined with ${s.sql}: AFTER MATCH SKIP is written only " +
            "under the default strategy.")
      case _ =>
    }
    val hasExclusion = o.pattern.exists(_.isInstanceOf[Exclusion])
    if (hasExclusion && o.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched) {
      throw analysis("EXCLUSION_WITH_UNMATCHED_ROWS",
        "pattern exclusion {- ... -} cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS.")
    }
    if (o.strategy.contains(SkipTillNextMatch) &&
        o.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched) {
      throw analysis("STRATEGY_OUTPUT_MODE",
        "SKIP TILL NEXT MATCH cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS.")
    }
  }

  private def checkPatternShape(o: MatchRecognizeOptions): Unit = {
    val negations = o.pattern.exists(_.isInstanceOf[Negation])
    if (negations && !o.strategy.contains(SkipTillAnyMatch)) {
      throw analysis("NEGATION_OUTSIDE_ANY_MATCH",
        "negation !V is only allowed under SKIP TILL ANY MATCH.")
    }
    if (o.strategy.contains(SkipTillAnyMatch)) AnyMatchChecks.check(o)
  }

  /**
   * Qualified names whose qualifier is neither a pattern variable nor a qualifier of the
   * input: report the unknown pattern variable rather than an unresolved column.
   */
  private def checkReferences(node: UnresolvedMatchRecognize, resolver: Resolver): Unit = {
    val known = node.options.patternVariables.toSet ++ node.options.subsets.map(_.name)
    def where(isDefine: Boolean) = if (isDefine) "DEFINE" else "MEASURES"
    def visit(e: Expression, isDefine: Boolean): Unit = e.foreach {
      case a: UnresolvedAttribute
          if a.nameParts.size >= 2 &&
            node.child.resolve(a.nameParts, resolver).isEmpty =>
        throw MatchRecognizeErrors.unknownVariable(a.nameParts.head, where(isDefine))
      case UnresolvedStar(Some(parts)) =>
        throw MatchRecognizeErrors.unknownVariable(parts.mkString("."), where(isDefine))
      case ClassifierCall(Some(v)) if !known.contains(v) =>
        throw MatchRecognizeErrors.unknownVariable(v, "CLASSIFIER")
      case VariableScope(v, _) if !known.contains(v) =>
        throw MatchRecognizeErrors.unknownVariable(v, where(isDefine))
      case _ =>
    }
    node.measures.foreach(visit(_, isDefine = false))
    node.defines.foreach(visit(_, isDefine = true))
    // Subqueries in DEFINE run inside the matcher, which cannot give them the match.
    node.defines.foreach(_.foreach {
      case s: SubqueryExpression =>
        s.plan.foreach(_.expressions.foreach(_.foreach {
          case m if HiddenMeasures.isPatternExpression(m) =>
            throw MatchRecognizeErrors.unsupported(
              s"a subquery in DEFINE that refers to the match (${m.sql} in ${s.sql})")
          case _ =>
        }))
      case _ =>
    })
  }

  /**
   * A generator (explode, inline, stack, ...) makes rows, where MEASURES and DEFINE need one
   * value. Checked as soon as Spark has resolved the function, before the type of the
   * condition or Spark's own check names the plan node instead of the clause.
   */
  private def checkGenerators(node: UnresolvedMatchRecognize): Unit = {
    def visit(e: Expression, where: String): Unit = e.foreach {
      case g: Generator =>
        throw analysis("GENERATOR_IN_CLAUSE",
          s"generator ${g.prettyName} cannot be used in $where: ${g.sql} returns rows, not a value.")
      case _ =>
    }
    node.measures.foreach(visit(_, "MEASURES"))
    node.defines.foreach(visit(_, "DEFINE"))
  }

  def upper(s: String): String = s.toUpperCase(Locale.ROOT)
}
