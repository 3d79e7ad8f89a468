package org.apache.spark.sql.matchrecognize.execution

import org.apache.spark.sql.execution.SparkStrategy
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.matchrecognize.plans.MatchRecognize

/** Plans a resolved [[MatchRecognize]] as a [[MatchRecognizeExec]]. */
object MatchRecognizeStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case m: MatchRecognize =>
      MatchRecognizeExec(m.partitionBy, m.orderBy, m.measures, m.measureOutput, m.defines,
        m.options, m.output,
        planLater(m.child)) :: Nil
    case _ => Nil
  }
}
