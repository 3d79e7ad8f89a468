package org.apache.spark.sql.matchrecognize.parser

import java.util.Locale

import org.apache.spark.sql.catalyst.parser.ParserInterface

/** One MATCH_RECOGNIZE clause found in a statement. */
final case class FoundClause(
    index: Int,
    keyword: Token,
    /** Offset just past the closing parenthesis. */
    end: Int,
    /** Offset where the input relation right before the clause starts, when recognisable. */
    inputStart: Option[Int],
    parsed: ParsedBody) {
  def placeholderName: String = StatementRewriter.placeholderName(index)
}

/**
 * Finds the MATCH_RECOGNIZE clauses of a statement and replaces each one by a placeholder
 * join of the same length, keeping line breaks, so that Spark's parser can parse the rest
 * of the statement and its error positions still point into the user's text:
 *
 * {{{
 *   FROM ticker MATCH_RECOGNIZE ( ... ) AS mr    -- user's text
 *   FROM ticker JOIN `__mr0              ` AS mr  -- what Spark parses
 * }}}
 *
 * The placeholder's quoted name runs to the clause's closing parenthesis, so that a range
 * of the statement Spark keeps as text (the query of CREATE VIEW ends at its last token)
 * covers the whole clause. The placeholder relation is then swapped for the parsed clause
 * applied to its input.
 */
object StatementRewriter {

  private val Keyword = "MATCH_RECOGNIZE"

  def placeholderName(index: Int): String = s"__mr$index"

  /** The clause a placeholder relation's name stands for (the name is padded with blanks). */
  def placeholderOf(name: String): String = name.trim

  /** Cheap test first: most statements never mention the keyword. */
  def mentionsMatchRecognize(sql: String): Boolean =
    sql.toUpperCase(Locale.ROOT).contains(Keyword)

  /** `text` is what Spark's parser gets, `original` the user's statement. */
  final case class Rewritten(text: String, original: String, clauses: Seq[FoundClause])

  /**
   * Returns None when the statement has no MATCH_RECOGNIZE clause (outside strings and
   * comments), so that it goes to Spark untouched.
   */
  def rewrite(sql: String, delegate: ParserInterface): Option[Rewritten] = {
    val tokens =
      try SqlLexer.tokenize(sql)
      catch {
        case u: SqlLexer.UnterminatedToken => throwIfInClause(sql, u); return None
      }
    val starts = clauseStarts(tokens)
    if (starts.isEmpty) return None
    val chars = sql.toCharArray
    val clauses = starts.zipWithIndex.map { case (k, idx) =>
      val close = closingParen(sql, tokens, k + 1)
      val body = tokens.slice(k + 2, close)
      body.find(_.isWord(Keyword)).foreach { t =>
        throw ParseErrors.at(sql, t,
          "MATCH_RECOGNIZE cannot be nested in another " +
            "MATCH_RECOGNIZE clause")
      }
      val parsed = PatternTableClause.find(delegate, sql, body, tokens(close).start)
        .getOrElse(new ClauseParser(delegate, sql, body, tokens(close).start).parse())
      val found = FoundClause(idx, tokens(k), tokens(close).end, inputStart(tokens, k), parsed)
      blank(chars, found.keyword.start, found.end, s"JOIN `${found.placeholderName}")
      chars(found.end - 1) = '`'
      found
    }
    Some(Rewritten(new String(chars), sql, clauses))
  }

  /**
   * The indices of the MATCH_RECOGNIZE keywords that start a clause. `match_recognize` is
   * also an ordinary identifier (a function, a table or CTE name with a column list), so
   * the keyword counts only when the parenthesis opens with a clause of the clause grammar
   * (one that may come first, or one written out of order).
   */
  def clauseStarts(tokens: IndexedSeq[Token]): IndexedSeq[Int] = tokens.indices.filter { k =>
    tokens(k).isWord(Keyword) && k + 1 < tokens.length && tokens(k + 1).isSymbol("(") &&
    opensClause(tokens, k + 2)
  }

  private def opensClause(tokens: IndexedSeq[Token], k: Int, measures: Boolean = true): Boolean = {
    def w(off: Int, word: String) = k + off < tokens.length && tokens(k + off).isWord(word)
    def s(off: Int, sym: String) = k + off < tokens.length && tokens(k + off).isSymbol(sym)
    def ident(off: Int) = k + off < tokens.length && tokens(k + off).identifier.isDefined
    (w(0, "PARTITION") && w(1, "BY")) || (w(0, "ORDER") && w(1, "BY")) ||
    (measures && w(0, "MEASURES") && measuresFollow(tokens, k + 1)) ||
    (w(0, "ONE") && w(1, "ROW") && w(2, "PER")) || (w(0, "ALL") && w(1, "ROWS") && w(2, "PER")) ||
    (w(0, "AFTER") && w(1, "MATCH") && w(2, "SKIP")) || (w(0, "SKIP") && w(1, "TILL")) ||
    (w(0, "PATTERN") && s(1, "(")) || (w(0, "SUBSET") && ident(1) && s(2, "=")) ||
    (w(0, "DEFINE") && ident(1) && w(2, "AS")) || (w(0, "PATTERNS") && w(1, "FROM")) ||
    (w(0, "WITHIN") && (w(1, "INTERVAL") ||
      (k + 1 < tokens.length && tokens(k + 1).kind == TokenKind.Number)))
  }

