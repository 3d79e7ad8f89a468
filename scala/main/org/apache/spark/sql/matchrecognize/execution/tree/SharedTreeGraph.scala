package org.apache.spark.sql.matchrecognize.execution.tree

import scala.collection.mutable

import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode, TreeLeafNode, TreeNodeSpec}

/**
 * The trees of several alternatives over one list of leaves as one graph: a node two trees
 * have alike (a leaf, or a join of alike children under the same condition and order) is
 * one node, with a parent in each tree above it. Nodes are numbered children first.
 * `windows(t)`: alternative `t`'s window; a node keeps the longest window of the trees it
 * is in.
 */
final class SharedTreeGraph(alternatives: Seq[TreeAlternative], windows: Seq[Long]) {
  private val ids = mutable.HashMap.empty[Any, Int]
  private val specs = mutable.ArrayBuffer.empty[TreeNodeSpec]
  private val longest = mutable.ArrayBuffer.empty[Long]
  private val users = mutable.ArrayBuffer.empty[mutable.SortedSet[Int]]

  private def add(n: TreeNodeSpec, t: Int): Int = {
    val key = n match {
      case TreeLeafNode(k) => ("leaf", k)
      case j: TreeJoinNode => (add(j.left, t), add(j.right, t), j.condition.canonicalized, j.order)
    }
    val i = ids.getOrElseUpdate(key, {
        specs += n; longest += Long.MinValue; users += mutable.SortedSet.empty[Int]
        specs.size - 1
      })
    longest(i) = math.max(longest(i), windows(t))
    users(i) += t
    i
  }

  /** Each alternative's root node. */
  val roots: IndexedSeq[Int] = alternatives.indices.map(t => add(alternatives(t).root, t))

  val nodes: IndexedSeq[TreeNodeSpec] = specs.toIndexedSeq
  def size: Int = nodes.length

  /** The longest window of the trees node `i` is in. */
  val window: IndexedSeq[Long] = longest.toIndexedSeq

  /** The alternatives whose trees node `i` is in. */
  val alternativesOf: IndexedSeq[Seq[Int]] = users.map(_.toIndexedSeq).toIndexedSeq

  /** The node of a node of the alternatives' trees. */
  def indexOf(n: TreeNodeSpec): Int = n match {
    case TreeLeafNode(k) => ids(("leaf", k))
    case j: TreeJoinNode => ids((indexOf(j.left), indexOf(j.right), j.condition.canonicalized, j.order))
  }

  /** A join node's children (-1 for a leaf). */
  val left: IndexedSeq[Int] = nodes.map { case j: TreeJoinNode => indexOf(j.left); case _ => -1 }
  val right: IndexedSeq[Int] = nodes.map { case j: TreeJoinNode => indexOf(j.right); case _ => -1 }

  /** The node of each leaf. */
  def leafNode(k: Int): Int = ids.getOrElse(("leaf", k), -1)

  /** What each node computes, for the metrics: a leaf's variable, a join's description. */
  def descriptions: Seq[String] = nodes.map {
    case TreeLeafNode(k) => alternatives.head.leaves(k).variable
    case j: TreeJoinNode => j.description
  }
}

object SharedTreeGraph {

  /**
   * How an operator evaluates `alternatives`: each unit is one alternative evaluated alone,
   * or the shareable alternatives over one list of leaves (two or more), evaluated as one
   * graph.
   */
  def units(alternatives: Seq[TreeAlternative]): Seq[Seq[Int]] = {
    val byLeaves = alternatives.indices.filter(i => alternatives(i).checksOnlyItsTree)
      .groupBy(i => alternatives(i).leaves).values.filter(_.size > 1).map(_.sorted).toIndexedSeq
    val shared = byLeaves.flatten.toSet
    (alternatives.indices.filterNot(shared).map(Seq(_)) ++ byLeaves).sortBy(_.head)
  }

  /**
   * For EXPLAIN: how many trees share nodes, and how many nodes the shared graphs evaluate
   * for the nodes of those trees ("" when none do).
   */
  def describe(alternatives: Seq[TreeAlternative]): String = {
    val shared = units(alternatives).filter(_.size > 1)
    if (shared.isEmpty) ""
    else {
      // A binary tree of n leaves has 2n - 1 nodes.
      val trees = shared.flatten.map(i => 2 * alternatives(i).root.leafIndexes.size - 1).sum
      val nodes = shared.map(u => new SharedTreeGraph(u.map(alternatives), u.map(_ => 0L)).size).sum
      s", ${shared.flatten.size} trees sharing nodes: $nodes nodes evaluated for their $trees"
    }
  }
}
