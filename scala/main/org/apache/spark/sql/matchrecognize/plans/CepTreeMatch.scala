package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * A leaf of a one-pass tree: the input rows `enter` admits as rows of `variable`, each
 * projected to `columns` (the variable's cells and its ORDER BY and window positions).
 */
final case class TreeLeafSpec(variable: String, enter: Expression, columns: Seq[NamedExpression])

/** A node of a one-pass tree: a leaf (by index into the leaves) or the join of two subtrees. */
sealed trait TreeNodeSpec extends Serializable {
  def leafIndexes: Seq[Int]
}

final case class TreeLeafNode(leaf: Int) extends TreeNodeSpec {
  def leafIndexes: Seq[Int] = Seq(leaf)
}

/**
 * Joins the partial matches of two subtrees under `condition` (over the left subtree's
 * columns then the right one's). `order` is 1 when the pattern puts every variable of the
 * right subtree after every variable of the left one, -1 when before, 0 otherwise: the
 * buffers are then probed only where the order lets a partner lie.
 */
final case class TreeJoinNode(left: TreeNodeSpec, right: TreeNodeSpec, condition: Expression,
    order: Int, description: String) extends TreeNodeSpec {
  def leafIndexes: Seq[Int] = left.leafIndexes ++ right.leafIndexes
}

/**
 * A negation `!variable` of a one-pass tree, checked on the partial matches of node `at`,
 * which binds its neighbours: one is dropped when a row `leaf` admits lies strictly between
 * `lower` and `upper` (ORDER BY positions, over the node's columns) and passes `condition`
 * (over the node's columns, then the row's). Without `upper` (a trailing negation, checked
 * at the root) the row may lie anywhere after `lower` within the window of the match's
 * first row, so a match is held until that window has passed.
 */
final case class TreeNegationSpec(leaf: TreeLeafSpec, at: TreeNodeSpec, lower: Expression,
    upper: Option[Expression], condition: Option[Expression])

/**
 * Evaluates a whole SKIP TILL ANY MATCH tree of one alternative in one pass over the rows
 * of each group (`keys`: partition key and time slice), delivered in ORDER BY order
 * (`order`: the row's ORDER BY position; `lo` / `hi`: its first and last window position).
 * Outputs every match: the keys, every leaf's columns (in leaf order) and the match's span
 * `outLo` / `outHi`, the same columns the join operators of the tree would produce.
 */
final case class CepTreeMatch(
    child: LogicalPlan,
    keys: Seq[Attribute],
    leaves: Seq[TreeLeafSpec],
    root: TreeNodeSpec,
    negations: Seq[TreeNegationSpec],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long,
    outLo: Attribute,
    outHi: Attribute,
    description: String) extends UnaryNode {

  override def output: Seq[Attribute] =
    keys ++ root.leafIndexes.flatMap(i => leaves(i).columns.map(_.toAttribute)) :+ outLo :+ outHi

  override def producedAttributes: AttributeSet =
    AttributeSet(leaves.flatMap(_.columns.map(_.toAttribute)) :+ outLo :+ outHi)

  // Every column is read: the leaves' expressions are not visible to column pruning.
  override def references: AttributeSet = child.outputSet

  override def simpleString(maxFields: Int): String = s"CepTreeMatch $description"

  override protected def withNewChildInternal(c: LogicalPlan): CepTreeMatch = copy(child = c)
}
