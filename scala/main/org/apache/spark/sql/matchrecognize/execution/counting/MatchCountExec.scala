package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, BasePredicate, BoundReference, Expression, JoinedRow, NamedExpression, Predicate, SortOrder, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{ClusteredDistribution, Distribution, Partitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.plans.CountedSequence
import org.apache.spark.sql.types.LongType

/**
 * Counts the matches of a SKIP TILL ANY MATCH sequence in each group of its input (rows
 * clustered by `keys`, partition key and time slice, and sorted by ORDER BY position) with
 * a [[MatchCounter]], and writes one row per group that has matches: the partition key
 * columns and the count; with `startColumns`, one row per first row that has matches, with
 * those columns (computed from it) between. See `CepMatchCount` for the columns.
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
    child: SparkPlan) extends UnaryExecNode {

  override def output: Seq[Attribute] = (partitionBy ++ startColumns.map(_.toAttribute)) :+ matches

  override def producedAttributes: AttributeSet = AttributeSet(startColumns.map(_.toAttribute) :+ matches)

  override def requiredChildDistribution: Seq[Distribution] = Seq(ClusteredDistribution(keys))

  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    Seq(keys.map(SortOrder(_, Ascending)) :+ SortOrder(order, Ascending))

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def simpleString(maxFields: Int): String =
    s"CepMatchCount $description within $window, counted per first row without building the matches" +
      (if (startColumns.isEmpty) "" else s", by ${startColumns.map(_.name).mkString(", ")} of the first row")

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of events read"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of rows out"),
    "matches" -> SQLMetrics.createMetric(sparkContext, "matches counted"))

  override protected def doExecute(): RDD[InternalRow] = {
    val m = metrics
    child.execute().mapPartitionsInternal { rows =>
      val input = child.output
      val tests = flags.map(f => Predicate.create(f, input)).toArray
      val startTest = Predicate.create(starts, input)
      (tests :+ startTest).foreach(_.initialize(0))
      val width = partitionBy.size + startColumns.size
      val written = UnsafeProjection.create(
        (partitionBy ++ startColumns.map(_.toAttribute)).zipWithIndex.map { case (a, i) =>
          BoundReference(i, a.dataType, a.nullable)
        } :+ BoundReference(width, LongType, nullable = false))
      new GroupCounts(rows, UnsafeProjection.create(keys, input),
        UnsafeProjection.create(partitionBy, input), UnsafeProjection.create(Seq(order, lo, hi), input),
        if (startColumns.isEmpty) null else UnsafeProjection.create(startColumns, input), tests,
        startTest, m, (key, count) => written(new JoinedRow(key, InternalRow(count))).copy())
    }
  }

  /**
   * The output rows of each group: its count, or one per first row with matches (those
   * are handed over as their windows pass, so the rows of a group come out as it is read).
   */
  private final class GroupCounts(rows: Iterator[InternalRow], keyOf: UnsafeProjection,
      partitionOf: UnsafeProjection, positions: UnsafeProjection, startOf: UnsafeProjection,
      tests: Array[BasePredicate], startTest: BasePredicate, m: Map[String, SQLMetric],
      write: (InternalRow, Long) => InternalRow) extends Iterator[InternalRow] {
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
    private val ready = new java.util.ArrayDeque[InternalRow]()

    private def emit(key: InternalRow, count: Long): Unit = {
      m("numOutputRows") += 1
      m("matches") += count
      ready.add(write(key, count))
    }

    private def flush(): Unit = if (peers > 0) {
      counter.addGroup(peers, flagRows, los, his, startRows, if (startOf == null) null else startValues)
      java.util.Arrays.fill(startValues, 0, peers, null)
      peers = 0
    }

    private def finishGroup(): Unit = if (counter != null) {
      flush()
      counter.finish()
      if (startOf == null && counter.matches > 0) emit(partition, counter.matches)
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
        counter = if (startOf == null) new MatchCounter(sequence, window)
        else new MatchCounter(sequence, window,
          (values, count) => emit(new JoinedRow(of, values.asInstanceOf[InternalRow]), count))
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
      }
      val f = new Array[Boolean](tests.length)
      var i = 0
      while (i < tests.length) { f(i) = tests(i).eval(row); i += 1 }
      flagRows(peers) = f
      los(peers) = p.getLong(1)
      his(peers) = p.getLong(2)
      startRows(peers) = startTest.eval(row)
      if (startOf != null && startRows(peers)) startValues(peers) = startOf(row).copy()
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
