package org.apache.spark.sql.matchrecognize.streaming

import scala.annotation.nowarn

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.catalyst.plans.logical.{FlatMapGroupsWithState, LogicalPlan}
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.streaming.OutputMode

/**
 * Spark 3.5 has no `transformWithState`: every stream runs in `flatMapGroupsWithState`, and
 * asking for the other operator (or Real-Time Mode, which needs it) names the line to use.
 */
object TransformWithStateLowering {

  /** Spark 3.5 has no hint batch for extensions: the rule runs among the resolution rules. */
  def injectOperatorChoice(extensions: SparkSessionExtensions): Unit =
    extensions.injectResolutionRule(_ => ChooseStreamingOperator)

  def checkAvailable(): Unit =
    throw analysis("STREAMING_OPERATOR",
      "spark.sql.matchRecognize.streaming.operator=transformWithState and Real-Time Mode run a " +
        "streaming MATCH_RECOGNIZE in Spark's transformWithState operator, which Spark 3.5 does " +
        "not have; use Spark 4.0 or later (Real-Time Mode: 4.3), or the default operator.")

  @nowarn("cat=unused-params") // the 4.0+ form's parameters
  def apply(f: FlatMapGroupsWithState, mode: OutputMode, realTime: Boolean): LogicalPlan = {
    checkAvailable()
    f
  }
}
