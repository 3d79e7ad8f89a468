package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * A logical node that becomes a stateful operator when it is planned: Spark 4.3 asks the
 * analysed plan (Real-Time Mode tracks a stateless query's progress asynchronously, which a
 * stateful one cannot have).
 */
trait StatefulNodeOfLine extends LogicalPlan {
  override def isStateful: Boolean = true
}
