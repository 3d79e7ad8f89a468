package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult

/**
 * The parser methods Spark 4.3 adds to those every line shares. Splitting a script into
 * statements looks only at tokens and semicolons, which MATCH_RECOGNIZE does not change,
 * so Spark's splitter serves.
 */
private[parser] trait LineParserMethods extends ParameterParsing {
  override def splitStatements(sqlText: String): SqlStatementSplitResult =
    delegate.splitStatements(sqlText)
}
