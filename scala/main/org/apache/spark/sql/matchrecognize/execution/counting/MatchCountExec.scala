package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, BasePredicate, BoundReference, Expression, GenericInternalRow, JoinedRow, NamedExpression, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.execution.counting.PrefixAggregates._
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

  override protected def doExecute(): RDD[InternalRow] = {
    val m = metrics
    child.execute().mapPartitionsInternal { rows =>
      val input = child.output
      val tests = flags.map(f => TaskPredicates.compile(f, input)).toArray
      val startTest = TaskPredicates.compile(starts, input)
      val columns = partitionBy ++ startColumns.map(_.toAttribute) ++ (matches +: values.flatMap(_.columns))
      val written = UnsafeProjection.create(columns.zipWithIndex.map { case (a, i) =>
        BoundReference(i, a.dataType, a.nullable)
      })
      new GroupCounts(rows, UnsafeProjection.create(PartitionKeys.comparable(keys), input),
        UnsafeProjection.create(partitionBy, input), UnsafeProjection.create(Seq(order, lo, hi), input),
        if (startColumns.isEmpty) null else UnsafeProjection.create(startColumns, input), tests,
        startTest, values.map(v => UnsafeProjection.create(Seq(v.value), input)).toArray,
        pairs.map(new PairKeys(_, input)).toArray,
        if (relations.isEmpty) null else new FirstRowRelation(relations, input), m,
        (key, aggregates) => written(new JoinedRow(key, aggregateRow(aggregates))).copy())
    }
  }

  /** The count and each value's sum, matches with it, least and greatest, as output columns. */
  private def aggregateRow(aggregates: Array[Long]): InternalRow = {
    val row = new GenericInternalRow(1 + values.size * VALUE)
    row.setLong(0, aggregates(COUNT))
    values.zipWithIndex.foreach { case (v, t) =>
      val at = 1 + t * VALUE
      val present = aggregates(at + PRESENT)
      def extreme(i: Int): Any =
        if (present == 0) null else MatchCountExec.internal(aggregates(at + i), v.value.dataType)
      row.update(at + SUM, if (present == 0 || !v.summed) null else aggregates(at + SUM))
      row.setLong(at + PRESENT, present)
      row.update(at + LEAST, extreme(LEAST))
      row.update(at + GREATEST, extreme(GREATEST))
    }
    row
  }

  /**
   * The output rows of each group: its count, or one per first row with matches (those
   * are handed over as their windows pass, so the rows of a group come out as it is read).
   */
  private final class GroupCounts(rows: Iterator[InternalRow], keyOf: UnsafeProjection,
      partitionOf: UnsafeProjection, positions: UnsafeProjection, startOf: UnsafeProjection,
      tests: Array[BasePredicate], startTest: BasePredicate, valuesOf: Array[UnsafeProjection],
      pairKeys: Array[PairKeys], relation: FirstRowRelation, m: Map[String, SQLMetric],
      write: (InternalRow, Array[Long]) => InternalRow)
    extends Iterator[InternalRow] {
    private var key: UnsafeRow = null
    private var partition: UnsafeRow = null
    private var counter: MatchCounter = null
    // The ORDER BY peers not yet added: their flags, positions and first-row columns.
    private var peers = 0
    private var peerOrder = 0L
    private var flagRows = new Array[Array[Boolean]](16)
    private var los = new Array[Long](16)
    private var his = new Array[Long](16)
    private var startRows = new Array[Boolean](16)
    private var startValues = new Array[AnyRef](16)
    private var valueRows = new Array[Array[Long]](16)
    private var presentRows = new Array[Array[Boolean]](16)
    private var keyRows = new Array[Array[PairKey]](16)
    private var probeRows = new Array[Array[PairKey]](16)
    private var copies = new Array[AnyRef](16)
    private val relatedFlags = sequence.fromStart.toArray
    private val types = values.map(_.value.dataType).toArray
    // The flag of the element each value is read from: a value is computed only on its rows.
    private val valueFlags = sequence.valueElements.map(sequence.elements).toArray
    private val ready = new java.util.ArrayDeque[InternalRow]()

    private def emit(key: InternalRow, aggregates: Array[Long]): Unit = {
      m("numOutputRows") += 1
      m("matches") += aggregates(COUNT)
      ready.add(write(key, aggregates))
    }

    private def flush(): Unit = if (peers > 0) {
      counter.addGroup(peers, flagRows, los, his, startRows, if (startOf == null) null else startValues,
        if (types.isEmpty) null else valueRows, if (types.isEmpty) null else presentRows,
        if (pairKeys.isEmpty) null else keyRows, if (pairKeys.isEmpty) null else probeRows,
        if (relation == null) null else copies)
      if (relation != null) java.util.Arrays.fill(copies, 0, peers, null)
      java.util.Arrays.fill(startValues, 0, peers, null)
      peers = 0
    }

    private def finishGroup(): Unit = if (counter != null) {
      flush()
      counter.finish()
      if (startOf == null && counter.matches > 0) emit(partition, counter.aggregates)
      counter = null
    }

    private def add(row: InternalRow): Unit = {
      m("numInputRows") += 1
      val k = keyOf(row)
      if (key == null || k != key) {
        finishGroup()
        key = k.copy()
        partition = partitionOf(row).copy()
        val of = partition
        counter = if (startOf == null) new MatchCounter(sequence, window, null, relation)
        else new MatchCounter(sequence, window,
          (first, aggregates) => emit(new JoinedRow(of, first.asInstanceOf[InternalRow]), aggregates), relation)
      }
      val p = positions(row)
      val o = p.getLong(0)
      if (peers > 0 && o != peerOrder) flush()
      if (peers == flagRows.length) {
        flagRows = java.util.Arrays.copyOf(flagRows, peers * 2)
        los = java.util.Arrays.copyOf(los, peers * 2)
        his = java.util.Arrays.copyOf(his, peers * 2)
        startRows = java.util.Arrays.copyOf(startRows, peers * 2)
        startValues = java.util.Arrays.copyOf(startValues, peers * 2)
        valueRows = java.util.Arrays.copyOf(valueRows, peers * 2)
        presentRows = java.util.Arrays.copyOf(presentRows, peers * 2)
        keyRows = java.util.Arrays.copyOf(keyRows, peers * 2)
        probeRows = java.util.Arrays.copyOf(probeRows, peers * 2)
        copies = java.util.Arrays.copyOf(copies, peers * 2)
      }

      // A peer slot's arrays are reused from group to group: the counter reads them only
      // while it adds the group.
      if (flagRows(peers) == null) flagRows(peers) = new Array[Boolean](tests.length)
      val f = flagRows(peers)
      var i = 0
      while (i < tests.length) { f(i) = tests(i).eval(row); i += 1 }
      los(peers) = p.getLong(1)
      his(peers) = p.getLong(2)
      startRows(peers) = startTest.eval(row)
      // The row itself, when it may be a first row or a condition relates it to one.
      if (relation != null && (startRows(peers) && f(sequence.elements(0)) || relatedFlags.exists(f(_)))) {
        copies(peers) = row.copy()
      }
      // Computed only on the rows that can bind their element (a measure may fail on others).
      if (startOf != null && startRows(peers) && f(sequence.elements(0))) startValues(peers) = startOf(row).copy()
      if (types.nonEmpty) {
        if (valueRows(peers) == null) {
          valueRows(peers) = new Array[Long](types.length)
          presentRows(peers) = new Array[Boolean](types.length)
        }
        val longs = valueRows(peers)
        val present = presentRows(peers)
        var t = 0
        while (t < types.length) {
          if (f(valueFlags(t))) {
            val v = valuesOf(t)(row)
            present(t) = !v.isNullAt(0)
            if (present(t)) longs(t) = MatchCountExec.readLong(v, 0, types(t))
          } else present(t) = false
          t += 1
        }
      }
      if (pairKeys.nonEmpty) {
        if (keyRows(peers) == null) {
          keyRows(peers) = new Array[PairKey](sequence.length)
          probeRows(peers) = new Array[PairKey](sequence.length)
        }
        val keys = keyRows(peers)
        val probes = probeRows(peers)
        java.util.Arrays.fill(keys.asInstanceOf[Array[AnyRef]], null)
        java.util.Arrays.fill(probes.asInstanceOf[Array[AnyRef]], null)
        pairKeys.foreach { k =>
          val j = k.pair.element
          if (f(sequence.elements(j))) keys(j) = k.key(row)
          if (f(sequence.elements(j + 1))) probes(j) = k.probe(row)
        }
      }
      peerOrder = o
      peers += 1
    }

    override def hasNext: Boolean = {
      while (ready.isEmpty && rows.hasNext) add(rows.next())
      if (ready.isEmpty) finishGroup()
      !ready.isEmpty
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      ready.poll()
    }
  }

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
