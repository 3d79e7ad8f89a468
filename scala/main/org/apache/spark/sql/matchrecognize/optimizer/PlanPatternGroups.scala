package org.apache.spark.sql.matchrecognize.optimizer

import scala.collection.mutable

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, Project, Union}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.compile.cep.{CepPatternGroup, GroupMember}
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

  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!conf.getConf(MatchRecognizeConf.PLAN_PATTERNS_TOGETHER)) plan
    else plan.transformUp { case u: Union if !u.isStreaming => planTogether(u) }

  /** A union child that is projections over an ANY MATCH pattern that can share an input. */
  private def memberOf(child: LogicalPlan): Option[GroupMember] = {
    def walk(p: LogicalPlan, above: Seq[Seq[NamedExpression]]): Option[GroupMember] = p match {
      case Project(list, c) => walk(c, above :+ list)
      case m: MatchRecognize
          if m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) &&
            CepPatternGroup.refusal(m).isEmpty => Some(GroupMember(m, above))
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
      def remap[T <: org.apache.spark.sql.catalyst.expressions.Expression](e: T): T = e.transform {
        case a: Attribute if map.contains(a) => map(a)
      }.asInstanceOf[T]
      val node = member.node.transformExpressions { case a: Attribute if map.contains(a) => map(a) }
        .withNewChildren(Seq(input)).asInstanceOf[MatchRecognize]
      GroupMember(node, member.projections.map(_.map(remap)))
    }
  }

  private def planTogether(u: Union): LogicalPlan = {
    val members = u.children.map(memberOf)
    // Groups of union children (by index) over one input, each with its first member.
    val groups = mutable.ArrayBuffer.empty[(GroupMember, mutable.ArrayBuffer[Int])]
    members.zipWithIndex.foreach {
      case (Some(m), i) =>
        groups.find { case (first, _) =>
          first.node.child.sameResult(m.node.child) &&
          CepPatternGroup.sameLayout(first.node, onto(m, first.node.child).node)
        } match {
          case Some((_, indexes)) => indexes += i
          case None => groups += ((m, mutable.ArrayBuffer(i)))
        }
      case _ =>
    }
    val together = groups.filter(_._2.size > 1)
    if (together.isEmpty) return u
    val settings = PlanAnyMatchPatterns.settings(conf, Some(session))
    val replaced = mutable.HashMap.empty[Int, Seq[LogicalPlan]]
    together.foreach { case (first, indexes) =>
      val plans = CepPatternGroup.plan(indexes.toSeq.map(i => onto(members(i).get, first.node.child)),
        settings, conf.getConf(MatchRecognizeConf.GROUP_TREE_CHOICE))
      if (plans.size == 1) {
        replaced(indexes.head) = plans
        indexes.tail.foreach(replaced(_) = Nil)
      } else indexes.zip(plans).foreach { case (i, p) => replaced(i) = Seq(p) }
    }
    val children = u.children.indices.flatMap(i => replaced.getOrElse(i, Seq(u.children(i))))
    if (children.size == 1) children.head else u.copy(children = children)
  }
}
