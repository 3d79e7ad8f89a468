package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.SparkRuntimeException

/**
 * Spark's runtime exception under one of this product's conditions (`MATCH_RECOGNIZE.<KIND>`).
 * Spark 3.5 wraps a failed task's exception in "Job aborted due to stage failure" whatever
 * it is; the condition and message are there for whoever reads the cause.
 */
abstract class ConditionRuntimeException(condition: String, sqlState: String, message: String)
  extends SparkRuntimeException(s"[$condition] $message SQLSTATE: $sqlState", None) {
  override def getErrorClass: String = condition
  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] =
    java.util.Collections.singletonMap("message", message)
}
