package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.matchrecognize.plans._
import org.apache.spark.sql.types.IntegerType

/**
 * A pattern of a group planned together: a SKIP TILL ANY MATCH MATCH_RECOGNIZE and the
 * projections above it (the first is the top one), over the group's common input.
 */
final case class GroupMember(node: MatchRecognize, projections: Seq[Seq[NamedExpression]]) {

  /** The member's rows: the projections over `plan` (the node's plan). */
  def over(plan: LogicalPlan): LogicalPlan = projections.foldRight(plan)((list, p) => Project(list, p))

  def output: Seq[Attribute] = projections.headOption.map(_.map(_.toAttribute)).getOrElse(node.output)

  /**
   * The member's output columns computed over the columns `measures` (the node's output
   * computed from a match) read: the projections above the node, composed with them.
   */
  def columnsOver(measures: Seq[NamedExpression]): Seq[Expression] = {
    import Projections._
    (projections :+ measures).foldLeft(output.map(a => a: Expression)) { (exprs, level) =>
      exprs.map(substitute(_, definitions(level)))
    }
  }
}

/** Composing projections: each column replaced by what a projection below defines it as. */
private[anymatch] object Projections {

  /** An expression's definition by a projection (its alias stripped), by attribute. */
  def definitions(list: Seq[NamedExpression]): Map[ExprId, Expression] =
    list.map {
      case a: Alias => a.exprId -> a.child
      case other => other.exprId -> (other: Expression)
    }.toMap

  def substitute(e: Expression, defs: Map[ExprId, Expression]): Expression = e.transform {
    case a: Attribute if defs.contains(a.exprId) => defs(a.exprId)
  }
}

/**
 * Plans several SKIP TILL ANY MATCH patterns over the same input with the same PARTITION
 * BY and ORDER BY (the members of a UNION ALL, see `PlanPatternGroups`) together: their
 * leaves read one input ([[CepGroupInput]]: one scan, one filter and one shuffle), and when
 * each pattern runs in one pass, one operator evaluates all of their trees in one pass over
 * each key's rows (one sort), each pattern with its own window, each match written in the
 * union's columns with the pattern's projections applied; the leaves and sub-trees the
 * patterns have alike are evaluated once ([[SharedLeaves]], [[SharedTreeGraph]]).
 */
object CepPatternGroup {
  import Projections._

  /** Why `node` cannot read a group's input (its leaves need columns of its own); None if it can. */
  def refusal(node: MatchRecognize): Option[String] =
    Try(new CepVariables(node)).toOption match {
      case None => Some("the pattern is planned on its own")
      case Some(p) =>
        if (p.rowsWindow) Some("WITHIN n ROWS ranks each pattern's rows")
        else if (node.orderBy.size != 1) Some("more than one ORDER BY key")
        else if (p.cells.windowColumns.nonEmpty) Some("PREV/NEXT, or ids of rows, computed per pattern")
        else None
    }

  /** Whether two patterns (over the same input attributes) partition and order alike. */
  def sameLayout(a: MatchRecognize, b: MatchRecognize): Boolean =
    a.partitionBy.size == b.partitionBy.size &&
      a.partitionBy.zip(b.partitionBy).forall { case (x, y) => x.semanticEquals(y) } &&
      a.orderBy.size == b.orderBy.size &&
      a.orderBy.zip(b.orderBy).forall { case (x, y) => x.semanticEquals(y) }

  /**
   * The rows of `members` (two or more, over one input, each passing [[refusal]] and of
   * [[sameLayout]]): one plan in the first member's columns when one pass evaluates them
   * all, else each member's plan, all reading the group's input. The members are planned
   * in turn; with `shareTrees`, their trees are chosen together when `together` asks and
   * the chooser can (`JoinTreeChooser.chooseTogether`), else each one's tree choice counts
   * the sub-trees it can share with the members before it as free (see
   * [[CepGroupInput.computedFor]]).
   */
  def plan(members: Seq[GroupMember], settings: CepSettings, shareTrees: Boolean,
      together: Boolean = true): Seq[LogicalPlan] = {
    val group = new CepGroupInput(settings.taskChooser, shareTrees)
    val builders = members.map(m => new CepPlanBuilder(m.node, settings, Some(group)))
    if (shareTrees && together) settings.chooser.chooseTogether(builders, group).foreach(group.choseTogether)
    val built = builders.map(_.build())
    val (all, shared) = group.sharing
    val note = s" | patterns planned together: one input for ${members.size} patterns, " +
      s"$shared distinct leaf conditions of $all" + group.togetherSummary.map(", " + _).getOrElse("")
    merged(members, built, settings.maxMatchesPerPartition, note) match {
      case Some(one) => Seq(one)
      case None => members.zip(built).map { case (m, p) => m.over(p) }
    }
  }

