package org.apache.spark.sql.matchrecognize.parser

import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.types.StructType

/** The routine parameter parser Spark 4.0 adds, forwarded (MATCH_RECOGNIZE cannot occur there). */
private[parser] trait RoutineParamParsing extends ParserInterface {
  protected def delegate: ParserInterface

  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
}
