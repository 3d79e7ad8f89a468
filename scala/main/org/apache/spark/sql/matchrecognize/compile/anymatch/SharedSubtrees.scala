package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._

/**
 * The sub-patterns the patterns of a group have alike, for the group's tree choice: a set
 * of a pattern's single-row variables is the same sub-pattern as another pattern's when
 * they have the same own conditions (the same leaves), in the same pattern order, with the
 * same conditions between them; then a sub-tree over it is the same node in both trees
 * (see `SharedTreeGraph`). Only patterns that are one sequence of single rows take part
 * (a negation's or closure's checks are not made by shared nodes). `leaf(p, v)`: the
 * group's number of the own conditions of `p`'s variable `v`.
 */
private[anymatch] final class SharedSubtrees(leaf: (CepVariables, String) => Int) {

  /** Sub-patterns of more variables are not looked for (2^n subsets per pattern). */
  private val MaxVariables = 10

  def plain(p: CepVariables): Option[CepSequence] = p.alternatives match {
    case Seq(s) if s.negations.isEmpty && s.kleenes.isEmpty && s.singles.size <= MaxVariables => Some(s)
    case _ => None
  }

  // A cell of a sub-pattern reads as its variable's rank in the sub-pattern and its
  // definition: one attribute id per such pair, the same for every pattern.
  private val cellIds = mutable.HashMap.empty[(Int, Expression), ExprId]

  /**
   * What identifies the sub-pattern `vars` (in pattern order) of `p`: its leaves in order
   * and its conditions between them over ranked cells; None when one reads a previous row.
   */
  private def key(p: CepVariables, s: CepSequence, vars: Seq[String]): Option[Any] =
    keys.getOrElseUpdate((p, vars), keyOf(p, s, vars))

  // The keys found, by pattern (itself: its identity) and variables: a group's tree choice
  // asks for the same sub-patterns many times.
  private val keys = mutable.HashMap.empty[(CepVariables, Seq[String]), Option[Any]]

  private def keyOf(p: CepVariables, s: CepSequence, vars: Seq[String]): Option[Any] = {
    val rank = vars.zipWithIndex.toMap
    val cells = vars.flatMap { v =>
      p.columnsOf(v).collect { case a: Alias =>
        a.exprId -> ((rank(v),
          (a.child match {
            case KnownNotNull(c) => c
            case c => c
          }).canonicalized))
      }
    }.toMap
    val set = vars.toSet
    val among = p.activeConditions(s).filter(c => c.reads.nonEmpty && c.required.subsetOf(set))
    if (among.exists(_.readsPrevious)) None
    else {
      val conditions = among.map { c =>
        c.expr.transform {
          case a: Attribute if cells.contains(a.exprId) =>
            AttributeReference("cell", a.dataType)(cellIds.getOrElseUpdate(cells(a.exprId),
                NamedExpression.newExprId))
        }.canonicalized
      }.toSet
      Some((vars.map(leaf(p, _)), conditions))
    }
  }

  /** Every sub-pattern (two variables or more) of a plain pattern, with its key. */
  def subPatterns(p: CepVariables): Seq[(Seq[String], Any)] = plain(p).toIndexedSeq.flatMap { s =>
    val singles = s.singles
    (2 to singles.size).flatMap(singles.combinations).flatMap(vars => key(p, s, vars).map(vars -> _))
  }

  /**
   * Each node of `tree` (chosen for plain pattern `p`) with what makes it the same node in
   * another pattern's tree: a leaf, its own conditions; a join, its sub-pattern and its
   * shape over the sub-pattern's ranks (a join over a sub-pattern that reads a previous row
   * is its pattern's alone).
   */
  def nodeKeys(p: CepVariables, tree: JoinTree): Seq[(JoinTree, Any)] = plain(p).toIndexedSeq.flatMap { s =>
    val position = s.singles.zipWithIndex.toMap
    tree.nodes.map {
      case n @ JoinLeaf(v) => n -> (("leaf", leaf(p, v)): Any)
      case n =>
        val vars = n.leaves.sortBy(position)
        val shape = SharedSubtrees.renamed(n, vars.zipWithIndex.map { case (v, i) => v -> i.toString }.toMap)
        n -> key(p, s, vars).map(k => (k, shape.sql)).getOrElse((p, n))
    }
  }

  /**
   * The sub-trees of `tree` (chosen for `from`) that are sub-patterns of `to`, in `to`'s
   * variable names; `toSubPatterns` is `subPatterns(to)`.
   */
  def shared(from: CepVariables, tree: JoinTree, toSubPatterns: Seq[(Seq[String], Any)]): Seq[JoinTree] =
    plain(from).toIndexedSeq.flatMap { sf =>
      val position = sf.singles.zipWithIndex.toMap
      val byKey = toSubPatterns.map(_.swap).toMap
      SharedSubtrees.subtrees(tree).flatMap { n =>
        val vars = n.leaves.sortBy(position)
        key(from, sf, vars).flatMap(byKey.get).map { toVars =>
          SharedSubtrees.renamed(n, vars.zip(toVars).toMap)
        }
      }
    }
}

private[anymatch] object SharedSubtrees {

  /** A tree's join nodes, the largest first. */
  def subtrees(t: JoinTree): Seq[JoinTree] =
    t.nodes.collect { case n: JoinNode => n }.sortBy(-_.variables.size)

  def renamed(t: JoinTree, to: Map[String, String]): JoinTree = t match {
    case JoinLeaf(v) => JoinLeaf(to(v))
    case JoinNode(l, r) => JoinNode(renamed(l, to), renamed(r, to))
  }
}
