package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.parser.ParseException
import org.apache.spark.sql.catalyst.trees.Origin
import org.apache.spark.sql.matchrecognize.shims.SparkApi

/**
 * Parse errors in the user's statement, with Spark's wording (`Syntax error at or near ...`)
 * and the line and column of the offending text, so that they read like Spark's own.
 */
object ParseErrors {

  /** 1-based line and 0-based column of `offset` in `text`, as Spark reports them. */
  def lineAndColumn(text: String, offset: Int): (Int, Int) = {
    val upTo = math.max(0, math.min(offset, text.length))
    var line = 1
    var lineStart = 0
    var i = 0
    while (i < upTo) {
      if (text.charAt(i) == '\n') { line += 1; lineStart = i + 1 }
      i += 1
    }
    (line, upTo - lineStart)
  }

  def offsetOf(text: String, line: Int, column: Int): Int = {
    var currentLine = 1
    var i = 0
    while (i < text.length && currentLine < line) {
      if (text.charAt(i) == '\n') currentLine += 1
      i += 1
    }
    i + column
  }

  /**
   * A syntax error at `offset`. `near` is the offending text (empty at the end of the
   * clause) and `hint` says what was expected or what is wrong.
   */
  def syntaxError(sql: String, offset: Int, near: String, hint: String): ParseException = {
    val (line, column) = lineAndColumn(sql, offset)
    val shown = if (near.isEmpty) "end of input" else s"'${near.take(40)}'"
    SparkApi.parseException(
      command = Some(sql),
      start = Origin(line = Some(line), startPosition = Some(column)),
      condition = "PARSE_SYNTAX_ERROR",
      parameters = Map("error" -> shown, "hint" -> (if (hint.isEmpty) "" else s": $hint")))
  }

  def at(sql: String, token: Token, hint: String): ParseException =
    syntaxError(sql, token.start, token.text, hint)
}
