package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{BinaryNode, LogicalPlan, UnaryNode}

// Logical nodes of the join-tree plans of SKIP TILL ANY MATCH. Their inputs are "partial
// matches": rows with the partition key, a time slice, the columns of each bound variable
// and the first (`lo`) and last (`hi`) position of the match in window units.

/** Where a partial match lies: its partition key and slice, and its window span. */
final case class MatchSpan(keys: Seq[Attribute], lo: Attribute, hi: Attribute) {
  def all: Seq[Attribute] = keys :+ lo :+ hi
}

/**
 * Joins partial matches of two sets of variables: same partition key and slice, within
 * the window, under `condition` (ordering of the variables in the pattern and the DEFINE
 * conditions that become evaluable here). Output: the left columns, the right variable
 * columns, and the new span `outLo`/`outHi`.
 *
 * `rightAfter` / `rightBefore` are left columns (positions of left variables) that the
 * pattern order puts at or before / at or after the right side's first row: the right
 * side's `lo` lies between the greatest of the first and the least of the second, which
 * narrows the rows the join tests. A non-empty `rightAfter` also means the output keeps
 * the left side's order by `lo`.
 */
final case class CepSequenceJoin(
    left: LogicalPlan,
    right: LogicalPlan,
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    condition: Expression,
    window: Long,
    outLo: Attribute,
    outHi: Attribute,
    description: String,
    rightAfter: Seq[Attribute] = Nil,
    rightBefore: Seq[Attribute] = Nil) extends BinaryNode {

  override def output: Seq[Attribute] =
    left.output.filterNot(a => a == leftSpan.lo || a == leftSpan.hi) ++
      right.output.filterNot(rightSpan.all.contains) :+ outLo :+ outHi

  override def producedAttributes: AttributeSet = AttributeSet(Seq(outLo, outHi))

  // The spans and band bounds are read too, though they are not expressions of the node.
  override lazy val references: AttributeSet =
    condition.references ++ AttributeSet(leftSpan.all ++ rightSpan.all ++ rightAfter ++ rightBefore)

  override def simpleString(maxFields: Int): String = s"CepSequenceJoin $description"

  override protected def withNewChildrenInternal(l: LogicalPlan, r: LogicalPlan): CepSequenceJoin =
    copy(left = l, right = r)
}

/**
 * Keeps a partial match only if no row of the negated variable lies strictly between
 * `lower` and `upper` (positions in ORDER BY order over the match's columns) — or, when
 * `upper` is absent (a trailing negation), after `lower` and within the window of the
 * match's first row (`leftSpan.lo`: the partial match binds the pattern's first element)
 * — and satisfies `condition` (over the match and the row).
 */
final case class CepNegation(
    left: LogicalPlan,
    right: LogicalPlan,
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    rightOrder: Attribute,
    lower: Expression,
    upper: Option[Expression],
    condition: Option[Expression],
    window: Long,
    description: String) extends BinaryNode {

  override def output: Seq[Attribute] = left.output
  override lazy val references: AttributeSet = AttributeSet(leftSpan.all ++ rightSpan.all :+ rightOrder) ++
    lower.references ++ AttributeSet(upper.toIndexedSeq.flatMap(_.references)) ++
    AttributeSet(condition.toIndexedSeq.flatMap(_.references))
  override def simpleString(maxFields: Int): String = s"CepNegation $description"
  override protected def withNewChildrenInternal(l: LogicalPlan, r: LogicalPlan): CepNegation =
    copy(left = l, right = r)
}

/** What the Kleene closure outputs about its chosen rows (each becomes a column). */
sealed trait KleeneOutput extends Serializable { def attribute: Attribute }
object KleeneOutput {

  /** The value of `cell` at the `n`-th chosen row from the first (or from the last). */
  final case class Value(attribute: Attribute, cell: Attribute, fromFirst: Boolean, n: Int)
    extends KleeneOutput

  /** An aggregate function (over row cells) of the chosen rows. */
  final case class Aggregate(attribute: Attribute,
      function: org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction)
    extends KleeneOutput

  /** The chosen rows themselves (their `cells`, as an array of structs), for ALL ROWS. */
  final case class Rows(attribute: Attribute, cells: Seq[Attribute]) extends KleeneOutput
}

/**
 * Kleene closure `B{min,max}` attached to partial matches that bind its neighbours: each
 * partial match is extended by every key-increasing subset of B rows strictly between the
 * neighbours (`lower`, `upper`, either may be absent), within the window, of size `min` to
 * `max`, whose rows satisfy `rowCondition` (over the match, the row, and `previous`: the
 * row chosen before it). At most `maxBindings` subsets per partial match.
 */
