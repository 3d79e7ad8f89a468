package org.apache.spark.sql.matchrecognize.parser

import java.util.Locale

import scala.collection.mutable

import org.apache.spark.sql.matchrecognize.plans._

/**
 * Parses the text between the parentheses of `PATTERN ( ... )`:
 *
 * {{{
 *   pattern     := alternation | (nothing: `PATTERN ()`, the empty pattern)
 *   alternation := sequence ('|' sequence)*
 *   sequence    := term+
 *   term        := primary quantifier?
 *   primary     := variable | '(' ')' | '(' alternation ')' | '{-' alternation '-}' | '^' | '$'
 *                | PERMUTE '(' alternation (',' alternation)* ')' | '!' variable
 *   quantifier  := ('*' | '+' | '?' | '{' n? (',' m?)? '}') '?'?
 * }}}
 *
 * As in SQL:2016 and Trino, an alternative, an exclusion or a PERMUTE item is never empty:
 * `(A | ())` says "A or nothing", `(A |)` is a syntax error. Comments (`-- ...`, `/* ... */`,
 * hints `/*+ ... */` too) count as white space, as everywhere else in a statement.
 *
 * Variables are unquoted identifiers (upper-cased) or back-quoted / double-quoted ones
 * (case kept). Offsets are absolute offsets into `sql`, for positioned errors.
 */
final class PatternParser(sql: String, start: Int, end: Int) {
  private var pos = start
  private val quoted = mutable.LinkedHashSet.empty[String]
  private var depth = 0
  private val seen = mutable.HashSet.empty[String]

  /** The parsed pattern and the variables that were written quoted. */
  def parse(): (RowPattern, Set[String]) = {
    val p = alternation()
    skipSpace()
    if (pos < end) fail(pos, currentText, "unexpected text in PATTERN")
    (p, quoted.toSet)
  }

  /** Alternatives separated by '|', none of them empty; a lone empty one is the empty pattern. */
  private def alternation(): RowPattern = {
    val alts = mutable.ArrayBuffer(sequence())
    skipSpace()
    while (peek('|')) {
      pos += 1
      alts += sequence()
      skipSpace()
    }
    if (alts.size > 1) alts.collectFirst { case (at, None) => at }.foreach { at =>
      fail(at, nearAt(at), "each alternative of '|' needs a pattern; write () for the empty pattern")
    }
    val patterns = alts.map(_._2.getOrElse(EmptyPattern: RowPattern)).toIndexedSeq
    if (patterns.size == 1) patterns.head else Alternation(patterns)
  }

  /** The terms up to the next '|', ')', ',' or '-}', with the offset they start at. */
  private def sequence(): (Int, Option[RowPattern]) = {
    val items = mutable.ArrayBuffer.empty[RowPattern]
    skipSpace()
    val at = pos
    while (pos < end && !peek('|') && !peek(')') && !peek(',') && !sql.startsWith("-}", pos)) {
      items += term()
      skipSpace()
    }
    at -> (items.size match {
      case 0 => None
      case 1 => Some(items.head)
      case _ => Some(Concatenation(items.toIndexedSeq))
    })
  }

  private def term(): RowPattern = {
    val p = primary()
    skipSpace()
    quantifier() match {
      case Some(q) =>
        // A quantified anchor is a zero-width assertion repeated 0..n times (as in Trino):
        // the automaton's empty-iteration rule ends its loops.
        skipSpace()
        if (pos < end && "*+?{".contains(sql.charAt(pos)) && !sql.startsWith("{-", pos)) {
          fail(pos, sql.charAt(pos).toString,
            "a quantifier must follow a pattern variable or a parenthesized pattern")
        }
        q(p)
      case None => p
    }
  }

  private def primary(): RowPattern = {
    skipSpace()
    if (pos >= end) fail(pos, "", "a pattern variable or '(' was expected")
    val c = sql.charAt(pos)
    if (c == '(') {
      val open = pos
      pos += 1
      skipSpace()
      if (peek(')')) { pos += 1; return EmptyPattern }
      val inner = nested(open, "(")(alternation())
      skipSpace()
      if (!peek(')')) fail(open, "(", "missing ')' to close this group")
      pos += 1
      inner
    } else if (sql.startsWith("{-", pos)) {
      val open = pos
      pos += 2
      skipSpace()
      if (sql.startsWith("-}", pos)) fail(pos, "-}", "an exclusion needs a pattern between {- and -}")
      val inner = nested(open, "{-")(alternation())
      skipSpace()
      if (!sql.startsWith("-}", pos)) fail(open, "{-", "missing '-}' to close this exclusion")
      pos += 2
      Exclusion(inner)
    } else if (c == '^') {
      pos += 1; PartitionStartAnchor
    } else if (c == '$') {
      pos += 1; PartitionEndAnchor
    } else if (c == '!') {
      pos += 1
      skipSpace()
      Negation(variable())
    } else if (isIdentStart(c) || c == '`' || c == '"') {
      val wordStart = pos
      if (isIdentStart(c)) {
        val word = readWord()
        skipSpace()
        if (word.equalsIgnoreCase("PERMUTE") && peek('(')) {
          return nested(wordStart, word)(permute())
        }
        pos = wordStart
      }
      PatternVariable(variable())
    } else if ("*+?{".contains(c)) {
      fail(pos, c.toString, "a quantifier must follow a pattern variable or a parenthesized pattern")
    } else {
      fail(pos, c.toString, "a pattern variable or '(' was expected")
    }
  }

  private def permute(): RowPattern = {
    val open = pos
    pos += 1
    skipSpace()
    if (peek(')')) fail(pos, ")", "PERMUTE needs at least one pattern")
    if (peek(',')) fail(pos, ",", "a pattern variable or '(' was expected")
    val items = mutable.ArrayBuffer(alternation())
    skipSpace()
    while (peek(',')) {
      pos += 1
      skipSpace()
      if (peek(')')) fail(pos, ")", "a pattern was expected after ','")
      if (peek(',')) fail(pos, ",", "a pattern variable or '(' was expected")
      items += alternation()
      skipSpace()
    }
    if (!peek(')')) fail(open, "(", "missing ')' to close PERMUTE")
    pos += 1
    Permute(items.toIndexedSeq)
  }

  /** Reads a variable name and returns its canonical form. */
  private def variable(): String = {
    skipSpace()
    if (pos >= end) fail(pos, "", "a pattern variable was expected")
    val c = sql.charAt(pos)
    val nameStart = pos
    val name = if (c == '`' || c == '"') {
      val close = closingQuote(c)
      if (close < 0) fail(pos, c.toString, "unterminated quoted variable name")
      // A doubled quote inside stands for the quote itself, as in the rest of the statement.
      val name = sql.substring(pos + 1, close).replace(s"$c$c", c.toString)
      if (name.isEmpty) fail(pos, c.toString + c, "empty variable name")
      pos = close + 1
      quoted += name
      name
    } else if (isIdentStart(c)) {
      readWord().toUpperCase(Locale.ROOT)
    } else {
      fail(pos, c.toString, "a pattern variable was expected")
    }
    if (seen.add(name) && seen.size > ParserLimits.MaxPatternVariables) {
      fail(nameStart, sql.substring(nameStart, pos), ParserLimits.tooManyVariables)
    }
    name
  }

  /** The offset of the quote closing the name opened at `pos`, or -1. */
  private def closingQuote(quote: Char): Int = {
    var i = pos + 1
    while (i < end) {
      if (sql.charAt(i) != quote) i += 1
      else if (i + 1 < end && sql.charAt(i + 1) == quote) i += 2
      else return i
    }
    -1
  }

  /** Parses one nesting level (a group, exclusion or PERMUTE opened at `open`). */
  private def nested[T](open: Int, near: String)(parseInside: => T): T = {
    if (depth >= ParserLimits.MaxPatternNesting) fail(open, near, ParserLimits.nestingTooDeep)
    depth += 1
    try parseInside
    finally depth -= 1
  }

  private type Quantify = RowPattern => RowPattern

  private def quantifier(): Option[Quantify] = {
    if (pos >= end) return None
    val qStart = pos
    val (min, max) = sql.charAt(pos) match {
      case '*' => pos += 1; (0, None)
      case '+' => pos += 1; (1, None)
      case '?' => pos += 1; (0, Some(1))
      case '{' if !sql.startsWith("{-", pos) => braces()
      case _ => return None
    }
    val greedy = if (peek('?')) { pos += 1; false }
    else true
    max.foreach { m =>
      if (m < min) {
        fail(qStart, sql.substring(qStart, pos),
          s"invalid quantifier: lower bound $min is greater than upper bound $m")
      }
    }
    Some(p => Quantified(p, min, max, greedy))
  }

  /** `{n}`, `{n,}`, `{,m}`, `{n,m}`. */
  private def braces(): (Int, Option[Int]) = {
    val open = pos
    pos += 1
    skipSpace()
    val lower = number()
    skipSpace()
    val result = if (peek(',')) {
      pos += 1
      skipSpace()
      val upper = number()
      (lower.getOrElse(0), upper)
    } else {
      if (lower.isEmpty) fail(open, "{", "invalid quantifier: a number was expected")
      (lower.get, lower)
    }
    skipSpace()
    if (!peek('}')) fail(open, "{", "invalid quantifier: missing '}'")
    pos += 1
    result
  }

  private def number(): Option[Int] = {
    val s = pos
    while (pos < end && Character.isDigit(sql.charAt(pos))) pos += 1
    if (pos == s) None
    else {
      val digits = sql.substring(s, pos)
      if (digits.length > 9) fail(s, digits, "invalid quantifier: bound is too large")
      Some(digits.toInt)
    }
  }

  private def readWord(): String = {
    val s = pos
    while (pos < end && (Character.isLetterOrDigit(sql.charAt(pos)) || sql.charAt(pos) == '_')) {
      pos += 1
    }
    sql.substring(s, pos)
  }

  private def isIdentStart(c: Char): Boolean = Character.isLetter(c) || c == '_'

  private def peek(c: Char): Boolean = pos < end && sql.charAt(pos) == c

  private def currentText: String = if (pos < end) sql.charAt(pos).toString else ""

  /** The text to name in an error at `at`: '-}' whole, and the PATTERN's ')' at its end. */
  private def nearAt(at: Int): String =
    if (sql.startsWith("-}", at) && at < end) "-}"
    else if (at < sql.length) sql.charAt(at).toString
    else ""

  /** Skips white space and comments. */
  private def skipSpace(): Unit = {
    var before = -1
    while (pos != before) {
      before = pos
      while (pos < end && Character.isWhitespace(sql.charAt(pos))) pos += 1
      pos = SqlLexer.commentEnd(sql, pos, end)
    }
  }

  private def fail(offset: Int, near: String, hint: String): Nothing =
    throw ParseErrors.syntaxError(sql, offset, near, hint)
}
