package org.apache.spark.sql.matchrecognize.parser

import java.util.Locale

import scala.collection.mutable

import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedFunction, UnresolvedStar}
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal, SubqueryExpression, UnresolvedNamedLambdaVariable, UnresolvedWindowExpression, WindowExpression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, First, Last}
import org.apache.spark.sql.catalyst.parser.{ParseException, ParserInterface}
import org.apache.spark.sql.catalyst.trees.CurrentOrigin
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Turns the text of one DEFINE condition or MEASURES item into a Spark expression with
 * pattern markers inside.
 *
 * Spark's own parser does the work: it receives the whole statement with everything except
 * the item blanked out (line breaks kept), so its errors carry the line and column of the
 * user's text. Two things are handled before and after it:
 *  - `RUNNING` / `FINAL` are not Spark syntax: the keyword is blanked and the function call
 *    that follows it (found again by its position) is wrapped in a [[SemanticsMarker]];
 *  - navigation (`PREV`, `NEXT`, `FIRST`, `LAST`), `CLASSIFIER`, `MATCH_NUMBER` and
 *    variable-qualified names (`A.price`, `count(A.*)`) become markers. `FIRST(x)` and
 *    `LAST(x)` are navigation here, never Spark's first/last aggregates.
 */
final class PatternExpressionParser(
    delegate: ParserInterface,
    sql: String,
    bodyTokens: IndexedSeq[Token],
    variables: VariableNames) {

  def parse(start: Int, end: Int): Expression = {
    val chars = Array.tabulate(sql.length) { i =>
      val c = sql.charAt(i)
      if ((i >= start && i < end) || c == '\n' || c == '\r') c else ' '
    }
    val semantics = mutable.Map.empty[Int, Boolean] // function start offset -> isFinal
    val tokens = bodyTokens.filter(t => t.start >= start && t.end <= end)
    tokens.indices.foreach { i =>
      val t = tokens(i)
      if ((t.isWord("RUNNING") || t.isWord("FINAL")) && i + 2 < tokens.length &&
          tokens(i + 1).kind == TokenKind.Word && tokens(i + 2).isSymbol("(")) {
        semantics(tokens(i + 1).start) = t.isWord("FINAL")
        (t.start until t.end).foreach(chars(_) = ' ')
      }
    }
    val parsed =
      try delegate.parseExpression(new String(chars))
      catch {
        case e: ParseException => throw e.withCommand(sql)
      }
    val marked = mutable.Set.empty[Int]
    val result = rewrite(parsed, semantics, marked)
    semantics.keys.find(!marked.contains(_)).foreach { offset =>
      val word = tokens.find(_.start == offset).map(_.text).getOrElse("")
      throw ParseErrors.syntaxError(sql, offset, word,
        "RUNNING and FINAL must be followed by a navigation or aggregate function")
    }
    result
  }

  private def startOf(e: Expression): Option[Int] = e.origin.startIndex

  private def rewrite(
      e: Expression,
      semantics: mutable.Map[Int, Boolean],
      marked: mutable.Set[Int],
      inSubquery: Boolean = false): Expression = {
    def recurse(x: Expression): Expression = rewrite(x, semantics, marked, inSubquery)
    val converted: Expression = CurrentOrigin.withOrigin(e.origin) {
      e match {
        case a @ UnresolvedAttribute(parts)
            if parts.size >= 2 &&
              variables.lookup(parts.head, startOf(a)).isDefined =>
          VariableScope(variables.lookup(parts.head, startOf(a)).get, UnresolvedAttribute(parts.tail))

        // Spark parses every column inside a lambda body as a lambda variable (the analyzer
        // turns those that are no argument back into columns): `x -> x + A.price`.
        case a @ UnresolvedNamedLambdaVariable(parts)
            if parts.size >= 2 &&
              variables.lookup(parts.head, startOf(a)).isDefined =>
          VariableScope(variables.lookup(parts.head, startOf(a)).get, UnresolvedAttribute(parts.tail))

        case s @ UnresolvedStar(Some(Seq(q))) if variables.lookup(q, startOf(s)).isDefined =>
          if (!inSubquery) fail(s, s"$q.* is allowed only as the argument of count: count($q.*)")
          variableRows(s)

        case w @ (_: WindowExpression | _: UnresolvedWindowExpression) if !inSubquery =>
          fail(w, "window functions (OVER) cannot be used in MEASURES or DEFINE")

        case f: UnresolvedFunction
            if f.nameParts.size == 1 &&
              f.nameParts.head.equalsIgnoreCase("count") && !f.isDistinct &&
              f.arguments.size == 1 && isVariableStar(f.arguments.head) =>
          // count(A.*): the number of rows bound to A.
          val star = f.arguments.head
          f.mapChildren { c =>
            if (c eq star) CurrentOrigin.withOrigin(star.origin)(variableRows(star)) else recurse(c)
          }

        case f: UnresolvedFunction if f.nameParts.size == 1 =>
          val name = f.nameParts.head.toUpperCase(Locale.ROOT)
          NavigationFunction.fromName(name) match {
            // Inside a subquery, FIRST/LAST/PREV/NEXT of the subquery's own columns are
            // Spark's functions; they navigate the match only when they name a variable.
            case Some(nav) if !inSubquery || namesVariable(f) =>
              if (f.arguments.isEmpty || f.arguments.size > 2 || f.isDistinct) {
                fail(e, s"$name takes an expression and an optional offset")
              }
              val offset = f.arguments.lift(1).map(recurse)
                .getOrElse(Literal(if (nav.physical) 1 else 0))
              NavigationCall(nav, recurse(f.arguments.head), offset)
            case None if name == "CLASSIFIER" => classifier(f)
            case None if name == "MATCH_NUMBER" =>
              if (f.arguments.nonEmpty) fail(e, "MATCH_NUMBER takes no arguments")
              MatchNumberCall()
            // Spark's own FIRST/LAST inside a subquery, or any other function.
            case _ => f.mapChildren(recurse)
          }

        case AggregateExpression(agg @ (_: First | _: Last), _, _, _, _)
            if !inSubquery || namesVariable(agg) =>
          val (nav, child, ignoreNulls) = agg match {
            case First(c, ig) => (NavigationFunction.First, c, ig)
            case Last(c, ig) => (NavigationFunction.Last, c, ig)
          }
          if (ignoreNulls) {
            fail(e, s"${nav.name} in MATCH_RECOGNIZE is row navigation and takes no IGNORE NULLS")
          }
          NavigationCall(nav, recurse(child), Literal(0))

        case s: SubqueryExpression =>
          // Pattern references inside a subquery become markers too; the clause parser
          // turns them into hidden measures the subquery reads as outer references.
          s.withNewPlan(s.plan.transformUp { case p =>
            p.mapExpressions(x => rewrite(x, semantics, marked, inSubquery = true))
          })

        case other => other.mapChildren(recurse)
      }
    }
    startOf(e).flatMap(semantics.get).filter(_ => isFunctionCall(e)) match {
      case Some(isFinal) =>
        marked += startOf(e).get
        CurrentOrigin.withOrigin(e.origin)(SemanticsMarker(converted, isFinal))
      case None => converted
    }
  }

  private def isVariableStar(e: Expression): Boolean = e match {
    case s @ UnresolvedStar(Some(Seq(q))) => variables.lookup(q, startOf(s)).isDefined
    case _ => false
  }

  /** `v.*` as one value per row bound to `v`. */
  private def variableRows(star: Expression): Expression = star match {
    case s @ UnresolvedStar(Some(Seq(q))) => VariableScope(variables.lookup(q, startOf(s)).get, Literal(1))
  }

  /** Does `e` refer to a pattern variable (`v.col`, `v.*`)? */
  private def namesVariable(e: Expression): Boolean = e.exists {
    case a @ UnresolvedAttribute(parts) => parts.size >= 2 && variables.lookup(parts.head, startOf(a)).isDefined
    case a @ UnresolvedNamedLambdaVariable(parts) =>
      parts.size >= 2 && variables.lookup(parts.head, startOf(a)).isDefined
    case s @ UnresolvedStar(Some(Seq(q))) => variables.lookup(q, startOf(s)).isDefined
    case _ => false
  }

  private def isFunctionCall(e: Expression): Boolean = e match {
    case _: UnresolvedFunction | _: AggregateExpression => true
    case _ => false
  }

  private def classifier(f: UnresolvedFunction): Expression = f.arguments match {
    case Seq() => ClassifierCall(None)
    case Seq(a @ UnresolvedAttribute(Seq(name))) =>
      ClassifierCall(Some(variables.lookup(name, startOf(a)).getOrElse(variables.canonical(name,
              startOf(a)))))
    case _ => fail(f, "CLASSIFIER takes no argument or one pattern variable")
  }

  private def fail(e: Expression, hint: String): Nothing = {
    val offset = startOf(e).getOrElse(0)
    val near = e.origin.stopIndex.map(stop => sql.substring(offset, math.min(sql.length, stop + 1)))
      .getOrElse("")
    throw ParseErrors.syntaxError(sql, offset, near, hint)
  }
}

/**
 * The pattern variables and SUBSET names of one clause, and how a name written in an
 * expression maps onto them: back-quoted names must match exactly, unquoted names match
 * case-insensitively (they are upper-cased, as in PATTERN).
 */
final class VariableNames(names: Set[String], bodyTokens: IndexedSeq[Token]) {
  private val tokenAt: Map[Int, Token] = bodyTokens.map(t => t.start -> t).toMap

  def canonical(written: String, start: Option[Int]): String =
    if (start.flatMap(tokenAt.get).exists(_.kind == TokenKind.QuotedWord)) written
    else written.toUpperCase(Locale.ROOT)

  /** The variable a name refers to; an exact-case match is accepted as a fallback. */
  def lookup(written: String, start: Option[Int]): Option[String] =
    Some(canonical(written, start)).filter(names.contains)
      .orElse(Some(written).filter(names.contains))
}
