package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._

/**
 * The one input of a group of SKIP TILL ANY MATCH patterns over the same relation, with
 * the same PARTITION BY and ORDER BY (see [[CepPatternGroup]]): one scan, one filter and
 * one shuffle for all of them. A leaf condition two patterns share (the same own
 * conditions of a variable, whatever its name) has one flag. Rows are sliced for the
 * longest window of the group; each pattern keeps a match only in the slice of its
 * first row, as alone.
 *
 * Every member registers before the first plan asks for the input. The members are then
 * planned in turn, and each one's join-tree choice counts the sub-trees the members before
 * it chose and it can share as free ([[computedFor]]).
 */
private[anymatch] final class CepGroupInput(taskChooser: CepTaskChooser, shareTrees: Boolean)
  extends GroupSharing {
  private val members = mutable.ArrayBuffer.empty[CepVariables]

  def register(pattern: CepVariables): Unit = members += pattern

  private def first: CepVariables = members.head
  private def window: Long = members.map(_.window).max
  private def lo: Expression = first.rowPositions._2

  private lazy val keysPresent: LogicalPlan =
    Filter(first.node.orderBy.map(s => IsNotNull(s.child): Expression).reduce(And), first.node.child)

  lazy val taskCount: CepTaskCount =
    taskChooser.choose(keysPresent, Some(lo), window, keyless = first.partitionBy.isEmpty)

  /** Each member's variables with their own conditions, and the distinct conditions. */
  private lazy val (conditionOf, conditions) = {
    val distinct = mutable.LinkedHashMap.empty[Expression, Int]
    val of = members.map { p =>
      p.kinds.keys.toIndexedSeq.sorted.map { v =>
        val c = p.ownConditions(v)
        v -> distinct.getOrElseUpdate(c.canonicalized, { distinct.size })
      }.toMap
    }
    val byIndex = distinct.toIndexedSeq.sortBy(_._2).map(_._1.canonicalized)
    // The canonical form of a condition is not evaluable (its attributes lost their
    // names): each flag computes the first member's own expression of it.
    val firstOf = mutable.HashMap.empty[Int, Expression]
    members.zip(of).foreach { case (p, vs) =>
      vs.foreach { case (v, i) => firstOf.getOrElseUpdate(i, p.ownConditions(v)) }
    }
    (of.toIndexedSeq, byIndex.indices.map(firstOf))
  }

  private lazy val rows: SharedLeafRows = {
    val read = AttributeSet(first.partitionBy.flatMap(_.references) ++ members.flatMap { p =>
      p.kinds.keys.flatMap(p.columnsOf).flatMap(_.references)
    })
    SharedLeafRows(keysPresent, first.partitionBy, lo, window, taskCount, conditions, read)
  }

  /** The input as `pattern`'s leaves read it: the plan, a flag per variable, the slice. */
  def inputOf(pattern: CepVariables): (LogicalPlan, Map[String, Expression], Attribute) = {
    val i = members.indexWhere(_ eq pattern)
    (rows.plan, conditionOf(i).map { case (v, c) => v -> rows.flags(c) }, rows.slice)
  }

  /** The number of the own conditions of `pattern`'s variable `v` among the group's. */
  def leafOf(pattern: CepVariables, v: String): Int = conditionOf(members.indexWhere(_ eq pattern))(v)

  // The trees each member chose, as the members are planned one after the other.
  private val chosen = mutable.ArrayBuffer.empty[(CepVariables, Seq[JoinTree])]

  def chose(pattern: CepVariables, trees: Seq[JoinTree]): Unit = chosen += ((pattern, trees))

  // The trees chosen together for the members that share (see `JoinTreeChooser.chooseTogether`).
  private var together: Option[GroupTrees] = None

  def choseTogether(trees: GroupTrees): Unit = together = Some(trees)

  /** What EXPLAIN says of the trees chosen together, if they were. */
  def togetherSummary: Option[String] = together.map(_.summary)

  private lazy val subtrees = new SharedSubtrees(leafOf)
  private lazy val subPatterns: Map[CepVariables, Seq[(Seq[String], Any)]] =
    members.map(p => p -> subtrees.subPatterns(p)).toMap

  /** How many members have each sub-pattern. */
  private lazy val sharers: Map[Any, Int] =
    subPatterns.values.flatMap(_.map(_._2).distinct).groupBy(identity).map { case (k, ks) => k -> ks.size }

  // ---- GroupSharing --------------------------------------------------------------------------

  lazy val shareable: Seq[Int] =
    members.indices.filter(i => subtrees.plain(members(i)).isDefined && members(i).alternatives.size == 1)

  def nodeKeys(m: Int, tree: JoinTree): Seq[(JoinTree, Any)] = subtrees.nodeKeys(members(m), tree)

  def common(a: Int, b: Int): Seq[(Seq[String], Seq[String])] = {
    val ofB = subPatterns(members(b)).map(_.swap).toMap
    subPatterns(members(a)).flatMap { case (vars, k) => ofB.get(k).map(vars -> _) }
  }

  /**
   * The sub-trees member `m` may share with the other members (in its variable names), each
   * with the number of members that pay for it: the sub-trees the members before it chose
   * (`before`, by member; computed anyway: infinitely many), and, over each sub-pattern
   * other members have too, the tree in pattern order (its cost split among them).
   */
  def offersAfter(m: Int, before: Seq[(Int, JoinTree)]): Seq[(JoinTree, Double)] = {
    val own = subPatterns(members(m))
    val built = before.flatMap { case (b, tree) => subtrees.shared(members(b), tree, own) }
      .distinct.map(_ -> Double.PositiveInfinity)
    val common = own.filter { case (_, k) => sharers(k) > 1 }.map { case (vars, k) =>
      JoinTree.leftDeep(vars) -> sharers(k).toDouble
    }
    built ++ common.filterNot(c => built.exists(_._1.variables == c._1.variables))
  }

  /**
   * Per alternative of `pattern`, the sub-trees it may share with the other members, each
   * with the number of members that pay for it (see `PatternStatistics.computed`): its
   * tree alone when the trees were chosen together, else [[offersAfter]] the members
   * planned before it.
   */
  def computedFor(pattern: CepVariables): Seq[Seq[(JoinTree, Double)]] = {
    val m = members.indexWhere(_ eq pattern)
    together.flatMap(_.trees.get(m)) match {
      case Some(tree) => Seq(Seq(tree -> Double.PositiveInfinity))
      case None if pattern.alternatives.size != 1 || !shareTrees => pattern.alternatives.map(_ => Nil)
      case None =>
        val before = chosen.toIndexedSeq.collect {
          case (p, Seq(tree)) => members.indexWhere(_ eq p) -> tree
        }
        Seq(offersAfter(m, before))
    }
  }

  /**
   * What EXPLAIN says `pattern`'s tree shares, when the trees were chosen together: its
   * largest nodes other members' trees have too, and which members.
   */
  def sharedNote(pattern: CepVariables, tree: JoinTree): Option[String] = together.flatMap { t =>
    val m = members.indexWhere(_ eq pattern)
    val others = t.trees.toIndexedSeq.filter(_._1 != m).map { case (o, ot) => o -> nodeKeys(o, ot).map(_._2).toSet }
    val keys = nodeKeys(m, tree).filter(_._1.isInstanceOf[JoinNode])
    // The largest first: a shared node's children are shared too, and not named again.
    val named = mutable.ArrayBuffer.empty[(JoinTree, Seq[Int])]
    keys.sortBy(-_._1.variables.size).foreach { case (n, k) =>
      val sharers = others.filter(_._2.contains(k)).map(_._1).sorted
      if (sharers.nonEmpty && !named.exists(x => n.variables.subsetOf(x._1.variables))) named += (n -> sharers)
    }
    if (named.isEmpty) None
    else Some(named.map { case (n, ws) =>
      s"shares ${n.sql} with pattern${if (ws.size > 1) "s" else ""} ${ws.map(_ + 1).mkString(", ")}"
    }.mkString(" | ", "; ", ""))
  }

  /** How many leaf conditions the group's patterns have, and how many distinct ones. */
  def sharing: (Int, Int) = (conditionOf.map(_.size).sum, conditions.size)
}
