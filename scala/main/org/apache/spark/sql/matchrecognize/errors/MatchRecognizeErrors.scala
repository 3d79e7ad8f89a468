package org.apache.spark.sql.matchrecognize.errors

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.matchrecognize.shims.SparkApi

/**
 * Analysis errors of MATCH_RECOGNIZE. Each names the construct at fault; the condition
 * name (`MATCH_RECOGNIZE.<KIND>`) is stable so that tools can match on it.
 */
object MatchRecognizeErrors {

  def analysis(kind: String, message: String, sqlState: String = "42000"): AnalysisException = {
    SparkApi.analysisException(s"MATCH_RECOGNIZE.$kind", sqlState, message)
  }

  def unknownVariable(name: String, where: String): AnalysisException =
    analysis("UNKNOWN_PATTERN_VARIABLE",
      s"$where refers to pattern variable `$name`, which is neither in PATTERN nor a SUBSET.")

  def unsupported(construct: String): AnalysisException =
    analysis("UNSUPPORTED_FEATURE", s"$construct is not supported yet.", sqlState = "0A000")
}
