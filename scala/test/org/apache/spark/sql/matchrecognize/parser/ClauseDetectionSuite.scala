package org.apache.spark.sql.matchrecognize.parser

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.expressions.Alias
import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Which text is a MATCH_RECOGNIZE clause, and the limits and errors of the clause parser,
 * without a Spark session.
 */
class ClauseDetectionSuite extends AnyFunSuite {

  private val parser = new MatchRecognizeParser(CatalystSqlParser)

  private def pattern(text: String): RowPattern = new PatternParser(text, 0, text.length).parse()._1

  private def patternError(text: String): ParseException =
    intercept[ParseException](new PatternParser(text, 0, text.length).parse())

  private def clauses(plan: LogicalPlan): Seq[UnresolvedMatchRecognize] =
    plan.collect { case u: UnresolvedMatchRecognize => u }

  test("match_recognize as an identifier is left to Spark's parser") {
    Seq(
      "SELECT match_recognize(41)",
      "SELECT id FROM t WHERE match_recognize(id) > 0",
      "WITH match_recognize (x, y) AS (SELECT 1, 2) SELECT * FROM match_recognize",
      "SELECT * FROM t AS match_recognize (i, k)",
      "SELECT i FROM (SELECT id FROM t) AS match_recognize (i)",
      "SELECT * FROM range(3) match_recognize (i)",
      "SELECT match_recognize(ALL rows) FROM t",
      "SELECT match_recognize(measures), match_recognize(partition) FROM t",
      "SELECT * FROM t AS match_recognize (measures, pattern, define)",
      "SELECT match_recognize(pattern(1))",
      "CREATE TABLE match_recognize (measures INT, pattern STRING) USING parquet").foreach { sql =>
      assert(parser.parsePlan(sql) == CatalystSqlParser.parsePlan(sql), sql)
    }
  }

  test("Spark's own errors stay Spark's") {
    Seq("SELECT match_recognize(", "SELECT * FROM t AS match_recognize (measures INT",
      "SELECT match_recognize('abc").foreach { sql =>
      val ours = intercept[ParseException](parser.parsePlan(sql))
      val spark = intercept[ParseException](CatalystSqlParser.parsePlan(sql))
      assert(ours.getMessage == spark.getMessage, sql)
    }
  }

  test("a clause is recognised by the clause that opens it") {
    Seq(
      "PARTITION BY k ORDER BY ts PATTERN (A)",
      "ORDER BY ts PATTERN (A)",
      "MEASURES count(*) AS n PATTERN (A)",
      "ONE ROW PER MATCH PATTERN (A)",
      "ALL ROWS PER MATCH PATTERN (A)",
      "AFTER MATCH SKIP PAST LAST ROW PATTERN (A)",
      "PATTERN (A)").foreach { body =>
      val plan = parser.parsePlan(s"SELECT * FROM t MATCH_RECOGNIZE ($body)")
      assert(clauses(plan).size == 1, body)
    }
    val noPattern = intercept[ParseException](
      parser.parsePlan("SELECT * FROM t MATCH_RECOGNIZE (DEFINE A AS x > 0)"))
    assert(noPattern.getMessage.contains("MATCH_RECOGNIZE requires a PATTERN clause"))
  }

  test("unterminated text in a clause is reported where it opens") {
    val sql = "SELECT * FROM t MATCH_RECOGNIZE (\n  PARTITION BY 'abc\n  ORDER BY ts PATTERN (A))"
    val e = intercept[ParseException](parser.parsePlan(sql))
    assert(e.getMessage.contains("unterminated string literal"))
    assert(e.line.contains(2) && e.startPosition.contains(15))
    val comment = intercept[ParseException](
      parser.parsePlan("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A /* B))"))
    assert(comment.getMessage.contains("unterminated comment"))
    assert(comment.startPosition.contains(56))
  }

  test("pattern nesting is limited before it can exhaust the stack") {
    val deepest = ParserLimits.MaxPatternNesting
    assert(pattern("(" * deepest + "A" + ")" * deepest) == PatternVariable("A"))
    for (depth <- Seq(deepest + 1, 2000, 100000)) {
      val e = patternError("(" * depth + "A" + ")" * depth)
      assert(e.getMessage.contains("pattern nesting depth limit"))
      assert(e.startPosition.contains(deepest), depth)
    }
    val alternations = (0 until 1000).map(i => s"(V$i | ").mkString + "A" + ")" * 1000
    assert(patternError(alternations).getMessage.contains("pattern nesting depth limit"))
    val permutes = "PERMUTE(" * 101 + "A" + ")" * 101
    assert(patternError(permutes).getMessage.contains("pattern nesting depth limit"))
  }

