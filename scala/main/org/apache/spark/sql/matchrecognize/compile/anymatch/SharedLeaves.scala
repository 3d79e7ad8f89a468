package org.apache.spark.sql.matchrecognize.compile.anymatch

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.matchrecognize.plans._

/**
 * Puts the trees of a group's patterns over one list of leaves, so that one pass can
 * evaluate the nodes they have alike once (see `SharedTreeGraph`): two leaves of
 * different patterns that admit the same rows (the same entry condition, whatever their
 * variables are called) become one, with the columns of both; every expression of each
 * tree is rewritten to read the shared leaves' columns. A pattern whose two variables
 * admit the same rows keeps two leaves. Alternatives with negations or closures are left
 * as they are (they run alone).
 */
private[anymatch] object SharedLeaves {

  def apply(alternatives: Seq[TreeAlternative]): Seq[TreeAlternative] = {
    val shareable = alternatives.filter(_.checksOnlyItsTree)
    if (shareable.size < 2) return alternatives
    val enters = mutable.ArrayBuffer.empty[Expression]
    val names = mutable.ArrayBuffer.empty[String]
    val columns = mutable.ArrayBuffer.empty[mutable.LinkedHashMap[Expression, NamedExpression]]
    val enterOf = mutable.ArrayBuffer.empty[Expression]
    // Each alternative's leaf k -> shared leaf, and each of its leaf columns -> the shared column.
    val placed = shareable.map { a =>
      val taken = mutable.Set.empty[Int]
      a.leaves.map { leaf =>
        val key = leaf.enter.canonicalized
        val g = enters.indices.find(i => enters(i) == key && !taken(i)).getOrElse {
          enters += key; names += leaf.variable; enterOf += leaf.enter
          columns += mutable.LinkedHashMap.empty
          enters.size - 1
        }
        taken += g
        val byColumn = leaf.columns.map { c =>
          val definition = c match {
            case a: Alias => a.child
            case other => other
          }
          c.exprId -> columns(g).getOrElseUpdate(definition.canonicalized, c).toAttribute
        }
        (g, byColumn)
      }
    }
    val leaves = enters.indices.map(g => TreeLeafSpec(names(g), enterOf(g), columns(g).values.toIndexedSeq))
    val rewritten = shareable.zip(placed).map { case (a, leafPlaces) =>
      val attributes = leafPlaces.flatMap(_._2).toMap
      def node(n: TreeNodeSpec): TreeNodeSpec = n match {
        case TreeLeafNode(k) => TreeLeafNode(leafPlaces(k)._1)
        case j: TreeJoinNode => j.copy(left = node(j.left), right = node(j.right))
      }
      a.copy(root = node(a.root)).map(_.transform {
        case r: AttributeReference if attributes.contains(r.exprId) => attributes(r.exprId)
      }).copy(leaves = leaves)
    }
    val byOriginal = shareable.zip(rewritten).toMap
    alternatives.map(a => byOriginal.getOrElse(a, a))
  }
}
