package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.plans.logical.{FlatMapGroupsWithState, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.streaming.WriteToStreamStatement
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.streaming.OutputMode

/**
 * A streaming MATCH_RECOGNIZE writes each match once and never changes it, so its query runs
 * in append output mode only. The mode is known when `writeStream.start()` analyses the
 * write, and Spark's own streaming checks run in the resolution batch of that analysis and
 * would refuse another mode by the name of the internal operator; this rule runs in the hint
 * batch, before them, and names the clause and the fix.
 */
object CheckStreamingOutputMode extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = {
    plan match {
      case write: WriteToStreamStatement
          if write.outputMode != OutputMode.Append() && matchesIn(write.inputQuery) =>
        throw analysis("STREAMING_OUTPUT_MODE",
          s"MATCH_RECOGNIZE over a streaming input writes each match once, when it is " +
            s"decided, and never updates it: the query runs in append output mode, not " +
            s"${write.outputMode}. Use writeStream.outputMode(\"append\") (the default).")
      case _ =>
    }
    plan
  }

  private def matchesIn(plan: LogicalPlan): Boolean = plan.exists {
    case m: FlatMapGroupsWithState => m.func.isInstanceOf[KeyedStreamFunction]
    case _ => false
  }
}
