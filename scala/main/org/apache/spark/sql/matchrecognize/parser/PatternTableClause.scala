package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.matchrecognize.plans.UnresolvedPatternTable

/**
 * `MATCH_RECOGNIZE (... PATTERNS FROM rules [WITHIN ...])`: the patterns are rows of the
 * table `rules` (each a name, a PATTERN, its DEFINE and SUBSET), read when the query is
 * analysed and, over a stream, again at every micro-batch. `before` is the clause's text
 * before `PATTERNS` (PARTITION BY through SKIP TILL, shared by every pattern) and `after`
 * its text after the table's name (WITHIN).
 */
final case class ParsedPatternTable(before: String, table: Seq[String], after: String)
  extends ParsedBody {
  override def attachTo(input: LogicalPlan): LogicalPlan =
    UnresolvedPatternTable(before, table, after, input)
}

private[parser] object PatternTableClause {

  /** The body's `PATTERNS FROM table` form, if it has one; syntax errors name the text. */
  def find(delegate: ParserInterface, sql: String, tokens: IndexedSeq[Token],
      bodyEnd: Int): Option[ParsedPatternTable] = {
    val at = depthZero(tokens).find(k =>
      tokens(k).isWord("PATTERNS") && k + 1 < tokens.length && tokens(k + 1).isWord("FROM"))
    at.map { k =>
      depthZero(tokens).find(j => isTableClause(tokens, j)).foreach { j =>
        throw ParseErrors.at(sql, tokens(j),
          "with PATTERNS FROM, each pattern's PATTERN, SUBSET and DEFINE come from the " +
            "table's rows; the clause cannot name them too")
      }
      var end = k + 2
      def name(): String = {
        val t = if (end < tokens.length) tokens(end)
        else
          throw ParseErrors.syntaxError(sql, bodyEnd, ")", "a table name was expected after PATTERNS FROM")
        end += 1
        t.identifier.getOrElse(throw ParseErrors.at(sql, t, "a table name was expected after PATTERNS FROM"))
      }
      val parts = scala.collection.mutable.ArrayBuffer(name())
      while (end < tokens.length && tokens(end).isSymbol(".")) { end += 1; parts += name() }
      if (end < tokens.length && !tokens(end).isWord("WITHIN")) {
        throw ParseErrors.at(sql, tokens(end), "only WITHIN may follow PATTERNS FROM <table>")
      }
      val before = if (k == 0) "" else sql.substring(tokens.head.start, tokens(k).start)
      val after = if (end < tokens.length) sql.substring(tokens(end).start, bodyEnd) else ""
      checkShared(delegate, sql, tokens, k, end, bodyEnd)
      ParsedPatternTable(before, parts.toIndexedSeq, after)
    }
  }

  /**
   * Parses the shared clauses with a one-row pattern in place of `PATTERNS FROM table`, at
   * the same offsets, so that their syntax errors point into the statement as written.
   */
  private def checkShared(delegate: ParserInterface, sql: String, tokens: IndexedSeq[Token],
      from: Int, until: Int, bodyEnd: Int): Unit = {
    val start = tokens(from).start
    val stop = tokens(until - 1).end
    val stand = "PATTERN (r)".padTo(stop - start, ' ')
    val text = sql.substring(0, start) + stand + sql.substring(stop)
    val body = SqlLexer.tokenize(text, tokens.head.start, bodyEnd)
    new ClauseParser(delegate, text, body, bodyEnd).parse()
  }

  private def isTableClause(tokens: IndexedSeq[Token], k: Int): Boolean = {
    def w(off: Int, word: String) = k + off < tokens.length && tokens(k + off).isWord(word)
    def s(off: Int, sym: String) = k + off < tokens.length && tokens(k + off).isSymbol(sym)
    (w(0, "PATTERN") && s(1, "(")) || (w(0, "SUBSET") && s(2, "=")) || (w(0, "DEFINE") && w(2, "AS"))
  }

  private def depthZero(tokens: IndexedSeq[Token]): Seq[Int] = {
    var depth = 0
    tokens.indices.filter { k =>
      val top = depth == 0
      if (tokens(k).isSymbol("(")) depth += 1
      else if (tokens(k).isSymbol(")")) depth -= 1
      top
    }
  }
}