  test("the number of pattern variables is limited") {
    val most = ParserLimits.MaxPatternVariables
    assert(pattern((0 until most).map(i => s"V$i").mkString(" ")).asInstanceOf[Concatenation]
      .items.size == most)
    // Occurrences of the same variables do not count.
    assert(pattern(Seq.fill(5000)("A B").mkString(" | ")).isInstanceOf[Alternation])
    val text = (0 to most).map(i => s"V$i").mkString(" ")
    val e = patternError(text)
    assert(e.getMessage.contains("pattern variable limit"))
    assert(e.startPosition.contains(text.indexOf(s"V$most")))
  }

  test("a doubled back-quote stays inside one variable name") {
    assert(pattern("`a``b`+ C") == Concatenation(Seq(
        Quantified(PatternVariable("a`b"), 1, None, greedy = true), PatternVariable("C"))))
    val plan = parser.parsePlan("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts " +
      "MEASURES LAST(`a``b`.x) AS l PATTERN (`a``b`+) DEFINE `a``b` AS x > 0)")
    val u = clauses(plan).head
    assert(u.options.pattern.variables == Seq("a`b"))
    assert(u.options.definedVariables == Seq("a`b"))
    assert(u.measures.head.collectFirst { case VariableScope(v, _) => v }.contains("a`b"))
  }

  test("V.* only as the argument of count, and no window functions") {
    def error(measure: String): String = intercept[ParseException](parser.parsePlan(
        s"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES $measure AS m " +
          "PATTERN (A+) DEFINE A AS x > 0)")).getMessage
    assert(error("A.*").contains("A.* is allowed only as the argument of count: count(A.*)"))
    assert(error("sum(A.*)").contains("allowed only as the argument of count"))
    assert(error("count(DISTINCT A.*)").contains("allowed only as the argument of count"))
    assert(error("row_number() OVER (ORDER BY ts)")
        .contains("window functions (OVER) cannot be used in MEASURES or DEFINE"))
    assert(error("sum(x) OVER w").contains("window functions (OVER)"))
    val counted = clauses(parser.parsePlan("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts " +
        "MEASURES count(A.*) AS n PATTERN (A+) DEFINE A AS x > 0)")).head
    assert(counted.measures.head.collectFirst { case VariableScope(v, _) => v }.contains("A"))
  }

  test("comments anywhere in the clause are white space") {
    val plain = "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts DESC " +
      "MEASURES FIRST(A.ts) AS f, count(*) AS n ONE ROW PER MATCH AFTER MATCH SKIP TO LAST A " +
      "PATTERN (A B+) WITHIN 10 ROWS SUBSET U = (A, B) " +
      "DEFINE A AS price > 0, B AS price > PREV(price)) AS mr"
    val commented =
      """SELECT * FROM t MATCH_RECOGNIZE ( -- the clause
        |  PARTITION BY /* c */ k ORDER BY ts /* c */ DESC
        |  MEASURES /* c */ FIRST(A.ts) /* c */ AS f, -- c
        |    count(*) AS n
        |  ONE /* c */ ROW PER MATCH
        |  AFTER /* c */ MATCH SKIP TO /* c */ LAST A
        |  PATTERN /* c */ ( /* c */ A -- c
        |    B+ /*+ hint */ ) -- c
        |  WITHIN 10 /* c */ ROWS
        |  SUBSET /* c */ U = (A, /* c */ B)
        |  DEFINE /* c */ A AS price > 0 /* c */, B AS -- c
        |    price > PREV(price) /* (c) */
        |) AS mr""".stripMargin
    val (ours, expected) = (clauses(parser.parsePlan(commented)).head, clauses(parser.parsePlan(plain)).head)
    assert(ours.options == expected.options)
    assert(ours.partitionBy == expected.partitionBy && ours.orderBy == expected.orderBy)
    assert(ours.defines == expected.defines)
    // (Each parse gives a measure's alias a new expression id.)
    assert(ours.measures.map(m => (m.name, m.asInstanceOf[Alias].child)) ==
      expected.measures.map(m => (m.name, m.asInstanceOf[Alias].child)))
  }

