package org.apache.spark.sql.matchrecognize.optimizer

import scala.collection.mutable

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project, SubqueryAlias, Union}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.UNION
import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPatternGroup, GroupMember}
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, SelectionStrategy}

/**
 * Plans the SKIP TILL ANY MATCH MATCH_RECOGNIZE queries of a UNION ALL together when they
 * read the same input (plans that give the same result, such as two scans of one table)
 * with the same PARTITION BY and ORDER BY, and only projections stand between them and the
 * union: [[CepPatternGroup]] gives them one input, and one pass when each runs in one.
 * Runs before [[PlanAnyMatchPatterns]], which plans every other pattern alone.
 */
case class PlanPatternGroups(session: SparkSession) extends Rule[LogicalPlan] {
  import PlanPatternGroups._

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!conf.getConf(MatchRecognizeConf.PLAN_PATTERNS_TOGETHER)) plan
    else plan.transformUpWithPruning(_.containsPattern(UNION)) { case u: Union if !u.isStreaming => planTogether(u) }

  private def planTogether(u: Union): LogicalPlan = {
    val found = groups(u,
      m =>
        m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) &&
          CepPatternGroup.refusal(m).isEmpty)
    if (found.isEmpty) u
    else {
      val settings = PlanAnyMatchPatterns.settings(conf, Some(session))
      val choice = conf.getConf(MatchRecognizeConf.GROUP_TREE_CHOICE)
      replaced(u,
        found.map { case (indexes, members) =>
          indexes -> CepPatternGroup.plan(members, settings,
            shareTrees = choice != "alone", together = choice == "together")
        })
    }
  }
}

object PlanPatternGroups {

  /** A union child that is projections over a pattern `accept` takes. */
  private def memberOf(child: LogicalPlan, accept: MatchRecognize => Boolean): Option[GroupMember] = {
    def walk(p: LogicalPlan, above: Seq[Seq[NamedExpression]]): Option[GroupMember] = p match {
      case Project(list, c) => walk(c, above :+ list)
      // Subquery aliases only name columns (a stream's plan still has them).
      case SubqueryAlias(_, c) => walk(c, above)
      case m: MatchRecognize if accept(m) => Some(GroupMember(m, above))
      case _ => None
    }
    walk(child, Nil)
  }

  /** `member` reading `input` (which gives the same rows as its own input) instead. */
  private def onto(member: GroupMember, input: LogicalPlan): GroupMember = {
    val own = member.node.child
    if (own eq input) member
    else {
      val map = AttributeMap(own.output.zip(input.output))
      def remap[T <: Expression](e: T): T = e.transform {
        case a: Attribute if map.contains(a) => map(a)
      }.asInstanceOf[T]
      val node = member.node.transformExpressions { case a: Attribute if map.contains(a) => map(a) }
        .withNewChildren(Seq(input)).asInstanceOf[MatchRecognize]
      GroupMember(node, member.projections.map(_.map(remap)))
    }
  }

  /**
   * The children of `u` that are projections over patterns `accept` takes, in groups of two
   * or more over one input (plans that give the same rows) with the same PARTITION BY and
   * ORDER BY: each group's union child indexes, and its members, all reading its first
   * member's input.
   */
  def groups(u: Union, accept: MatchRecognize => Boolean): Seq[(Seq[Int], Seq[GroupMember])] = {
    val members = u.children.map(memberOf(_, accept))
    val found = mutable.ArrayBuffer.empty[(GroupMember, mutable.ArrayBuffer[Int])]
    members.zipWithIndex.foreach {
      case (Some(m), i) =>
        found.find { case (first, _) =>
          first.node.child.sameResult(m.node.child) &&
          CepPatternGroup.sameLayout(first.node, onto(m, first.node.child).node)
        } match {
          case Some((_, indexes)) => indexes += i
          case None => found += ((m, mutable.ArrayBuffer(i)))
        }
      case _ =>
    }
    found.toIndexedSeq.filter(_._2.size > 1).map { case (first, indexes) =>
      indexes.toIndexedSeq -> indexes.toIndexedSeq.map(i => onto(members(i).get, first.node.child))
    }
  }

  /**
   * `u` with each group's children replaced by its plans: one plan (in the first child's
   * place), or one per child.
   */
  def replaced(u: Union, plans: Seq[(Seq[Int], Seq[LogicalPlan])]): LogicalPlan = {
    val byIndex = mutable.HashMap.empty[Int, Seq[LogicalPlan]]
    plans.foreach { case (indexes, ps) =>
      if (ps.size == 1) {
        byIndex(indexes.head) = ps
        indexes.tail.foreach(byIndex(_) = Nil)
      } else indexes.zip(ps).foreach { case (i, p) => byIndex(i) = Seq(p) }
    }
    val children = u.children.indices.flatMap(i => byIndex.getOrElse(i, Seq(u.children(i))))
    if (children.size == 1) children.head else u.copy(children = children)
  }
}
