package org.apache.spark.sql.matchrecognize.execution.planning

import org.apache.spark.sql.execution.SparkStrategy
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.catalyst.expressions.{ExprId, ScalarSubquery}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project, RepartitionByExpression}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.physical.{HashPartitioning, RangePartitioning}
import org.apache.spark.sql.execution.exchange.{REPARTITION_BY_NUM, ShuffleExchangeExec}
import org.apache.spark.sql.matchrecognize.compile.anymatch.CepTaskChooser
import org.apache.spark.sql.execution.{FilterExec, ProjectExec, SparkPlan}
import org.apache.spark.sql.matchrecognize.execution.automaton.{MatchNumberAbove, MatchRecognizeExec, SplitMatching}
import org.apache.spark.sql.matchrecognize.execution.joins._
import org.apache.spark.sql.matchrecognize.execution.counting.MatchCountExec
import org.apache.spark.sql.matchrecognize.execution.tree.TreeMatchExec
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Plans a resolved [[MatchRecognize]] as a [[MatchRecognizeExec]], and the nodes of
 * SKIP TILL ANY MATCH join-tree plans as their operators.
 */
object MatchRecognizeStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case m: MatchRecognize =>
      val split = SplitMatching.choose(m, SQLConf.get)
      val child =
        if (!split.split) planLater(m.child)
        else {
          // Finer ranges than tasks, fixed (adaptive execution must not merge them).
          val order = MatchRecognizeExec.rangeOrdering(m.partitionBy, m.orderBy)
          val session = SparkSession.active
          ShuffleExchangeExec(RangePartitioning(order, SplitMatching.ranges(session.sparkContext, SQLConf.get)),
            planLater(m.child), REPARTITION_BY_NUM)
        }
      val lifted = if (split.split) MatchNumberAbove.lift(m) else None
      val node = lifted.fold(m)(_.node)
      val exec = MatchRecognizeExec(node.partitionBy, node.orderBy, node.measures,
        node.measureOutput, node.defines, node.options, node.output, child, split.split, split.note)
      lifted.fold[SparkPlan](exec)(l => ProjectExec(l.projection, exec)) :: Nil
    case Project(list, j: CepSequenceJoin) if SequenceJoinExec.canProject(list) =>
      // The join writes each match's projected row directly, not its columns and then a copy.
      sequenceJoin(j).copy(output = list.map(_.toAttribute), projection = list) :: Nil
    case j: CepSequenceJoin => sequenceJoin(j) :: Nil
    case n: CepNegation =>
      NegationExec(n.leftSpan, n.rightSpan, n.rightOrder, n.lower, n.upper, n.condition,
        n.window, n.description, planLater(n.left), planLater(n.right)) :: Nil
    case k: CepKleene =>
      KleeneExec(k.leftSpan, k.rightSpan, k.rightOrder, k.lower, k.upper, k.rowCondition,
        k.previous, k.min, k.max, k.outputs, k.firstOrder, k.lastOrder, k.window, k.outLo,
        k.outHi, k.maxBindings, k.description, k.output, planLater(k.left),
        planLater(k.right)) :: Nil
    case r: CepRowsOf =>
      FilterExec(r.flag, planLater(r.child)) :: Nil
    case Project(list, t: CepTreeMatch) if SequenceJoinExec.canProject(list) =>
      // The tree writes each match's projected row directly, as the joins do.
      treeMatch(t).projectedBy(list) :: Nil
    case t: CepTreeMatch => treeMatch(t) :: Nil
    case c: CepMatchCount =>
      MatchCountExec(c.keys, c.partitionBy, c.flags, c.starts, c.sequence, c.order, c.lo, c.hi,
        c.window, c.matches, c.description, c.startColumns, c.values, c.pairs, c.relations, planLater(c.child)) :: Nil
    case g: CepMatchGuard =>
      MatchGuardExec(g.keys, g.maxMatches, g.reports, planLater(g.child)) :: Nil
    case r: RepartitionByExpression if r.getTagValue(CepTaskChooser.SharedInputShuffle).isDefined =>
      // Hash partitioning even into one task: Spark plans one partition as SinglePartition,
      // which a join cannot ask its other side to match, so each join would shuffle again.
      ShuffleExchangeExec(HashPartitioning(r.partitionExpressions, r.numPartitions),
        planLater(r.child), REPARTITION_BY_NUM) :: Nil
    case _ => Nil
  }

  /** Each subquery once, in the order first met. */
  private def distinctSubqueries(all: Seq[ScalarSubquery]): Seq[ScalarSubquery] = {
    val seen = scala.collection.mutable.HashSet.empty[ExprId]
    all.filter(s => seen.add(s.exprId))
  }

  private def treeMatch(t: CepTreeMatch): TreeMatchExec =
    TreeMatchExec(t.keys, t.alternatives, t.alternatives.map(_.columns), t.order, t.lo, t.hi, t.window,
      t.narrowByOrder, t.maxBuffered, distinctSubqueries(t.alternatives.flatMap(_.subqueries)),
      planLater(t.child))

  private def sequenceJoin(j: CepSequenceJoin): SequenceJoinExec =
    SequenceJoinExec(j.leftSpan, j.rightSpan, j.condition, j.window, j.outLo, j.outHi,
      j.description, j.output, planLater(j.left), planLater(j.right), j.rightAfter,
      j.rightBefore)
}
