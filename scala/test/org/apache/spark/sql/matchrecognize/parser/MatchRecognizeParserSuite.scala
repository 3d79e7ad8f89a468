package org.apache.spark.sql.matchrecognize.parser

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.analysis.{UnresolvedAttribute, UnresolvedFunction, UnresolvedRelation}
import org.apache.spark.sql.catalyst.expressions.{Alias, Descending, Expression, Literal, NullsLast}
import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.apache.spark.sql.catalyst.plans.logical.{Join, LogicalPlan, SubqueryAlias}
import org.apache.spark.sql.matchrecognize.plans._

/** The parser extension on its own, without a Spark session. */
class MatchRecognizeParserSuite extends AnyFunSuite {

  private val parser = new MatchRecognizeParser(CatalystSqlParser)

  private val vShape =
    """SELECT * FROM ticker MATCH_RECOGNIZE (
      |  PARTITION BY symbol ORDER BY tstamp
      |  MEASURES STRT.tstamp AS start_tstamp, LAST(DOWN.tstamp) AS bottom_tstamp,
      |           FINAL count(*) AS n
      |  ONE ROW PER MATCH
      |  AFTER MATCH SKIP PAST LAST ROW
      |  PATTERN (STRT DOWN+ UP+)
      |  DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price)
      |) AS mr ORDER BY symbol, start_tstamp""".stripMargin

  private def clause(plan: LogicalPlan): UnresolvedMatchRecognize =
    plan.collectFirst { case u: UnresolvedMatchRecognize => u }.getOrElse(
      fail(s"no MATCH_RECOGNIZE in\n$plan"))

  test("the clause becomes an unresolved node over its input, under its alias") {
    val plan = parser.parsePlan(vShape)
    val alias = plan.collectFirst { case a @ SubqueryAlias(_, _: UnresolvedMatchRecognize) => a }
    assert(alias.map(_.alias).contains("mr"))
    val u = clause(plan)
    assert(u.child == UnresolvedRelation(Seq("ticker")))
    assert(u.partitionBy == Seq(UnresolvedAttribute("symbol")))
    assert(u.orderBy.map(_.child) == Seq(UnresolvedAttribute("tstamp")))
    assert(u.options.pattern.sql == "STRT DOWN+ UP+")
    assert(u.options.rowsPerMatch == RowsPerMatch.OneRow)
    assert(u.options.afterMatchSkip.contains(AfterMatchSkip.PastLastRow))
    assert(u.options.definedVariables == Seq("DOWN", "UP"))
  }

  test("pattern functions and variable references become markers") {
    val u = clause(parser.parsePlan(vShape))
    val Seq(start, bottom, n) = u.measures.map(_.asInstanceOf[Alias])
    assert(start.name == "start_tstamp" && start.child == VariableScope("STRT", UnresolvedAttribute("tstamp")))
    assert(bottom.child == NavigationCall(NavigationFunction.Last,
      VariableScope("DOWN", UnresolvedAttribute("tstamp")), Literal(0)))
    n.child match {
      case SemanticsMarker(f: UnresolvedFunction, true)
          if f.nameParts == Seq("count") && f.arguments == Seq(Literal(1)) && !f.isDistinct =>
      case other => fail(s"unexpected $other")
    }
    val prev = u.defines.head.collectFirst { case c: NavigationCall => c }.get
    assert(prev == NavigationCall(NavigationFunction.Prev,
      VariableScope("DOWN", UnresolvedAttribute("price")), Literal(1)))
  }