final case class CepKleene(
    left: LogicalPlan,
    right: LogicalPlan,
    leftSpan: MatchSpan,
    rightSpan: MatchSpan,
    rightOrder: Attribute,
    lower: Option[Expression],
    upper: Option[Expression],
    rowCondition: Option[Expression],
    previous: Seq[(Attribute, Attribute)],
    min: Int,
    max: Option[Int],
    outputs: Seq[KleeneOutput],
    firstOrder: Attribute,
    lastOrder: Attribute,
    window: Long,
    outLo: Attribute,
    outHi: Attribute,
    maxBindings: Long,
    description: String) extends BinaryNode {

  override def output: Seq[Attribute] =
    left.output.filterNot(a => a == leftSpan.lo || a == leftSpan.hi) ++
      outputs.map(_.attribute) :+ firstOrder :+ lastOrder :+ outLo :+ outHi

  override def producedAttributes: AttributeSet =
    AttributeSet(outputs.map(_.attribute) ++ Seq(firstOrder, lastOrder, outLo, outHi) ++
      previous.map(_._2))

  override lazy val references: AttributeSet =
    AttributeSet(leftSpan.all ++ rightSpan.all :+ rightOrder) ++
      AttributeSet((lower.toIndexedSeq ++ upper.toIndexedSeq ++ rowCondition.toIndexedSeq).flatMap(_.references)) ++
      AttributeSet(previous.map(_._1)) ++ AttributeSet(outputs.flatMap {
        case KleeneOutput.Value(_, cell, _, _) => Seq(cell)
        case KleeneOutput.Aggregate(_, f) => f.references.toIndexedSeq
        case KleeneOutput.Rows(_, cells) => cells
      }) -- AttributeSet(previous.map(_._2))
  override def simpleString(maxFields: Int): String = s"CepKleene $description"
  override protected def withNewChildrenInternal(l: LogicalPlan, r: LogicalPlan): CepKleene =
    copy(left = l, right = r)
}

/**
 * The rows of one pattern variable out of the input all variables share (`flag` tells
 * which rows pass the variable's own conditions). Spark's optimizer does not look through
 * this node, so every variable's input stays the same plan, which Spark then runs once:
 * one scan and one shuffle for all the leaves of a join tree.
 */
final case class CepRowsOf(variable: String, flag: Expression, child: LogicalPlan)
  extends UnaryNode {
  override def output: Seq[Attribute] = child.output
  // Every column is read, so column pruning keeps the shared input whole under each leaf.
  override lazy val references: AttributeSet = child.outputSet
  override def simpleString(maxFields: Int): String = s"CepRowsOf $variable"
  override protected def withNewChildInternal(c: LogicalPlan): CepRowsOf = copy(child = c)
}

/**
 * Passes matches through, failing the query when one partition key produces more than
 * `maxMatches` matches in one task (an output explosion guard). `reports`: how the plan
 * of each pattern below was chosen (several for a group of patterns planned together,
 * whose `keys` then end with the pattern's number).
 */
final case class CepMatchGuard(child: LogicalPlan, keys: Seq[Attribute], maxMatches: Long,
    reports: Seq[JoinPlanReport]) extends UnaryNode {
  override def output: Seq[Attribute] = child.output
  override lazy val references: AttributeSet = AttributeSet(keys)
  override def simpleString(maxFields: Int): String = s"CepMatchGuard ${JoinPlanReport.summaryOf(reports)}"
  override protected def withNewChildInternal(c: LogicalPlan): CepMatchGuard = copy(child = c)
}

/**
 * How the join trees of a SKIP TILL ANY MATCH plan were chosen: `summary` is the one line
 * EXPLAIN shows; `json` has everything (statistics, each alternative's tree and cost, and
 * the candidates of every algorithm when asked) for `explain_pattern` in Python.
 */
final case class JoinPlanReport(summary: String, json: String)

object JoinPlanReport {

  /** The line EXPLAIN shows for the reports of one pattern, or of each of a group's. */
  def summaryOf(reports: Seq[JoinPlanReport]): String = reports match {
    case Seq(one) => one.summary
    case _ => reports.zipWithIndex.map { case (r, i) => s"pattern ${i + 1}: ${r.summary}" }.mkString(" ‖ ")
  }

  def withoutStatistics(algorithm: String, trees: Seq[String]): JoinPlanReport = JoinPlanReport(
    s"joinOrder=$algorithm ${trees.mkString("; ")}",
    Json.obj("algorithm" -> Json.str(algorithm), "chosen" -> Json.str(algorithm),
      "alternatives" -> Json.arr(trees.map(t => Json.obj("tree" -> Json.str(t))))))
}

/** A few helpers to write JSON text (no library: the report is small and flat). */
object Json {
  def str(s: String): String = {
    val b = new StringBuilder("\"")
    s.foreach {
      case '"' => b ++= "\\\""
      case '\\' => b ++= "\\\\"
      case '\n' => b ++= "\\n"
      case c if c < ' ' => b ++= f"\\u${c.toInt}%04x"
      case c => b += c
    }
    (b += '"').toString
  }
  def num(d: Double): String =
    if (d.isNaN) "null"
    else if (d.isPosInfinity) "1e308"
    else if (d.isNegInfinity) "-1e308"
    else d.toString
  def bool(b: Boolean): String = b.toString
  def arr(items: Seq[String]): String = items.mkString("[", ",", "]")
  def obj(fields: (String, String)*): String =
    fields.map { case (k, v) => s"${str(k)}:$v" }.mkString("{", ",", "}")
}
