package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.plans.MatchRecognize

/**
 * Reads only the input columns the matcher needs ([[MatchRecognize.neededInput]]) by a
 * projection under the node, in the logical plan. Adaptive execution re-plans the logical
 * plan after every stage and links each stage back to the logical node it came from; a
 * projection added only while planning has no such node, so the stage reading the input
 * (a cached relation, say) would be planned anew on every pass. Idempotent: once pruned,
 * every input column is needed.
 */
object PruneMatchRecognizeInput extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    // With the prefilter, ties keep the full order the prefilter's ranges were computed in
    // (its window below already shuffled and sorted every column); its time-range join
    // prunes the input itself.
    case m: MatchRecognize
        if !m.options.prefilter.exists(_.startFlag.isDefined) &&
          m.neededInput.size < m.child.output.size =>
      m.copy(child = Project(m.neededInput, m.child))
  }
}
