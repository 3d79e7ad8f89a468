package org.apache.spark.sql.matchrecognize.analysis

import org.apache.spark.sql.catalyst.expressions.{ArrayDistinct, Attribute, AttributeSet, Cast, Exists, Expression, If, InSubquery, Literal, Size, SubqueryExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, AggregateFunction, Average, BoolAnd, BoolOr, CollectList, CollectSet, Count, CountIf, Max, Min, StddevPop, StddevSamp, Sum, VariancePop, VarianceSamp}
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.{IntegralType, LongType}

/**
 * Folds the parse-level markers of a resolved DEFINE or MEASURES expression into the
 * canonical pattern expressions, enforcing the standard's rules on the way:
 *
 *  - `A.x` becomes RUNNING `LAST(A.x)`; a bare column `x` reads the universal variable's
 *    last row (the current row in DEFINE and in ALL ROWS PER MATCH);
 *  - FIRST/LAST take an expression over one variable's columns and a constant offset;
 *    PREV/NEXT take such an expression or one FIRST/LAST call, plus a constant offset;
 *  - an aggregate's arguments read one variable (or SUBSET, or the whole match) and contain
 *    no navigation and no other aggregate;
 *  - RUNNING/FINAL apply to navigation and aggregates; FINAL is for MEASURES only.
 *
 * @param inDefine   true for DEFINE conditions
 * @param inputOutput the input relation's columns
 */
