package org.apache.spark.sql.matchrecognize.shims

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * A logical node that becomes a stateful operator when it is planned. Before Spark 4.3 a
 * logical plan does not say whether it is stateful: nothing to add.
 */
trait StatefulNodeOfLine extends LogicalPlan
