package org.apache.spark.sql.matchrecognize.parser

import java.util.Locale

/**
 * `PATTERN A B`: a row pattern written without its parentheses, found when a clause has no
 * `PATTERN (`, so that the error names the missing parentheses rather than the clause.
 */
private[parser] object BarePattern {

  /** Words that may follow a column named `pattern` inside an expression. */
  private val ExpressionWords = Set("AND", "OR", "IS", "NOT", "IN", "LIKE", "ILIKE", "RLIKE",
    "REGEXP", "BETWEEN", "AS", "DIV", "ASC", "DESC", "NULLS", "OVER", "ESCAPE", "SIMILAR",
    "COLLATE")

  /**
   * The index of the word PATTERN, outside parentheses, followed by what can start a row
   * pattern and cannot continue an expression (so that a column named `pattern` in MEASURES
   * or DEFINE is not taken for the clause).
   */
  def find(tokens: IndexedSeq[Token]): Option[Int] = {
    var depth = 0
    tokens.indices.find { k =>
      val found = depth == 0 && tokens(k).isWord("PATTERN") && k + 1 < tokens.length &&
        startsPattern(tokens(k + 1)) && !(k > 0 && tokens(k - 1).isSymbol("."))
      if (tokens(k).isSymbol("(")) depth += 1
      else if (tokens(k).isSymbol(")")) depth -= 1
      found
    }
  }

  private def startsPattern(t: Token): Boolean = t.kind match {
    case TokenKind.Word => !ExpressionWords.contains(t.text.toUpperCase(Locale.ROOT))
    case TokenKind.QuotedWord => true
    case TokenKind.StringLit => t.text.startsWith("\"") // a double-quoted variable
    case TokenKind.Symbol => t.text == "^" || t.text == "$" || t.text == "{"
    case _ => false
  }
}
