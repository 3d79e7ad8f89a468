package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.annotation.nowarn

import org.apache.spark.sql.matchrecognize.plans.{JoinPlanReport, KeyTreeChooser}

/**
 * The join trees chosen for the alternatives of one pattern, and why (for EXPLAIN); with
 * `execution`, the chooser also settled how they run (`cepExecution = auto`); with `perKey`,
 * groups of rows of a one-pass pattern of one alternative may run other trees.
 */
final case class ChosenTrees(trees: Seq[JoinTree], report: JoinPlanReport,
    execution: Option[TreeExecutionChoice] = None, perKey: Option[KeyTrees] = None)

/**
 * The trees a one-pass alternative may run beside its own, tree `i` of `chooser` being
 * `others(i - 1)` (its tree 0 is the alternative's own).
 */
final case class KeyTrees(others: Seq[JoinTree], chooser: KeyTreeChooser)

/**
 * Chooses the join tree of every alternative (simple sequence) of a SKIP TILL ANY MATCH
 * pattern. The cost-based choice lives in the optimizer package; the plan builder only asks.
 */
trait JoinTreeChooser {
  def choose(builder: CepPlanBuilder): ChosenTrees

  /**
   * The trees of a group's patterns chosen together, as one plan whose shared nodes are
   * paid once (`sharing` says which nodes are alike); None to let each pattern choose in
   * turn, counting what the patterns before it chose as free.
   */
  @nowarn("cat=unused-params") // the default ignores what an implementation reads
  def chooseTogether(builders: Seq[CepPlanBuilder], sharing: GroupSharing): Option[GroupTrees] = None
}

/**
 * The trees chosen together for a group's patterns: the tree of each member that takes
 * part (by its number in the group), and what EXPLAIN says of the choice.
 */
final case class GroupTrees(trees: Map[Int, JoinTree], summary: String)

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
