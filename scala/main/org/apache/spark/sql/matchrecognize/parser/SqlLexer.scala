package org.apache.spark.sql.matchrecognize.parser

import scala.collection.mutable.ArrayBuffer

/** Kinds of tokens the clause scanner distinguishes. */
sealed trait TokenKind
object TokenKind {
  case object Word extends TokenKind // unquoted identifier or keyword
  case object QuotedWord extends TokenKind // `back-quoted` identifier
  case object StringLit extends TokenKind
  case object Number extends TokenKind
  case object Symbol extends TokenKind // any other single character
}

/**
 * A token of SQL text. `start` and `end` (exclusive) are offsets into the text that was
 * scanned, so every error can point back into the user's statement.
 */
final case class Token(kind: TokenKind, text: String, start: Int, end: Int) {
  def isWord(w: String): Boolean = kind == TokenKind.Word && text.equalsIgnoreCase(w)
  def isSymbol(s: String): Boolean = kind == TokenKind.Symbol && text == s

  /** The identifier this token names: unquoted words as written, quoted ones unwrapped. */
  def identifier: Option[String] = kind match {
    case TokenKind.Word => Some(text)
    case TokenKind.QuotedWord => Some(text.substring(1, text.length - 1).replace("``", "`"))
    case _ => None
  }
}

/**
 * A small lexer that knows just enough of Spark SQL's lexical rules (strings, quoted
 * identifiers, nested comments) to find MATCH_RECOGNIZE clauses and split them into their
 * parts. Expressions themselves are parsed by Spark; this lexer only has to agree with
 * Spark on where strings and comments begin and end.
 */
object SqlLexer {

  final case class UnterminatedToken(what: String, start: Int) extends Exception(what)

  def tokenize(text: String, from: Int = 0, until: Int = -1): IndexedSeq[Token] = {
    val end = if (until < 0) text.length else until
    val out = ArrayBuffer.empty[Token]
    var i = from
    while (i < end) {
      val c = text.charAt(i)
      val afterComment = commentEnd(text, i, end)
      if (Character.isWhitespace(c)) {
        i += 1
      } else if (afterComment > i) {
        i = afterComment
      } else if ((c == 'r' || c == 'R') && i + 1 < end && isQuote(text.charAt(i + 1))) {
        val stop = scanString(text, i + 1, end, raw = true)
        out += Token(TokenKind.StringLit, text.substring(i, stop), i, stop)
        i = stop
      } else if (isQuote(c)) {
        val stop = scanString(text, i, end, raw = false)
        out += Token(TokenKind.StringLit, text.substring(i, stop), i, stop)
        i = stop
      } else if (c == '`') {
        val stop = scanQuotedIdentifier(text, i, end)
        out += Token(TokenKind.QuotedWord, text.substring(i, stop), i, stop)
        i = stop
      } else if (Character.isDigit(c)) {
        var j = i
        while (j < end && (Character.isLetterOrDigit(text.charAt(j)) || text.charAt(j) == '.' ||
              text.charAt(j) == '_')) j += 1
        out += Token(TokenKind.Number, text.substring(i, j), i, j)
        i = j
      } else if (Character.isLetter(c) || c == '_') {
        var j = i
        while (j < end && (Character.isLetterOrDigit(text.charAt(j)) || text.charAt(j) == '_')) {
          j += 1
        }
        out += Token(TokenKind.Word, text.substring(i, j), i, j)
        i = j
      } else {
        out += Token(TokenKind.Symbol, c.toString, i, i + 1)
        i += 1
      }
    }
    out.toIndexedSeq
  }

  private def isQuote(c: Char): Boolean = c == '\'' || c == '"'

  /**
   * The end of the comment starting at `i`: `--` up to the line break, or a (possibly
   * nested) bracketed comment, hints `/*+ ... */` included. `i` itself when no comment
   * starts there.
   */
  def commentEnd(text: String, i: Int, end: Int): Int =
    if (i + 1 >= end) i
    else if (text.charAt(i) == '-' && text.charAt(i + 1) == '-') {
      var j = i
      while (j < end && text.charAt(j) != '\n') j += 1
      j
    } else if (text.charAt(i) == '/' && text.charAt(i + 1) == '*') skipBlockComment(text, i, end)
    else i

  /** Spark allows nested bracketed comments. */
  private def skipBlockComment(text: String, start: Int, end: Int): Int = {
    var depth = 0
    var i = start
    while (i < end) {
      if (text.startsWith("/*", i)) { depth += 1; i += 2 }
      else if (text.startsWith("*/", i)) {
        depth -= 1; i += 2
        if (depth == 0) return i
      } else i += 1
    }
    throw UnterminatedToken("comment", start)
  }

  private def scanString(text: String, start: Int, end: Int, raw: Boolean): Int = {
    val quote = text.charAt(start)
    var i = start + 1
    while (i < end) {
      val c = text.charAt(i)
      if (c == '\\' && !raw) i += 2
      else if (c == quote) {
        if (i + 1 < end && text.charAt(i + 1) == quote) i += 2 else return i + 1
      } else i += 1
    }
    throw UnterminatedToken("string literal", start)
  }

  private def scanQuotedIdentifier(text: String, start: Int, end: Int): Int = {
    var i = start + 1
    while (i < end) {
      if (text.charAt(i) == '`') {
        if (i + 1 < end && text.charAt(i + 1) == '`') i += 2 else return i + 1
      } else i += 1
    }
    throw UnterminatedToken("quoted identifier", start)
  }
}
