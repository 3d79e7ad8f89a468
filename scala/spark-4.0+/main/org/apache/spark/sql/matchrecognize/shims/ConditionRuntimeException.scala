package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.SparkRuntimeException

/**
 * Spark's runtime exception under one of this product's conditions (`MATCH_RECOGNIZE.<KIND>`).
 * A task failing with it fails the query with it, not with the scheduler's "Job aborted due
 * to stage failure" and the task's stack trace: from 4.0 on Spark hands a failed job's
 * exception to the user as it is when it carries a condition. Spark formats its runtime
 * exceptions from its own registry, which has none of this product's conditions, so the
 * exception is built under the registry's one free-text condition and answers with its own.
 */
abstract class ConditionRuntimeException(condition: String, sqlState: String, message: String)
  extends SparkRuntimeException(
    errorClass = "USER_RAISED_EXCEPTION",
    messageParameters = Map("errorMessage" -> message),
    cause = null,
    context = Array.empty,
    summary = "") {
  override def getMessage: String = s"[$condition] $message SQLSTATE: $sqlState"
  override def getCondition: String = condition
  override def getErrorClass: String = condition
  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] =
    java.util.Collections.singletonMap("message", message)
}