  /**
   * The members (two or more, each passing [[refusal]], of [[sameLayout]], over one
   * streaming input) as one stream: every pattern's one-pass trees in one stateful
   * function, over shared leaves (the nodes the trees have alike evaluated once, as in
   * batch), each with its own window, each match written in the union's columns (the
   * first member's, returned with the spec); None when a member is not one row per match
   * of its measures (ALL ROWS PER MATCH, MATCH_NUMBER()) or its stream plan fails (it is
   * then planned alone, which says why).
   */
  def streamSpec(members: Seq[GroupMember], settings: CepSettings): Option[(TreeStreamSpec, Seq[Attribute])] = {
    val plans = Try(members.map(m => new CepPlanBuilder(m.node, settings).streamPlan())).toOption
    plans.flatMap { plans =>
      val specs = plans.map(_.spec)
      val first = specs.head
      val measures = plans.map { p =>
        p.output(LocalRelation(p.matchColumns)) match {
          case Project(list, _: LocalRelation) => Some(list)
          case _ => None
        }
      }
      val targets = members.head.output
      val fits = measures.forall(_.isDefined) && specs.forall { s =>
        s.numbering.isEmpty && s.distinctBy.isEmpty && s.windowColumns.isEmpty && !s.rowsWindow &&
        s.order.semanticEquals(first.order) && s.lo.semanticEquals(first.lo) &&
        s.hi.semanticEquals(first.hi) && s.narrowByOrder == first.narrowByOrder
      } && members.forall(_.output.map(_.dataType) == targets.map(_.dataType))
      if (!fits) None
      else {
        val alternatives = members.zip(specs).zip(measures.flatten).zipWithIndex.flatMap {
          case (((m, spec), list), p) =>
            val exprs = m.columnsOver(list)
            spec.alternatives.map { a =>
              val defs = definitions(a.columns)
              a.copy(columns = exprs.zip(targets).map { case (e, t) => Alias(substitute(e, defs), t.name)(t.exprId) },
                window = Some(spec.window), description = s"pattern ${p + 1}: ${a.description}")
            }
        }
        Some((first.copy(alternatives = SharedLeaves(alternatives), window = specs.map(_.window).max), targets))
      }
    }
  }

  /**
   * One operator for every member: when each plan is the guard over one pass, the trees
   * of all patterns in one [[CepTreeMatch]], each match projected straight into the union's
   * columns (the keys and the pattern's number ahead, for the guard, which counts each
   * pattern's matches per key apart).
   */
  private def merged(members: Seq[GroupMember], built: Seq[LogicalPlan], maxMatches: Long,
      note: String): Option[LogicalPlan] = {
    val parts = built.map {
      case CepMatchGuard(Project(list, t: CepTreeMatch), _, _, reports) => Some((list, t, reports))
      case CepMatchGuard(t: CepTreeMatch, _, _, reports) => Some((t.output, t, reports))
      case _ => None
    }
    if (parts.exists(_.isEmpty)) return None
    val trees = parts.flatten
    val first = trees.head._2
    val targets = members.head.output
    val sameInput = trees.forall { case (_, t, _) =>
      (t.child eq first.child) && t.keys.map(_.exprId) == first.keys.map(_.exprId) && t.order.semanticEquals(
        first.order) &&
      t.narrowByOrder == first.narrowByOrder
    }
    val sameTypes = members.forall(m => m.output.map(_.dataType) == targets.map(_.dataType))
    if (!sameInput || !sameTypes) return None

    // Each member's columns over its tree's output, through the projections above it.
    val finals = members.zip(trees).map { case (m, (list, _, _)) => m.columnsOver(list) }
    val nullable = targets.indices.map(i => finals.exists(_(i).nullable))
    val partitionBy = members.head.node.partitionBy
    val keyAliases = partitionBy.map(k => Alias(k, k.name)())
    val number = AttributeReference("pattern", IntegerType, nullable = false)()
    val alternatives = finals.zip(trees).zipWithIndex.flatMap { case ((exprs, (_, t, _)), p) =>
      t.alternatives.map { a =>
        val defs = definitions(a.columns)
        val columns = exprs.zip(targets).zipWithIndex.map { case ((e, target), i) =>
          val over = substitute(e, defs)
          Alias(if (nullable(i) && !over.nullable) KnownNullable(over) else over, target.name)(target.exprId)
        }
        a.copy(columns = keyAliases ++ (Alias(Literal(p + 1), number.name)(number.exprId) +: columns),
          window = Some(t.window), description = s"pattern ${p + 1}: ${a.description}")
      }
    }
    val one = first.copy(alternatives = SharedLeaves(alternatives), window = trees.map(_._2.window).max)
    val reports = trees.flatMap(_._3).zipWithIndex.map { case (r, i) =>
      if (i == 0) r.copy(summary = r.summary + note) else r
    }
    Some(Project(targets, CepMatchGuard(one, keyAliases.map(_.toAttribute) :+ number, maxMatches, reports)))
  }
}
