package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPlanBuilder, ChosenTrees, JoinTree, JoinTreeChooser, KeyTrees}
import org.apache.spark.sql.matchrecognize.plans.KeyTreeChooser

/**
 * Trees per key forced for tests (`spark.sql.matchRecognize.internal.keyTrees`): a pattern of
 * one alternative planned on its own runs, beside the tree `chooser` picks, the `others`
 * over its variables, each group taking one by what its first `prefixRows` rows hold and
 * moving to another by what each `prefixRows` more hold ([[SpreadKeyTrees]]), so groups of
 * one input run different trees, and change trees as they go.
 */
final class ForcedKeyTrees(chooser: JoinTreeChooser, others: Seq[JoinTree], prefixRows: Int)
  extends JoinTreeChooser {

  override def choose(builder: CepPlanBuilder): ChosenTrees = {
    val chosen = chooser.choose(builder)
    val fits = builder.alternatives.size == 1 && !builder.inGroup &&
      others.forall(_.variables == builder.alternatives.head.singles.toSet)
    if (!fits) chosen
    else {
      val trees = chosen.trees.head +: others
      chosen.copy(perKey = Some(KeyTrees(others,
          SpreadKeyTrees(trees.map(_.sql), builder.alternatives.head.singles, prefixRows,
            builder.relatedPairs(builder.alternatives.head)))))
    }
  }
}

/**
 * Picks a tree by a weighted sum of the counts and the span, whatever the group runs, so
 * that groups differ and a group's tree changes often. The `pairs` are measured (their
 * counts kept in a stream's state) but do not weigh in the pick.
 */
final case class SpreadKeyTrees(trees: Seq[String], variables: Seq[String], prefixRows: Int,
    override val pairs: Seq[(String, String)] = Nil) extends KeyTreeChooser {
  override def choose(admitted: Array[Long], rows: Long, span: Double, current: Int,
      tested: Array[Long], passed: Array[Long], estimates: Array[Double]): Int = {
    val weighted = admitted.indices.map(i => admitted(i) * (i + 2)).sum
    java.lang.Math.floorMod(rows + weighted + span.toLong, trees.size.toLong).toInt
  }
}