  test("CLASSIFIER, MATCH_NUMBER, count(A.*) and navigation offsets") {
    val plan = parser.parsePlan(
      """SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts
        |MEASURES CLASSIFIER() AS c, CLASSIFIER(b) AS cb, MATCH_NUMBER() AS m, count(A.*) AS na,
        |  PREV(LAST(A.x, 2), 3) AS p, FIRST(x) AS f
        |PATTERN (A B) DEFINE A AS x > 0) AS mr""".stripMargin)
    val ms = clause(plan).measures.map(_.asInstanceOf[Alias].child)
    assert(ms(0) == ClassifierCall(None))
    assert(ms(1) == ClassifierCall(Some("B")))
    assert(ms(2) == MatchNumberCall())
    assert(ms(3).collectFirst { case s: VariableScope => s }.contains(VariableScope("A", Literal(1))))
    assert(ms(4) == NavigationCall(NavigationFunction.Prev,
      NavigationCall(NavigationFunction.Last, VariableScope("A", UnresolvedAttribute("x")), Literal(2)),
      Literal(3)))
    assert(ms(5) == NavigationCall(NavigationFunction.First, UnresolvedAttribute("x"), Literal(0)))
  }

  test("ORDER BY direction and NULL ordering, SUBSET, WITHIN, strategies") {
    val u = clause(parser.parsePlan(
        """SELECT * FROM t MATCH_RECOGNIZE (ORDER BY a DESC NULLS LAST, b
        |ALL ROWS PER MATCH WITH UNMATCHED ROWS AFTER MATCH SKIP TO FIRST s
        |PATTERN (A B+) WITHIN INTERVAL '20' MINUTE SUBSET s = (a, b) DEFINE A AS true)""".stripMargin))
    assert(u.orderBy.head.direction == Descending && u.orderBy.head.nullOrdering == NullsLast)
    assert(u.options.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched)
    assert(u.options.afterMatchSkip.contains(AfterMatchSkip.ToVariable("S", first = true)))
    assert(u.options.subsets == Seq(SubsetDefinition("S", Seq("A", "B"))))
    assert(u.options.within.contains(WithinClause.Interval(20L * 60 * 1000000, "INTERVAL '20' MINUTE")))
    val rows = clause(parser.parsePlan(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x SKIP TILL NEXT MATCH PATTERN (A) WITHIN 5 ROWS)"))
    assert(rows.options.within.contains(WithinClause.Rows(5)))
    assert(rows.options.strategy.contains(SelectionStrategy.SkipTillNextMatch))
  }

  test("inputs: subquery, VALUES with column aliases, CTE, subquery expression, joins") {
    val values = clause(parser.parsePlan(
        "SELECT * FROM (VALUES (1, 2)) AS t(a, b) MATCH_RECOGNIZE (ORDER BY a PATTERN (X)) AS m"))
    assert(values.child.isInstanceOf[SubqueryAlias])
    val sub = clause(parser.parsePlan(
        "SELECT * FROM (SELECT * FROM t WHERE a > 1) s MATCH_RECOGNIZE (ORDER BY a PATTERN (X))"))
    assert(sub.child.asInstanceOf[SubqueryAlias].alias == "s")
    val cte = parser.parsePlan(
      "WITH c AS (SELECT * FROM t MATCH_RECOGNIZE (ORDER BY a PATTERN (X))) SELECT * FROM c")
    assert(cte.toString.contains("UnresolvedMatchRecognize"))
    val inSubquery = parser.parsePlan(
      "SELECT * FROM u WHERE u.k IN (SELECT k FROM t MATCH_RECOGNIZE (ORDER BY a MEASURES A.k AS k PATTERN (A)))")
    assert(inSubquery.toString.contains("UnresolvedMatchRecognize"))
    // In a join, the clause belongs to the relation right before it; ON follows the clause.
    val join = parser.parsePlan(
      "SELECT * FROM a JOIN b MATCH_RECOGNIZE (ORDER BY x MEASURES X.k AS k PATTERN (X)) AS m ON a.k = m.k")
    val j = join.collectFirst { case j: Join => j }.get
    assert(j.left == UnresolvedRelation(Seq("a")))
    assert(j.condition.isDefined)
    assert(clause(j.right).child == UnresolvedRelation(Seq("b")))
    val comma = parser.parsePlan("SELECT * FROM a, b MATCH_RECOGNIZE (ORDER BY x PATTERN (X))")
    assert(clause(comma).child == UnresolvedRelation(Seq("b")))
    val two = parser.parsePlan(
      "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY x PATTERN (X)) m1, u MATCH_RECOGNIZE (ORDER BY y PATTERN (Y)) m2")
    assert(two.collect { case u: UnresolvedMatchRecognize => u.child }.toSet ==
      Set(UnresolvedRelation(Seq("t")), UnresolvedRelation(Seq("u"))))
  }

  test("statements without the clause go to Spark's parser untouched") {
    val text = "SELECT a, 'MATCH_RECOGNIZE (' FROM t -- MATCH_RECOGNIZE (\n WHERE b > 1"
    assert(parser.parsePlan(text) == CatalystSqlParser.parsePlan(text))
    val sparkError = intercept[ParseException](CatalystSqlParser.parsePlan("SELEC 1"))
    val ours = intercept[ParseException](parser.parsePlan("SELEC 1"))
    assert(ours.getMessage == sparkError.getMessage)
  }

  private def parseError(text: String): ParseException = intercept[ParseException](parser.parsePlan(text))

  test("errors in the clause point into the user's text") {
    val e = parseError(
      """SELECT *
        |FROM t
        |MATCH_RECOGNIZE (
        |  ORDER BY ts
        |  MEASURES LAST(U.price)
        |  PATTERN (S D+ U)
        |) AS mr""".stripMargin)
    assert(e.getMessage.contains("each measure needs a name"))
    assert(e.line.contains(5))
    assert(e.getMessage.contains("== SQL ==") && e.getMessage.contains("MATCH_RECOGNIZE ("))
    val bad = parseError("SELECT * FROM t MATCH_RECOGNIZE (\n  ORDER BY ts\n  DEFINE A AS x >\n)")
    assert(bad.getMessage.contains(
        "Syntax error at or near ')': MATCH_RECOGNIZE requires a PATTERN clause."), bad.getMessage)
    assert(bad.line.contains(4) && bad.startPosition.contains(0), bad.getMessage)
    val expr = parseError("SELECT * FROM t MATCH_RECOGNIZE (\n ORDER BY ts PATTERN (A)\n DEFINE A AS x > > 1)")
    assert(expr.line.contains(3), expr.getMessage)
    assert(!expr.getMessage.contains("__mr"), "the placeholder must not leak into messages")
    val order = parseError(
      "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) ORDER BY ts)")
    assert(order.getMessage.contains("clauses must appear in the order"))
    val missing = parseError("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A)")
    assert(missing.getMessage.contains("missing ')' to close MATCH_RECOGNIZE"))
    val misplaced = parseError("SELECT * FROM MATCH_RECOGNIZE (ORDER BY ts PATTERN (A))")
    assert(misplaced.getMessage.contains("must follow a table"))
    val rest = parseError("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A)) AS m WHERE x >")
    assert(rest.getMessage.contains("Syntax error") && !rest.getMessage.contains("__mr"))
  }

  test("RUNNING/FINAL must precede a function call") {
    val e = parseError("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES FINAL x AS y PATTERN (A))")
    assert(e.getMessage.contains("Syntax error"))
  }

  test("navigation arity and IGNORE NULLS") {
    assert(parseError("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES PREV(x, 1, 2) AS y PATTERN (A))")
        .getMessage.contains("PREV takes an expression and an optional offset"))
    assert(parseError("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES FIRST(x IGNORE NULLS) AS y PATTERN (A))")
        .getMessage.contains("IGNORE NULLS"))
  }

  private def exprs(u: UnresolvedMatchRecognize): Seq[Expression] = u.measures ++ u.defines

  test("quoted and unquoted variable names in expressions") {
    val u = clause(parser.parsePlan(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES `Fall`.x AS a, fall.x AS b " +
          "PATTERN (`Fall` FALL) DEFINE `Fall` AS true)"))
    val scopes = exprs(u).flatMap(_.collect { case s: VariableScope => s.variable })
    assert(scopes == Seq("Fall", "FALL"))
    assert(u.options.definedVariables == Seq("Fall"))
  }
}
