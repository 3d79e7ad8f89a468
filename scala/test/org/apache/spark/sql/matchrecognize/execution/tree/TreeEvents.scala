package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, AttributeReference, EqualTo, Expression, LessThan, Literal, NamedExpression}
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeJoinNode, TreeKleeneSpec, TreeLeafNode, TreeLeafSpec, TreeNodeSpec}
import org.apache.spark.sql.types.{IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * The events the one-pass tree suites feed (kind `e`, time `t`, value `v`), WITHIN 10, and
 * each pattern variable's columns over them: its ORDER BY position and its value.
 */
trait TreeEvents {
  protected val kind = AttributeReference("e", StringType)()
  protected val time = AttributeReference("t", LongType, nullable = false)()
  protected val value = AttributeReference("v", IntegerType)()
  protected val input = Seq(kind, time, value)
  protected val window = 10L

  protected def variables: Seq[String]
  protected lazy val cols: Map[String, Seq[NamedExpression]] = variables.map { x =>
    x -> Seq(Alias(time, s"$x#o")(), Alias(value, s"$x#v")())
  }.toMap
  protected def o(x: String): Attribute = cols(x).head.toAttribute
  protected def v(x: String): Attribute = cols(x)(1).toAttribute

  protected def event(e: String, t: Long, x: Int): InternalRow = InternalRow(UTF8String.fromString(e), t, x)

  /** An alternative of `root` over `leaves` with closures `kleenes`, whose output columns are its match's. */
  protected def alternative(leaves: Seq[TreeLeafSpec], root: TreeNodeSpec,
      kleenes: Seq[TreeKleeneSpec] = Nil): TreeAlternative =
    TreeAlternative(leaves, root, Nil, AttributeReference("#lo", LongType)(), AttributeReference("#hi", LongType)(),
      "", Nil, kleenes = kleenes)

  /**
   * The alternative of a sequence of variables (`position`: each one's place) evaluated as
   * `tree`, nested pairs of variable names: each join's condition orders its sides' rows by
   * the sequence, plus `meet` where A and B are on different sides. Also its leaves' variables.
   */
  protected def sequenceAsTree(
      tree: Any, position: Map[String, Int], meet: Expression): (TreeAlternative, Seq[String]) = {
    def vars(t: Any): Seq[String] = t match {
      case s: String => Seq(s)
      case (l, r) => vars(l) ++ vars(r)
    }
    val order = vars(tree)
    val leaves = order.map(x => TreeLeafSpec(x, EqualTo(kind, Literal(x.toLowerCase)), cols(x)))
    def node(t: Any): TreeNodeSpec = t match {
      case s: String => TreeLeafNode(order.indexOf(s))
      case (l, r) =>
        val (ls, rs) = (vars(l), vars(r))
        val ordering = for (x <- ls; y <- rs) yield {
          val (a, b) = if (position(x) < position(y)) (x, y) else (y, x)
          LessThan(o(a), o(b)): Expression
        }
        val meets = (ls.contains("A") && rs.contains("B")) || (ls.contains("B") && rs.contains("A"))
        val cond = if (meets) ordering :+ meet else ordering
        val dir = if (ls.forall(x => rs.forall(y => position(x) < position(y)))) 1
        else if (rs.forall(y => ls.forall(x => position(y) < position(x)))) -1
        else 0
        TreeJoinNode(node(l), node(r), cond.reduce(And), dir, s"$l$r")
    }
    (alternative(leaves, node(tree)), order)
  }

  /** The evaluator of one alternative alone, WITHIN 10 (its emits: one, the alternative's). */
  protected def evaluatorOf(a: TreeAlternative, maxBuffered: Long = Long.MaxValue): TreeGraphEvaluator =
    new TreeGraphEvaluator(Seq(a), Seq(window), input, time, time, time, narrowByOrder = true, maxBuffered)
}