  /**
   * After MEASURES: a measure named with `AS name`, or a later clause, before the
   * parenthesis closes. This tells a MEASURES clause from a column called `measures`
   * (`CREATE TABLE match_recognize (measures INT)`).
   */
  private def measuresFollow(tokens: IndexedSeq[Token], from: Int): Boolean = {
    if (from >= tokens.length || tokens(from).isSymbol(")") || tokens(from).isSymbol(",")) {
      return false
    }
    var depth = 0
    var j = from
    while (j < tokens.length && depth >= 0) {
      val t = tokens(j)
      if (t.isSymbol("(")) depth += 1
      else if (t.isSymbol(")")) depth -= 1
      else if (depth == 0 && t.isWord("AS") && j + 1 < tokens.length &&
          tokens(j + 1).identifier.isDefined && !tokens(j + 1).isWord("IDENTITY")) {
        return true // (`GENERATED ALWAYS AS IDENTITY` belongs to a column definition)
      } else if (depth == 0 && opensClause(tokens, j, measures = false)) return true
      j += 1
    }
    false
  }

  /**
   * A string, quoted identifier or comment that never ends: when it opens inside a clause,
   * the error is reported where it opens; elsewhere Spark reports it in its own words.
   */
  private def throwIfInClause(sql: String, u: SqlLexer.UnterminatedToken): Unit = {
    val before = SqlLexer.tokenize(sql, 0, u.start)
    def stillOpen(k: Int): Boolean = {
      var depth = 0
      var j = k + 1
      while (j < before.length) {
        if (before(j).isSymbol("(")) depth += 1
        else if (before(j).isSymbol(")")) { depth -= 1; if (depth == 0) return false }
        j += 1
      }
      true
    }
    val open = clauseStarts(before).exists(stillOpen)
    if (open) {
      val near = sql.substring(u.start, math.min(sql.length, u.start + 40)).takeWhile(_ != '\n')
      throw ParseErrors.syntaxError(sql, u.start, near, s"unterminated ${u.what}")
    }
  }

  private def closingParen(sql: String, tokens: IndexedSeq[Token], open: Int): Int = {
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
    throw ParseErrors.at(sql, tokens(open), "missing ')' to close MATCH_RECOGNIZE")
  }

  /** Overwrites [start, end) with `replacement` padded by spaces, keeping line breaks. */
  private def blank(chars: Array[Char], start: Int, end: Int, replacement: String): Unit = {
    var k = start
    while (k < end) {
      if (chars(k) != '\n' && chars(k) != '\r') chars(k) = ' '
      k += 1
    }
    // The keyword alone is 15 characters without a line break, so the replacement fits
    // (with the closing quote the caller writes over the closing parenthesis).
    replacement.indices.foreach(j => chars(start + j) = replacement.charAt(j))
  }

  private val notAnAlias = Set("FROM", "JOIN", "ON", "USING", "AS", "WHERE", "SELECT", "LATERAL",
    "CROSS", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "SEMI", "ANTI", "NATURAL", "VALUES")

  /**
   * Where the relation right before the keyword at `k` starts: a table name, a
   * parenthesized subquery or VALUES list, or a table function call, each with an optional
   * alias `[AS] t [(c, ...)]`. Used to attach the clause to that relation rather than to a
   * whole join written before it. None when the shape is not recognised.
   */
  private def inputStart(tokens: IndexedSeq[Token], k: Int): Option[Int] = {
    def isName(j: Int) = j >= 0 && tokens(j).identifier.isDefined &&
      !(tokens(j).kind == TokenKind.Word && notAnAlias.contains(tokens(j).text.toUpperCase(Locale.ROOT)))
    def openOf(close: Int): Int = {
      var depth = 0
      var j = close
      while (j >= 0) {
        if (tokens(j).isSymbol(")")) depth += 1
        else if (tokens(j).isSymbol("(")) { depth -= 1; if (depth == 0) return j }
        j -= 1
      }
      -1
    }
    var j = k - 1
    if (j < 0) return None
    // Optional alias with a column list: `t(a, b)` after a relation.
    if (tokens(j).isSymbol(")")) {
      val open = openOf(j)
      if (open <= 0) return None
      val beforeName = open - 2
      if (isName(open - 1) && beforeName >= 0 &&
          (tokens(beforeName).isWord("AS") || tokens(beforeName).isSymbol(")") || isName(beforeName))) {
        j = open - 1
      } else if (isName(open - 1)) {
        return Some(tokens(open - 1).start) // a table function call such as range(10)
      } else {
        return Some(tokens(open).start) // a parenthesized subquery or VALUES list
      }
    }
    // Optional alias `[AS] t`.
    if (isName(j) && j >= 1 && tokens(j - 1).isWord("AS")) j -= 2
    else if (isName(j) && j >= 1 && (isName(j - 1) || tokens(j - 1).isSymbol(")"))) j -= 1
    if (j < 0) None
    else if (tokens(j).isSymbol(")")) {
      val open = openOf(j)
      if (open < 0) None
      else if (isName(open - 1)) Some(tokens(open - 1).start)
      else Some(tokens(open).start)
    } else if (isName(j)) {
      while (j >= 2 && tokens(j - 1).isSymbol(".") && isName(j - 2)) j -= 2
      Some(tokens(j).start)
    } else None
  }
}