final class PatternExpressionCanonicalizer(
    options: MatchRecognizeOptions,
    inputOutput: Seq[Attribute],
    inDefine: Boolean) {

  private val input = AttributeSet(inputOutput)
  private val clause = if (inDefine) "DEFINE" else "MEASURES"

  /**
   * The canonical form of `e`. Expressions Spark rewrites only in its optimizer are
   * expanded first ([[ReplaceableExpressions]]), so that the matcher evaluates what it
   * was given and the checks below see every pattern reference.
   */
  def canonicalize(e: Expression): Expression = fold(ReplaceableExpressions.expand(e))

  private def fold(e: Expression): Expression = e match {
    case SemanticsMarker(child, isFinal) =>
      if (inDefine && isFinal) {
        throw analysis("FINAL_IN_DEFINE",
          s"FINAL semantics is not allowed in DEFINE (found in ${e.sql}); DEFINE conditions " +
            "are always evaluated with RUNNING semantics.")
      }
      fold(child) match {
        case n: PatternNavigation => n.copy(isFinal = isFinal)
        case a: PatternAggregate => a.copy(isFinal = isFinal)
        // count(DISTINCT x): the aggregate inside its rewriting (see distinctAggregate).
        case d if child.isInstanceOf[AggregateExpression] =>
          d.transformUp { case a: PatternAggregate => a.copy(isFinal = isFinal) }
        case _ => throw analysis("INVALID_SEMANTICS",
            s"RUNNING and FINAL apply to navigation and aggregate functions, not to ${child.sql}.")
      }

    case NavigationCall(function, child, offsetExpr) =>
      val offset = constantOffset(function, offsetExpr)
      if (!function.physical) {
        val (row, vars) = rowLevel(child, s"${function.name}(...)")
        PatternNavigation(row, vars, fromFirst = function == NavigationFunction.First, offset, 0,
          isFinal = false)
      } else {
        val step = if (function == NavigationFunction.Prev) -offset else offset
        stripSemantics(child) match {
          case (inner @ NavigationCall(f, _, _), semantics) if !f.physical =>
            val nav = fold(inner).asInstanceOf[PatternNavigation]
            nav.copy(physicalOffset = step, isFinal = semantics.getOrElse(false))
          case (inner: NavigationCall, _) =>
            throw analysis("INVALID_NAVIGATION",
              s"physical navigation ${function.name} cannot be nested in ${inner.function.name}; " +
                s"only FIRST or LAST may appear inside ${function.name}: ${e.sql}.")
          case _ =>
            val (row, vars) = rowLevel(child, s"${function.name}(...)")
            PatternNavigation(row, vars, fromFirst = false, 0, step, isFinal = false)
        }
      }

    case v: VariableScope =>
      val (row, vars) = rowLevel(v, v.sql)
      PatternNavigation(row, vars, fromFirst = false, 0, 0, isFinal = false)

    case ClassifierCall(variable) =>
      PatternNavigation(RowClassifier(), variableSet(variable.toIndexedSeq), fromFirst = false, 0, 0,
        isFinal = false)

    case MatchNumberCall() => MatchNumber()

    case a: Attribute if input.contains(a) =>
      PatternNavigation(a, VariableSet.Universal, fromFirst = false, 0, 0, isFinal = false)

    case ae: AggregateExpression =>
      val unfiltered = ae.filter.fold(ae)(filtered(ae, _))
      if (unfiltered.isDistinct) distinctAggregate(unfiltered)
      else aggregate(unfiltered.aggregateFunction, ae.sql)

    case f: AggregateFunction => aggregate(f, f.sql)

    case in: InSubquery if inDefine && IndependentSubqueries.independent(in.query) =>
      IndependentSubqueries.in(in, in.values.map(fold))

    case ex: Exists if inDefine && IndependentSubqueries.independent(ex) =>
      IndependentSubqueries.exists(ex)

    case s: SubqueryExpression => s

    case other => other.mapChildren(fold)
  }

  /**
   * `f(x) FILTER (WHERE c)` as `f(IF(c, x, NULL))`, for the aggregates that skip NULL
   * arguments (`count(*)` counting the rows where `c` holds).
   */
  private def filtered(ae: AggregateExpression, condition: Expression): AggregateExpression = {
    def keep(x: Expression): Expression = If(condition, x, Literal.create(null, x.dataType))
    val f = ae.aggregateFunction
    val skipsNulls = f match {
      case _: Count | _: Sum | _: Average | _: Min | _: Max | _: CollectList | _: CollectSet | _: CountIf |
          _: BoolAnd | _: BoolOr | _: StddevSamp | _: StddevPop | _: VarianceSamp | _: VariancePop => true
      case _ => false
    }
    if (!skipsNulls) {
      throw MatchRecognizeErrors.unsupported(
        s"FILTER in pattern aggregate ${ae.sql}, beyond count, sum, avg, min, max, collect_list, " +
          "collect_set, count_if, bool_and, bool_or, stddev and variance,")
    }
    ae.copy(aggregateFunction = f.withNewChildren(f.children.map(keep)).asInstanceOf[AggregateFunction],
      filter = None)
  }

  /**
   * An aggregate over the distinct values of its argument: `count(DISTINCT x)` as the size of
   * the distinct values of the non-NULL `x` collected (compared as GROUP BY compares them:
   * `-0.0` and `0.0`, or strings equal under their collation, are one value), and `min` and
   * `max`, which DISTINCT does not change.
   */
  private def distinctAggregate(ae: AggregateExpression): Expression = ae.aggregateFunction match {
    case Count(Seq(x)) =>
      val values = aggregate(CollectList(PartitionKeys.comparableValues(Seq(x)).head), ae.sql)
      Cast(Size(ArrayDistinct(values), legacySizeOfNull = false), LongType)
    case f @ (_: Min | _: Max) => aggregate(f, ae.sql)
    case _ =>
      throw MatchRecognizeErrors.unsupported(
        s"DISTINCT in pattern aggregate ${ae.sql}, beyond count(DISTINCT x), min and max,")
  }

  private def aggregate(f: AggregateFunction, text: String): PatternAggregate = {
    f.children.foreach(_.foreach {
      case _: AggregateExpression | _: AggregateFunction =>
        throw analysis("NESTED_AGGREGATE",
          s"aggregate functions cannot be nested in MATCH_RECOGNIZE: $text.")
      case n: NavigationCall =>
        throw analysis("NAVIGATION_IN_AGGREGATE",
          s"navigation ${n.function.name} cannot be used inside an aggregate function: $text.")
      case _ =>
    })
    val scopes = f.children.flatMap(variablesIn).distinct
    val vars = checkOneVariable(scopes, text)
    val args = f.children.map(c => stripScopes(IndependentSubqueries.rewriteAll(c)))
    PatternAggregate(f.withNewChildren(args).asInstanceOf[AggregateFunction], vars, isFinal = false)
  }

  /**
   * An expression evaluated on a single row: the pattern variable it reads (all variable
   * references must agree) and the expression with the variable qualifiers removed.
   */
  private def rowLevel(e: Expression, context: String): (Expression, VariableSet) = {
    e.foreach {
      case n: NavigationCall =>
        throw analysis("INVALID_NAVIGATION",
          s"navigation ${n.function.name} cannot be nested inside $context.")
      case _: AggregateExpression | _: AggregateFunction =>
        throw analysis("INVALID_NAVIGATION",
          s"aggregate functions cannot be used inside navigation $context.")
      case m: SemanticsMarker =>
        throw analysis("INVALID_SEMANTICS", s"${m.sql} cannot be nested inside $context.")
      case _ =>
    }
    val vars = checkOneVariable(variablesIn(e).distinct, context)
    (stripScopes(IndependentSubqueries.rewriteAll(e)), vars)
  }

  /** Variables referenced by `e`: `Some(v)` per qualified reference, `None` for bare columns. */
  private def variablesIn(e: Expression): Seq[Option[String]] = {
    val out = scala.collection.mutable.ArrayBuffer.empty[Option[String]]
    def visit(x: Expression): Unit = x match {
      case VariableScope(v, child) =>
        out += Some(v)
        child.foreach {
          case a: Attribute if input.contains(a) =>
          case _ =>
        }
      case ClassifierCall(Some(v)) => out += Some(v)
      case a: Attribute if input.contains(a) => out += None
      case _: SubqueryExpression =>
      case other => other.children.foreach(visit)
    }
    visit(e)
    out.toIndexedSeq
  }

  private def checkOneVariable(scopes: Seq[Option[String]], context: String): VariableSet = scopes.distinct match {
    case Seq() | Seq(None) => VariableSet.Universal
    case Seq(Some(v)) => variableSet(Seq(v))
    case many =>
      val names = many.map(_.map(v => s"`$v`").getOrElse("unqualified columns")).mkString(", ")
      throw analysis("MIXED_PATTERN_VARIABLES",
        s"$context in $clause reads more than one pattern variable ($names); the arguments of " +
          "a navigation or aggregate function must all refer to the same pattern variable.")
  }

  private def variableSet(names: Seq[String]): VariableSet = names match {
    case Seq() => VariableSet.Universal
    case Seq(v) => options.subsetMembers(v) match {
        case Some(members) => VariableSet(Some(members))
        case None => VariableSet(Some(Seq(v)))
      }
  }

  private def stripScopes(e: Expression): Expression = e.transform {
    case VariableScope(_, child) => child
    case ClassifierCall(_) => RowClassifier()
    case MatchNumberCall() => MatchNumber()
  }

  private def stripSemantics(e: Expression): (Expression, Option[Boolean]) = e match {
    case SemanticsMarker(child, isFinal) =>
      if (inDefine && isFinal) fold(e) // reports FINAL in DEFINE
      (child, Some(isFinal))
    case other => (other, None)
  }

  private def constantOffset(function: NavigationFunction, offset: Expression): Int = {
    val name = function.name
    if (!offset.foldable || !offset.dataType.isInstanceOf[IntegralType]) {
      throw analysis("INVALID_OFFSET",
        s"the offset of $name must be a constant non-negative integer, not ${offset.sql}.")
    }
    val value = offset.eval()
    if (value == null) {
      throw analysis("INVALID_OFFSET", s"the offset of $name must not be NULL.")
    }
    val n = value.asInstanceOf[Number].longValue()
    if (n < 0 || n > Int.MaxValue) {
      throw analysis("INVALID_OFFSET",
        s"the offset of $name must be a constant non-negative integer, not $n.")
    }
    n.toInt
  }
}
