package org.apache.spark.sql.matchrecognize.plans

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, Expression, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, UnaryNode}
import org.apache.spark.sql.types._

/**
 * Counts the matches of a SKIP TILL ANY MATCH sequence over the rows of each group (`keys`:
 * partition key and time slice), delivered in ORDER BY order, without building them (see
 * `MatchCounter`): one row per group with matches, its partition key columns and
 * `matches`; with `startColumns` (columns of a match's first row, computed from that row),
 * one row per first row with matches instead, with those columns between; then each counted
 * value's aggregates over those matches (see [[CountedValue]]). `flags(i)` tells whether a
 * row passes the own conditions of the sequence's variable i, `starts` whether the group may count a match that begins at the row (its time
 * slice owns it); `order`, `lo` and `hi` are its ORDER BY and window positions.
 */
final case class CepMatchCount(
    child: LogicalPlan,
    keys: Seq[Attribute],
    partitionBy: Seq[Attribute],
    flags: Seq[Expression],
    starts: Expression,
    sequence: CountedSequence,
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    matches: Attribute,
    description: String,
    firstRow: FirstRowColumns = FirstRowColumns(Nil),
    counted: CountedValues = CountedValues(Nil),
    related: CountedPairs = CountedPairs(Nil),
    toFirstRow: CountedRelations = CountedRelations(Nil)) extends UnaryNode {

  def startColumns: Seq[NamedExpression] = firstRow.columns

  def values: Seq[CountedValue] = counted.values

  def pairs: Seq[CountedPair] = related.pairs

  def relations: Seq[CountedRelation] = toFirstRow.relations

  override def output: Seq[Attribute] =
    ((partitionBy ++ startColumns.map(_.toAttribute)) :+ matches) ++ values.flatMap(_.columns)

  override def producedAttributes: AttributeSet =
    AttributeSet((startColumns.map(_.toAttribute) :+ matches) ++ values.flatMap(_.columns))

  // The first row's columns are read too, out of sight of column pruning (see FirstRowColumns).
  override lazy val references: AttributeSet = child.outputSet

  override def simpleString(maxFields: Int): String = CepMatchCount.describe(description, window,
    startColumns, values, pairs, relations)

  override protected def withNewChildInternal(c: LogicalPlan): CepMatchCount = copy(child = c)
}

/**
 * The columns [[CepMatchCount]] computes from a match's first row, kept out of reach of the
 * optimizer's expression rules (which would take their aliases apart): they are the
 * node's output columns, named and numbered as the measures they replace.
 */
final case class FirstRowColumns(columns: Seq[NamedExpression])

object CepMatchCount {
  def describe(description: String, window: Long, startColumns: Seq[NamedExpression],
      values: Seq[CountedValue], pairs: Seq[CountedPair], relations: Seq[CountedRelation]): String =
    s"CepMatchCount $description within $window, counted per first row without building the matches" +
      pairs.map(p => s", ${p.earlier} rows kept per key for ${p.later}").mkString +
      (if (relations.isEmpty) ""
       else s", ${relations.map(_.variable).mkString(", ")} checked against each first row") +
      (if (startColumns.isEmpty) "" else s", by ${startColumns.map(_.name).mkString(", ")} of the first row") +
      (if (values.isEmpty) ""
       else s", aggregating ${values.map(_.describe).mkString(", ")} over the matches")
}

/**
 * A value of the row a counted sequence's element `element` binds (a measure of a later
 * row; of a closure, of its last chosen row, or its first when `fromFirst`), aggregated over
 * the matches as they are counted: its sum when `summed`, how many matches have it (not
 * null), its least and greatest; the columns `sum`, `present`, `least` and `greatest` (the
 * sum and the extremes null when no match has it).
 */
final case class CountedValue(element: Int, variable: String, value: Expression, summed: Boolean,
    sum: Attribute, present: Attribute, least: Attribute, greatest: Attribute, fromFirst: Boolean = false) {
  def columns: Seq[Attribute] = Seq(sum, present, least, greatest)

  def describe: String = s"${value.sql} of ${if (fromFirst) "the first " else ""}$variable"
}

object CountedValue {

  /** The types a value can have: those the counter keeps in a long and compares as one. */
  def supports(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  /** Whether a sum of the value is exact in a long (an integer, not a date or a time). */
  def summable(t: DataType): Boolean = t.isInstanceOf[IntegralType]
}

/** The [[CountedValue]]s of a count, kept out of reach of the optimizer's expression rules. */
final case class CountedValues(values: Seq[CountedValue])

/**
 * The DEFINE conditions between neighbouring single-row elements `element` (variable
 * `earlier`) and `element + 1` (`later`) of a counted sequence: the earlier row's prefixes
 * are kept per key (`keyEqual` values, then `keyRange`), and a later row extends those
 * whose key equals its probe (`probeEqual`) and whose range key relates to its own
 * (`probeRange`) as `code` says (a `CountedSequence.Pair` code). Expressions over the
 * count's input rows.
 */
final case class CountedPair(element: Int, earlier: String, later: String, code: Int,
    keyEqual: Seq[Expression], probeEqual: Seq[Expression], keyRange: Option[Expression],
    probeRange: Option[Expression])

/** The [[CountedPair]]s of a count, kept out of reach of the optimizer's expression rules. */
final case class CountedPairs(pairs: Seq[CountedPair])

/**
 * The DEFINE conditions of variable `variable` (flag `flag` of the count) on a match's first
 * row: `condition` over that row's columns `firstOf`, renamed `first`, and the count's
 * input row; asked of each open first row for each row of the variable.
 */
final case class CountedRelation(variable: String, flag: Int, condition: Expression,
    first: Seq[Attribute], firstOf: Seq[Attribute])

/** The [[CountedRelation]]s of a count, kept out of reach of the optimizer's expression rules. */
final case class CountedRelations(relations: Seq[CountedRelation])
