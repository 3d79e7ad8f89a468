package org.apache.spark.sql.matchrecognize.compile.cep

import org.apache.spark.sql.matchrecognize.plans.JoinPlanReport

/**
 * The join trees chosen for the alternatives of one pattern, and why (for EXPLAIN); with
 * `execution`, the chooser also settled how they run (`cepExecution = auto`).
 */
final case class ChosenTrees(trees: Seq[JoinTree], report: JoinPlanReport,
    execution: Option[TreeExecutionChoice] = None)

/**
 * Chooses the join tree of every alternative (simple sequence) of a SKIP TILL ANY MATCH
 * pattern. The cost-based choice lives in the optimizer package; the plan builder only asks.
 */
trait JoinTreeChooser {
  def choose(builder: CepPlanBuilder): ChosenTrees
}

object JoinTreeChooser {

  /** The pattern's own order as a left-deep tree: no statistics needed. */
  val patternOrder: JoinTreeChooser = fixed("trivial", (_, s) => JoinTree.leftDeep(s.singles))

  /** Trees given by a function of the alternative (forced trees in tests). */
  def fixed(name: String, treeFor: (Int, CepSequence) => JoinTree): JoinTreeChooser =
    (builder: CepPlanBuilder) => {
      val trees = builder.alternatives.zipWithIndex.map { case (s, i) => treeFor(i, s) }
      ChosenTrees(trees, JoinPlanReport.withoutStatistics(name, trees.map(_.sql)))
    }
}
