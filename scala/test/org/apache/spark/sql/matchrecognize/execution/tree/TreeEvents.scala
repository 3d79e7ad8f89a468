package org.apache.spark.sql.matchrecognize.execution.tree

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeReference, NamedExpression}
import org.apache.spark.sql.matchrecognize.plans.{TreeAlternative, TreeKleeneSpec, TreeLeafSpec, TreeNodeSpec}
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

  /** The evaluator of one alternative alone, WITHIN 10 (its emits: one, the alternative's). */
  protected def evaluatorOf(a: TreeAlternative, maxBuffered: Long = Long.MaxValue): TreeGraphEvaluator =
    new TreeGraphEvaluator(Seq(a), Seq(window), input, time, time, time, narrowByOrder = true, maxBuffered)
}
