package org.apache.spark.sql.matchrecognize.parser

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.expressions.{Alias, Ascending, Descending, Expression, NamedExpression, NullsFirst, NullsLast, SortOrder}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans._

/** The body of a MATCH_RECOGNIZE clause as parsed, before it is attached to its input. */
trait ParsedBody {
  def attachTo(input: LogicalPlan): LogicalPlan
}

/** A MATCH_RECOGNIZE clause as parsed, before it is attached to its input relation. */
final case class ParsedClause(
    partitionBy: Seq[Expression],
    orderBy: Seq[SortOrder],
    measures: Seq[NamedExpression],
    defines: Seq[Expression],
    options: MatchRecognizeOptions) extends ParsedBody {
  override def attachTo(input: LogicalPlan): UnresolvedMatchRecognize =
    UnresolvedMatchRecognize(partitionBy, orderBy, measures, defines, options, input)
}

/**
 * Parses the body of `MATCH_RECOGNIZE ( body )`: the clauses in their standard order
 *
 * {{{
 *   [PARTITION BY e, ...] [ORDER BY e [ASC|DESC] [NULLS FIRST|LAST], ...]
 *   [MEASURES e AS name, ...]
 *   [ONE ROW PER MATCH | ALL ROWS PER MATCH [SHOW EMPTY MATCHES | OMIT EMPTY MATCHES
 *                                            | WITH UNMATCHED ROWS]]
 *   [AFTER MATCH SKIP ...] [SKIP TILL NEXT MATCH | SKIP TILL ANY MATCH]
 *   PATTERN ( ... ) [WITHIN INTERVAL '...' unit | WITHIN n ROWS]
 *   [SUBSET name = (v, ...), ...] [DEFINE v AS condition, ...]
 * }}}
 *
 * `tokens` are the body's tokens with offsets into `sql`; `bodyEnd` is the offset of the
 * closing parenthesis.
 */
