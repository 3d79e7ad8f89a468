package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, BasePredicate, Expression, JoinedRow, NamedExpression, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.plans.{CepMatchCount, CountedPair, CountedRelation, CountedSequence, CountedValue, PartitionKeys}
import org.apache.spark.sql.types._

/**
 * Counts the matches of a SKIP TILL ANY MATCH sequence in each group of its input (rows
 * clustered by `keys`, partition key and time slice, and sorted by ORDER BY position) with
 * a [[MatchCounter]], and writes one row per group that has matches: the partition key
 * columns and the count; with `startColumns`, one row per first row that has matches, with
 * those columns (computed from it) between; then the aggregates of each counted value over
 * those matches. See `CepMatchCount` for the columns.
 */
case class MatchCountExec(
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
    startColumns: Seq[NamedExpression],
    values: Seq[CountedValue],
    pairs: Seq[CountedPair],
    relations: Seq[CountedRelation],
    child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] =
    ((partitionBy ++ startColumns.map(_.toAttribute)) :+ matches) ++ values.flatMap(_.columns)

  override def producedAttributes: AttributeSet =
    AttributeSet((startColumns.map(_.toAttribute) :+ matches) ++ values.flatMap(_.columns))

  override def requiredChildDistribution: Seq[Distribution] = Seq(ClusteredDistribution(keys))

  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq(keys.map(SortOrder(_, Ascending)) :+ SortOrder(order, Ascending))

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def simpleString(maxFields: Int): String =
    CepMatchCount.describe(description, window, startColumns, values, pairs, relations)

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of events read"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of rows out"),
    "matches" -> SQLMetrics.createMetric(sparkContext, "matches counted"))

  override protected def doExecute(): RDD[InternalRow] =
    child.execute().mapPartitionsWithEvaluator(new MatchCountEvaluatorFactory(
        MatchCountTask(child.output, keys, partitionBy, flags, starts, sequence, order, lo, hi, window,
          startColumns, values, pairs, relations, output),
        metrics))

  override protected def withNewChildInternal(c: SparkPlan): MatchCountExec = copy(child = c)
}

/**
 * A row's [[PairKey]]s for one [[CountedPair]]: as its earlier element's row (key) and as
 * its later one's (probe); null when a part is null (the comparison is then not true).
 */
private final class PairKeys(val pair: CountedPair, input: Seq[Attribute]) {
  // Equal under a case- or accent-insensitive collation means equal collation keys.
  private val keyEqual = UnsafeProjection.create(PartitionKeys.comparableValues(pair.keyEqual), input)
  private val probeEqual = UnsafeProjection.create(PartitionKeys.comparableValues(pair.probeEqual), input)
  private val keyRange = pair.keyRange.map(e => UnsafeProjection.create(Seq(e), input))
  private val probeRange = pair.probeRange.map(e => UnsafeProjection.create(Seq(e), input))
  private val rangeType = pair.keyRange.map(_.dataType).orNull

  def key(row: InternalRow): PairKey = of(keyEqual, keyRange, row)

  def probe(row: InternalRow): PairKey = of(probeEqual, probeRange, row)

  // Without equalities every key's equality part is the same empty row: one copy serves all.
  private var noEquality: UnsafeRow = null

  private def of(equal: UnsafeProjection, range: Option[UnsafeProjection], row: InternalRow): PairKey = {
    val e = equal(row)
    if (e.anyNull) null
    else {
      val part =
        if (pair.keyEqual.nonEmpty) e.copy()
        else {
          if (noEquality == null) noEquality = e.copy()
          noEquality
        }
      range match {
        case None => new PairKey(part, 0L)
        case Some(r) =>
          val v = r(row)
          if (v.isNullAt(0)) null else new PairKey(part, MatchCountExec.readLong(v, 0, rangeType))
      }
    }
  }
}

/**
 * The conditions of variables on a match's first row, asked of two input rows: the open
 * START's and the row's (both as the counter was handed them, copies of input rows).
 */
private final class FirstRowRelation(relations: Seq[CountedRelation], input: Seq[Attribute])
  extends StartRelation {
  private val startColumns = input.map(_.newInstance())
  private val tests: Array[BasePredicate] = {
    val byFlag = relations.map { r =>
      val rename = r.first.zip(r.firstOf).map { case (copy, of) =>
        copy.exprId -> startColumns(input.indexWhere(_.exprId == of.exprId))
      }.toMap
      val condition = r.condition.transform { case a: Attribute if rename.contains(a.exprId) => rename(a.exprId) }
      r.flag -> TaskPredicates.compile(condition, startColumns ++ input)
    }.toMap
    Array.tabulate(byFlag.keys.max + 1)(byFlag.get(_).orNull)
  }
  private val joined = new JoinedRow

  override def holds(start: AnyRef, row: AnyRef, variable: Int): Boolean =
    tests(variable).eval(joined(start.asInstanceOf[InternalRow], row.asInstanceOf[InternalRow]))
}

object MatchCountExec {

  /** Value `i` of `row`, of a type [[CountedValue.supports]], as the long the counter keeps. */
  def readLong(row: InternalRow, i: Int, t: DataType): Long = t match {
    case ByteType => row.getByte(i).toLong
    case ShortType => row.getShort(i).toLong
    case IntegerType | DateType => row.getInt(i).toLong
    case _ => row.getLong(i)
  }

  /** A kept long back in the internal form of `t`. */
  def internal(l: Long, t: DataType): Any = t match {
    case ByteType => l.toByte
    case ShortType => l.toShort
    case IntegerType | DateType => l.toInt
    case _ => l
  }
}
