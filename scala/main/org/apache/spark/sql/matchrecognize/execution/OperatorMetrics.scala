package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

/**
 * Reads the SQL metrics of the MATCH_RECOGNIZE operators of an executed plan (through
 * adaptive query stages), for benchmarks and tools: one line `name=value, ...` per operator.
 */
object OperatorMetrics extends AdaptiveSparkPlanHelper {
  def summary(plan: SparkPlan): String =
    collect(plan) { case m: MatchRecognizeExec => m }.map { m =>
      m.metrics.toSeq.sortBy(_._1).map { case (k, v) => s"$k=${v.value}" }.mkString(", ")
    }.mkString("\n")

  /**
   * The SKIP TILL ANY MATCH operators (sequence joins, negations, Kleene closures), one line
   * each: `node=<description>, numOutputRows=..., ...` — the partial matches each produced.
   */
  def cepSummary(plan: SparkPlan): String =
    collect(plan) { case c: cep.CepBinaryExec => c }.map { c =>
      (s"node=${c.simpleString(100).replace(",", ";")}" +: c.metrics.toSeq.sortBy(_._1).map { case (k, v) =>
        s"$k=${v.value}" }).mkString(", ")
    }.mkString("\n")
}
