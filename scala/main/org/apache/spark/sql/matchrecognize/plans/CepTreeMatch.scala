package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression, NamedExpression, ScalarSubquery}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}

/**
 * A leaf of a one-pass tree: the input rows `enter` admits as rows of `variable`, each
 * projected to `columns` (the variable's cells and its ORDER BY and window positions).
 */
final case class TreeLeafSpec(variable: String, enter: Expression, columns: Seq[NamedExpression]) {
  def map(f: Expression => Expression): TreeLeafSpec =
    copy(enter = f(enter), columns = columns.map(f(_).asInstanceOf[NamedExpression]))
}

/** A node of a one-pass tree: a leaf (by index into the leaves) or the join of two subtrees. */
sealed trait TreeNodeSpec extends Serializable {
  def leafIndexes: Seq[Int]
  def map(f: Expression => Expression): TreeNodeSpec = this match {
    case j: TreeJoinNode => j.copy(left = j.left.map(f), right = j.right.map(f), condition = f(j.condition))
    case leaf => leaf
  }
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
 * first row, so a match is held until that window has passed. With `afterClosures` (a
 * Kleene closure next to it, whose chosen rows bound it, or read by its condition) it is checked on
 * each complete match once every closure has extended it, over the match's columns and
 * the closures' (`at` is then the root).
 */
final case class TreeNegationSpec(leaf: TreeLeafSpec, at: TreeNodeSpec, lower: Expression,
    upper: Option[Expression], condition: Option[Expression], afterClosures: Boolean = false) {
  def map(f: Expression => Expression): TreeNegationSpec = copy(leaf = leaf.map(f), at = at.map(f),
    lower = f(lower), upper = upper.map(f), condition = condition.map(f))
}

/**
 * A Kleene closure `B{min,max}` of a one-pass tree, applied to the tree's complete matches:
 * each is extended by every subset of the rows `leaf` admits, increasing in ORDER BY
 * position, that lie strictly between `lower` and `upper` (ORDER BY positions over the
 * match's columns; absent at the pattern's ends) within the window, of `min` to `max`
 * rows, each passing `rowCondition` (over the match's columns, the row's, then the
 * `previous` cells of the row chosen before it: `LAST(B.x, 1)`). An extended match gets
 * `columns`: the `outputs` over its chosen rows and their first and last ORDER BY
 * positions. Without `upper` (a closure that ends the pattern) rows may come after the
 * match until the window of its first row has passed, so the match waits until then. More
 * than `maxBindings` subsets for one match fails the query.
 */
final case class TreeKleeneSpec(
    leaf: TreeLeafSpec,
    min: Int,
    max: Option[Int],
    lower: Option[Expression],
    upper: Option[Expression],
    rowCondition: Option[Expression],
    previous: Seq[(Attribute, Attribute)],
    outputs: Seq[KleeneOutput],
    firstOrder: Attribute,
    lastOrder: Attribute,
    maxBindings: Long,
    description: String) {
  def columns: Seq[Attribute] = outputs.map(_.attribute) :+ firstOrder :+ lastOrder

  /** The same closure with its expressions rewritten by `f` (its outputs read cells only). */
  def map(f: Expression => Expression): TreeKleeneSpec = copy(leaf = leaf.map(f),
    lower = lower.map(f), upper = upper.map(f), rowCondition = rowCondition.map(f))
}

/**
 * One alternative of a one-pass evaluation: its leaves, tree, negations and Kleene
 * closures (applied in their order, those without an upper neighbour last). Its matches
 * have the columns `schema(keys)`: the keys, every leaf's columns (in leaf order), each
 * closure's columns and the match's span `outLo` / `outHi`, the same columns the join
 * operators of the tree produce; a match is kept when `postCondition` (the conditions that
 * read closures) holds over them and, when the pattern starts with a closure, `keep` (the
 * time slice owning its first row); `columns` computes the operator's output from them.
 * `window`: its own window, in a group of patterns of different windows (otherwise the
 * operator's).
 * `perKey`: other trees of the same alternative that groups of rows may be evaluated with
 * instead (the first alternative of an operator only).
 */
final case class TreeAlternative(
    leaves: Seq[TreeLeafSpec],
    root: TreeNodeSpec,
    negations: Seq[TreeNegationSpec],
    outLo: Attribute,
    outHi: Attribute,
    description: String,
    columns: Seq[NamedExpression],
    kleenes: Seq[TreeKleeneSpec] = Nil,
    postCondition: Option[Expression] = None,
    keep: Option[Expression] = None,
    window: Option[Long] = None,
    perKey: Option[TreesPerKey] = None) {

  /**
   * Whether the tree's nodes are all the alternative checks (no negation, closure or
   * condition on closures): its nodes can then be shared with other trees.
   */
  def checksOnlyItsTree: Boolean = negations.isEmpty && kleenes.isEmpty && postCondition.isEmpty

  /** The columns of a match before the keys and span: the leaves', then the closures'. */
  def matchColumns: Seq[Attribute] =
    root.leafIndexes.flatMap(i => leaves(i).columns.map(_.toAttribute)) ++ kleenes.flatMap(_.columns)

  def schema(keys: Seq[Attribute]): Seq[Attribute] = keys ++ matchColumns :+ outLo :+ outHi

  def produced: Seq[Attribute] =
    leaves.flatMap(_.columns.map(_.toAttribute)) ++ kleenes.flatMap(_.columns) :+ outLo :+ outHi

  /** The same alternative with every expression rewritten by `f`. */
  def map(f: Expression => Expression): TreeAlternative = copy(
    leaves = leaves.map(_.map(f)),
    root = root.map(f),
    negations = negations.map(_.map(f)),
    columns = columns.map(f(_).asInstanceOf[NamedExpression]),
    kleenes = kleenes.map(_.map(f)),
    postCondition = postCondition.map(f),
    keep = keep.map(f),
    perKey = perKey.map(_.map(f)))

  /**
   * The (uncorrelated) scalar subqueries of the conditions the tree evaluates itself (an IN
   * or EXISTS subquery of DEFINE is one by then): the operator runs them before its tasks
   * start and gives the tasks their values.
   */
  def subqueries: Seq[ScalarSubquery] = {
    val found = Seq.newBuilder[ScalarSubquery]
    map { e => e.foreach { case s: ScalarSubquery => found += s; case _ => }; e }
    found.result()
  }
}

/**
 * Evaluates the trees of SKIP TILL ANY MATCH alternatives in one pass over the rows of each
 * group (`keys`: partition key and time slice), delivered in ORDER BY order (`order`: the
 * row's ORDER BY position; `lo` / `hi`: its first and last window position): one sort for
 * all of them. Every alternative's `columns` have the same output attributes. (They are
 * kept inside the alternatives, out of reach of the optimizer's expression rules, which
 * would not keep the alternatives' outputs alike.)
 */
final case class CepTreeMatch(
    child: LogicalPlan,
    keys: Seq[Attribute],
    alternatives: Seq[TreeAlternative],
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    narrowByOrder: Boolean,
    maxBuffered: Long) extends UnaryNode {

  override def output: Seq[Attribute] = alternatives.head.columns.map(_.toAttribute)

  override def producedAttributes: AttributeSet =
    AttributeSet(alternatives.flatMap(_.produced) ++ output)

  // Every column is read: the leaves' expressions are not visible to column pruning.
  override lazy val references: AttributeSet = child.outputSet

  def description: String = alternatives.map(_.description).mkString(" ∪ ")

  override def simpleString(maxFields: Int): String = s"CepTreeMatch $description"

  override protected def withNewChildInternal(c: LogicalPlan): CepTreeMatch = copy(child = c)
}

object CepTreeMatch {

  /** One alternative, whose output is its matches' columns. */
  def single(child: LogicalPlan, keys: Seq[Attribute], alternative: TreeAlternative,
      order: Expression, lo: Expression, hi: Expression, window: Long, narrowByOrder: Boolean,
      maxBuffered: Long): CepTreeMatch =
    CepTreeMatch(child, keys, Seq(alternative.copy(columns = alternative.schema(keys))), order,
      lo, hi, window, narrowByOrder, maxBuffered)
}