  test("PATTERN without parentheses is named as such, where '(' is missing") {
    val sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN A B+ DEFINE A AS x > 0)"
    val e = intercept[ParseException](parser.parsePlan(sql))
    assert(e.getMessage.contains("Syntax error at or near 'A': PATTERN needs parentheses " +
        "around the row pattern: PATTERN ( ... )"), e.getMessage)
    assert(e.startPosition.contains(sql.indexOf("PATTERN A") + 8))
    Seq("PATTERN ^A", "PATTERN `A` B", "PATTERN \"A\" B", "PATTERN {- A -}", "PATTERN DEFINE").foreach {
      text =>
        val e = intercept[ParseException](parser.parsePlan(
            s"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts $text)"))
        assert(e.getMessage.contains("PATTERN needs parentheses"), text)
    }
    // A column called pattern is no PATTERN clause.
    Seq("MEASURES pattern AS p DEFINE A AS x > 0", "DEFINE A AS pattern AND x > 0",
      "DEFINE A AS t.pattern").foreach { text =>
      val e = intercept[ParseException](parser.parsePlan(
          s"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts $text)"))
      assert(e.getMessage.contains("MATCH_RECOGNIZE requires a PATTERN clause"), text)
    }
  }

  test("AFTER MATCH SKIP TO without its target") {
    val sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO PATTERN (A B))"
    val e = intercept[ParseException](parser.parsePlan(sql))
    assert(
      e.getMessage.contains("Syntax error at or near 'PATTERN': AFTER MATCH SKIP TO is " +
        "missing its target: NEXT ROW, FIRST <variable>, LAST <variable> or <variable>"), e.getMessage)
    assert(e.startPosition.contains(sql.indexOf("PATTERN")))
    val strategy = intercept[ParseException](parser.parsePlan(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts AFTER MATCH SKIP TO SKIP TILL ANY MATCH PATTERN (A))"))
    assert(strategy.getMessage.contains("at or near 'SKIP': AFTER MATCH SKIP TO is missing its target"),
      strategy.getMessage)
    // Variables named FIRST or PATTERN stay variables.
    def skip(body: String): AfterMatchSkip = clauses(parser.parsePlan(
        s"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts $body)")).head.options.afterMatchSkip.get
    assert(skip("AFTER MATCH SKIP TO FIRST PATTERN (FIRST B)") ==
      AfterMatchSkip.ToVariable("FIRST", first = false))
    assert(skip("AFTER MATCH SKIP TO PATTERN PATTERN (PATTERN B)") ==
      AfterMatchSkip.ToVariable("PATTERN", first = false))
    assert(skip("AFTER MATCH SKIP TO FIRST B PATTERN (A B)") ==
      AfterMatchSkip.ToVariable("B", first = true))
  }

  test("an unknown WITHIN unit is named, with the units allowed") {
    val sql = "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A B) WITHIN INTERVAL '1' FORTNIGHT)"
    val e = intercept[ParseException](parser.parsePlan(sql))
    assert(
      e.getMessage.contains("Syntax error at or near 'FORTNIGHT': unknown interval unit " +
        "FORTNIGHT: WITHIN INTERVAL takes WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or " +
        "MICROSECOND"), e.getMessage)
    assert(e.startPosition.contains(sql.indexOf("FORTNIGHT")))
    val to = intercept[ParseException](parser.parsePlan(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) WITHIN INTERVAL '1 2' DAY TO hours2)"))
    assert(to.getMessage.contains("unknown interval unit hours2"), to.getMessage)
    def within(text: String): Option[WithinClause] = clauses(parser.parsePlan(
        s"SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) WITHIN $text)")).head.options.within
    assert(within("INTERVAL '2' weeks").contains(WithinClause.Interval(14L * 86400000000L, "INTERVAL '2' weeks")))
    assert(within("INTERVAL /* c */ '2' -- c\n weeks").contains(
        WithinClause.Interval(14L * 86400000000L, "INTERVAL '2' weeks")))
    assert(within("INTERVAL '1 2' DAY TO HOUR").contains(
        WithinClause.Interval(26L * 3600000000L, "INTERVAL '1 2' DAY TO HOUR")))
    assert(within("INTERVAL 5 MILLISECONDS").contains(WithinClause.Interval(5000L, "INTERVAL 5 MILLISECONDS")))
    val year = intercept[ParseException](parser.parsePlan(
        "SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) WITHIN INTERVAL '1' YEAR)"))
    assert(year.getMessage.contains("WITHIN needs a non-negative day-time interval"), year.getMessage)
  }
}