final class ClauseParser(
    delegate: ParserInterface,
    sql: String,
    tokens: IndexedSeq[Token],
    bodyEnd: Int) {

  private var i = 0

  def parse(): ParsedClause = {
    // PATTERN and SUBSET are read first: expressions need the variable names.
    val (pattern, quoted) = findPattern()
    val subsetsAhead = scanSubsetNames()
    val names = new VariableNames(pattern.variables.toSet ++ subsetsAhead, tokens)
    val exprs = new PatternExpressionParser(delegate, sql, tokens, names)

    val partitionBy = if (atWords("PARTITION", "BY")) {
      i += 2
      items("PARTITION BY").map { case (s, e) => exprs.parse(s, e) }
    } else Nil
    val orderBy = if (atWords("ORDER", "BY")) {
      i += 2
      items("ORDER BY").map { case (s, e) => sortItem(exprs, s, e) }
    } else Nil
    val measures = if (atWord("MEASURES")) {
      i += 1
      val hidden = new HiddenMeasures
      val visible = items("MEASURES").map { case (s, e) => hidden.fromSubqueries(measure(exprs, s, e)) }
      visible ++ hidden.measures
    } else Nil
    val rowsPerMatch = parseRowsPerMatch()
    var afterMatchSkip: Option[AfterMatchSkip] = None
    var strategy: Option[SelectionStrategy] = None
    var more = true
    while (more) {
      if (afterMatchSkip.isEmpty && atWords("AFTER", "MATCH")) afterMatchSkip = Some(parseSkip())
      else if (strategy.isEmpty && atWords("SKIP", "TILL")) strategy = Some(parseStrategy())
      else more = false
    }
    expectWord("PATTERN", "PATTERN clause")
    i = patternClose + 1
    val within = if (atWord("WITHIN")) Some(parseWithin(exprs)) else None
    val subsets = if (atWord("SUBSET")) { i += 1; parseSubsets() }
    else Nil
    val (defineNames, defines) = if (atWord("DEFINE")) {
      i += 1
      val defineItems = items("DEFINE")
      // Each item names a distinct pattern variable; more items than variables can have
      // are refused before any of them is parsed.
      defineItems.lift(ParserLimits.MaxPatternVariables).foreach { case (s, e) =>
        throw ParseErrors.syntaxError(sql, s, sql.substring(s, e), ParserLimits.tooManyDefines)
      }
      defineItems.map { case (s, e) => define(exprs, names, s, e) }.unzip
    } else (Nil, Nil)
    if (i < tokens.length) {
      throw ParseErrors.at(sql, tokens(i),
        "unexpected text in MATCH_RECOGNIZE; clauses must " +
          "appear in the order PARTITION BY, ORDER BY, MEASURES, ROWS PER MATCH, AFTER MATCH " +
          "SKIP, PATTERN, WITHIN, SUBSET, DEFINE")
    }
    ParsedClause(partitionBy, orderBy, measures, defines,
      MatchRecognizeOptions(rowsPerMatch, afterMatchSkip, strategy, pattern, within, subsets,
        defineNames, quoted))
  }

  // ---- PATTERN ---------------------------------------------------------------------------

  private var patternOpen = -1
  private var patternClose = -1

  private def findPattern(): (RowPattern, Set[String]) = {
    val idx = indexAtDepthZero(k =>
      tokens(k).isWord("PATTERN") && k + 1 < tokens.length &&
        tokens(k + 1).isSymbol("("))
    if (idx < 0) {
      BarePattern.find(tokens).foreach { k =>
        throw ParseErrors.at(sql, tokens(k + 1),
          "PATTERN needs parentheses around the row pattern: PATTERN ( ... )")
      }
      throw ParseErrors.syntaxError(sql, bodyEnd, ")", "MATCH_RECOGNIZE requires a PATTERN clause")
    }
    patternOpen = idx + 1
    patternClose = matchingParen(patternOpen)
    new PatternParser(sql, tokens(patternOpen).end, tokens(patternClose).start).parse()
  }

  private def scanSubsetNames(): Set[String] = {
    val idx = indexAtDepthZero(k => k > patternClose && tokens(k).isWord("SUBSET"))
    if (idx < 0) Set.empty
    else {
      val names = new VariableNames(Set.empty, tokens)
      (idx + 1 until tokens.length).filter { k =>
        k + 1 < tokens.length && tokens(k + 1).isSymbol("=") && tokens(k).identifier.isDefined
      }.map(k => names.canonical(tokens(k).identifier.get, Some(tokens(k).start))).toSet
    }
  }

  // ---- clause lists ----------------------------------------------------------------------

  /**
   * The comma-separated items of a list clause, as (start, end) offsets. The list ends at
   * the next clause keyword outside parentheses.
   */
  private def items(clause: String): Seq[(Int, Int)] = {
    val out = ArrayBuffer.empty[(Int, Int)]
    var depth = 0
    var itemStart = i
    def close(at: Int): Unit = {
      if (at == itemStart) {
        val t = if (at < tokens.length) tokens(at) else null
        if (t == null) throw ParseErrors.syntaxError(sql, bodyEnd, ")", s"an item of $clause was expected")
        throw ParseErrors.at(sql, t, s"an item of $clause was expected")
      }
      out += ((tokens(itemStart).start, tokens(at - 1).end))
    }
    while (i < tokens.length && !(depth == 0 && clauseStartsAt(i))) {
      val t = tokens(i)
      if (t.isSymbol("(")) depth += 1
      else if (t.isSymbol(")")) depth -= 1
      else if (depth == 0 && t.isSymbol(",")) { close(i); itemStart = i + 1 }
      i += 1
    }
    close(i)
    out.toIndexedSeq
  }

  /** Does a clause keyword (not a column or alias of the same name) start at token k? */
  private def clauseStartsAt(k: Int): Boolean = {
    def w(off: Int, word: String) = k + off < tokens.length && tokens(k + off).isWord(word)
    def s(off: Int, sym: String) = k + off < tokens.length && tokens(k + off).isSymbol(sym)
    def ident(off: Int) = k + off < tokens.length && tokens(k + off).identifier.isDefined
    (w(0, "ORDER") && w(1, "BY")) || w(0, "MEASURES") && k + 1 < tokens.length ||
    (w(0, "ONE") && w(1, "ROW")) || (w(0, "ALL") && w(1, "ROWS")) ||
    (w(0, "AFTER") && w(1, "MATCH")) || (w(0, "SKIP") && w(1, "TILL")) ||
    (w(0, "PATTERN") && s(1, "(")) || (w(0, "SUBSET") && ident(1) && s(2, "=")) ||
    (w(0, "DEFINE") && ident(1) && w(2, "AS")) ||
    (w(0, "WITHIN") && (w(1, "INTERVAL") || (k + 1 < tokens.length &&
      tokens(k + 1).kind == TokenKind.Number)))
  }

  private def sortItem(exprs: PatternExpressionParser, start: Int, end: Int): SortOrder = {
    val ts = tokens.filter(t => t.start >= start && t.end <= end)
    var last = ts.length
    var nulls: Option[Boolean] = None // Some(true) = NULLS FIRST
    if (last >= 2 && ts(last - 2).isWord("NULLS") &&
        (ts(last - 1).isWord("FIRST") || ts(last - 1).isWord("LAST"))) {
      nulls = Some(ts(last - 1).isWord("FIRST"))
      last -= 2
    }
    var descending = false
    if (last >= 1 && (ts(last - 1).isWord("ASC") || ts(last - 1).isWord("DESC"))) {
      descending = ts(last - 1).isWord("DESC")
      last -= 1
    }
    if (last == 0) throw ParseErrors.at(sql, ts.head, "an ORDER BY expression was expected")
    val expr = exprs.parse(start, ts(last - 1).end)
    val direction = if (descending) Descending else Ascending
    val nullOrdering = nulls match {
      case Some(true) => NullsFirst
      case Some(false) => NullsLast
      case None => direction.defaultNullOrdering
    }
    SortOrder(expr, direction, nullOrdering, Seq.empty)
  }

  private def measure(exprs: PatternExpressionParser, start: Int, end: Int): NamedExpression =
    exprs.parse(start, end) match {
      case a: Alias => a
      case _ =>
        throw ParseErrors.syntaxError(sql, end, "",
          "each measure needs a name: <expression> AS <name>")
    }

  private def define(
      exprs: PatternExpressionParser, names: VariableNames, start: Int, end: Int): (String, Expression) = {
    val ts = tokens.filter(t => t.start >= start && t.end <= end)
    if (ts.length < 3 || ts.head.identifier.isEmpty || !ts(1).isWord("AS")) {
      throw ParseErrors.at(sql, ts.head, "DEFINE items are written <variable> AS <condition>")
    }
    val name = names.lookup(ts.head.identifier.get, Some(ts.head.start))
      .getOrElse(names.canonical(ts.head.identifier.get, Some(ts.head.start)))
    (name, exprs.parse(ts(2).start, end))
  }

  // ---- output mode, skipping, strategy, WITHIN, SUBSET ------------------------------------

  private def parseRowsPerMatch(): RowsPerMatch = {
    if (atWords("ONE", "ROW")) {
      expectWords("ONE", "ROW", "PER", "MATCH")
      RowsPerMatch.OneRow
    } else if (atWords("ALL", "ROWS")) {
      expectWords("ALL", "ROWS", "PER", "MATCH")
      if (atWords("SHOW", "EMPTY")) { expectWords("SHOW", "EMPTY", "MATCHES"); RowsPerMatch.AllRowsShowEmpty }
      else if (atWords("OMIT", "EMPTY")) { expectWords("OMIT", "EMPTY", "MATCHES"); RowsPerMatch.AllRowsOmitEmpty }
      else if (atWords("WITH", "UNMATCHED")) {
        expectWords("WITH", "UNMATCHED", "ROWS"); RowsPerMatch.AllRowsWithUnmatched
      } else RowsPerMatch.AllRowsShowEmpty
    } else RowsPerMatch.OneRow
  }

  private def parseSkip(): AfterMatchSkip = {
    expectWords("AFTER", "MATCH", "SKIP")
    if (atWords("PAST", "LAST")) { expectWords("PAST", "LAST", "ROW"); AfterMatchSkip.PastLastRow }
    else if (atWords("TO", "NEXT")) { expectWords("TO", "NEXT", "ROW"); AfterMatchSkip.ToNextRow }
    else {
      expectWord("TO", "AFTER MATCH SKIP TO ...")
      // A word that starts the next clause (`SKIP TO PATTERN (...)`) is no variable name.
      def variableAt(k: Int) = k < tokens.length && tokens(k).identifier.isDefined && !clauseStartsAt(k)
      val first = atWord("FIRST") && variableAt(i + 1)
      if (first || (atWord("LAST") && variableAt(i + 1))) i += 1
      val t = current("a pattern variable after AFTER MATCH SKIP TO")
      if (t.identifier.isDefined && clauseStartsAt(i)) {
        throw ParseErrors.at(sql, t,
          "AFTER MATCH SKIP TO is missing its target: NEXT ROW, FIRST <variable>, " +
            "LAST <variable> or <variable>")
      }
      val name = t.identifier.getOrElse(throw ParseErrors.at(sql, t, "a pattern variable was expected"))
      i += 1
      AfterMatchSkip.ToVariable(new VariableNames(Set.empty, tokens).canonical(name, Some(t.start)), first)
    }
  }

  private def parseStrategy(): SelectionStrategy = {
    expectWords("SKIP", "TILL")
    if (atWord("NEXT")) { expectWords("NEXT", "MATCH"); SelectionStrategy.SkipTillNextMatch }
    else if (atWord("ANY")) { expectWords("ANY", "MATCH"); SelectionStrategy.SkipTillAnyMatch }
    else throw ParseErrors.at(sql, current("NEXT or ANY"), "SKIP TILL NEXT MATCH or SKIP TILL ANY MATCH")
  }

  private def parseWithin(exprs: PatternExpressionParser): WithinClause = {
    val keyword = tokens(i)
    i += 1
    if (atWord("INTERVAL")) {
      val first = i
      i += 1
      while (i < tokens.length && !clauseStartsAt(i)) i += 1
      val interval = tokens.slice(first, i)
      WithinInterval.unknownUnit(interval).foreach { t =>
        throw ParseErrors.at(sql, t,
          s"unknown interval unit ${t.text}: WITHIN INTERVAL takes WEEK, DAY, HOUR, MINUTE, " +
            "SECOND, MILLISECOND or MICROSECOND")
      }
      val (start, end) = (interval.head.start, interval.last.end)
      val text = WithinInterval.text(sql, interval)
      val micros = WithinInterval.micros(exprs.parse(start, end))
      micros match {
        case Some(m) if m >= 0 => WithinClause.Interval(m, text)
        case _ => throw ParseErrors.syntaxError(sql, start, text,
            "WITHIN needs a non-negative day-time interval such as INTERVAL '20' MINUTE")
      }
    } else {
      val n = current("a row count after WITHIN")
      val count = scala.util.Try(n.text.toLong).toOption.filter(_ > 0).getOrElse(
        throw ParseErrors.at(sql, n, "WITHIN n ROWS needs a positive whole number"))
      i += 1
      if (!atWord("ROWS")) {
        throw ParseErrors.syntaxError(sql, keyword.start, keyword.text,
          "WITHIN is followed by INTERVAL '...' <unit> or by <n> ROWS")
      }
      i += 1
      WithinClause.Rows(count)
    }
  }

  private def parseSubsets(): Seq[SubsetDefinition] = {
    val names = new VariableNames(Set.empty, tokens)
    val out = ArrayBuffer.empty[SubsetDefinition]
    var more = true
    while (more) {
      val t = current("a SUBSET name")
      val name = t.identifier.getOrElse(throw ParseErrors.at(sql, t, "a SUBSET name was expected"))
      i += 1
      expectSymbol("=")
      expectSymbol("(")
      val members = ArrayBuffer.empty[String]
      var inList = true
      while (inList) {
        val m = current("a pattern variable")
        members += names.canonical(
          m.identifier.getOrElse(throw ParseErrors.at(sql, m, "a pattern variable was expected")),
          Some(m.start))
        i += 1
        if (i < tokens.length && tokens(i).isSymbol(",")) i += 1 else inList = false
      }
      expectSymbol(")")
      out += SubsetDefinition(names.canonical(name, Some(t.start)), members.toIndexedSeq)
      if (i < tokens.length && tokens(i).isSymbol(",")) i += 1 else more = false
    }
    out.toIndexedSeq
  }

  // ---- token helpers ---------------------------------------------------------------------

  private def current(expected: String): Token =
    if (i < tokens.length) tokens(i)
    else throw ParseErrors.syntaxError(sql, bodyEnd, ")", s"$expected was expected")

  private def atWord(w: String): Boolean = i < tokens.length && tokens(i).isWord(w)

  private def atWords(ws: String*): Boolean =
    ws.indices.forall(k => i + k < tokens.length && tokens(i + k).isWord(ws(k)))

  private def expectWord(w: String, context: String): Unit = {
    val t = current(w)
    if (!t.isWord(w)) throw ParseErrors.at(sql, t, s"$w was expected ($context)")
    i += 1
  }

  private def expectWords(ws: String*): Unit = ws.foreach(w => expectWord(w, ws.mkString(" ")))

  private def expectSymbol(s: String): Unit = {
    val t = current(s"'$s'")
    if (!t.isSymbol(s)) throw ParseErrors.at(sql, t, s"'$s' was expected")
    i += 1
  }

  private def indexAtDepthZero(p: Int => Boolean): Int = {
    var depth = 0
    var k = 0
    while (k < tokens.length) {
      if (depth == 0 && p(k)) return k
      if (tokens(k).isSymbol("(")) depth += 1
      else if (tokens(k).isSymbol(")")) depth -= 1
      k += 1
    }
    -1
  }

  private def matchingParen(open: Int): Int = {
    var depth = 0
    var k = open
    while (k < tokens.length) {
      if (tokens(k).isSymbol("(")) depth += 1
      else if (tokens(k).isSymbol(")")) {
        depth -= 1
        if (depth == 0) return k
      }
      k += 1
    }
    throw ParseErrors.at(sql, tokens(open), "missing ')' to close PATTERN")
  }
}
