package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.{PartitionEvaluator, PartitionEvaluatorFactory}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, Expression, GenericInternalRow, JoinedRow, NamedExpression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.matchrecognize.execution.TaskPredicates
import org.apache.spark.sql.matchrecognize.execution.counting.PrefixAggregates._
import org.apache.spark.sql.matchrecognize.plans.{CountedPair, CountedRelation, CountedSequence, CountedValue, PartitionKeys}

/**
 * What a task of [[MatchCountExec]] needs to count the matches of its groups (see
 * `CepMatchCount` for the columns), without a reference to the plan node.
 *
 * @param input the attributes of the input rows
 * @param keys the columns the rows are grouped by: the partition key, then the time slice
 * @param partitionBy the partition key columns, written with each count
 * @param flags per variable of `sequence`, whether a row passes its own conditions
 * @param starts whether the group may count a match that begins at a row (its time slice owns it)
 * @param order a row's ORDER BY position
 * @param lo a row's first window position
 * @param hi a row's last window position
 * @param startColumns columns of a match's first row, computed from it: one output row per
 *   first row with matches (none: one per group)
 * @param values the values aggregated over the matches
 * @param pairs the conditions of an element on the row of the element before it
 * @param relations the conditions of variables on the match's first row
 * @param output the columns of an output row
 */
final case class MatchCountTask(
    input: Seq[Attribute],
    keys: Seq[Attribute],
    partitionBy: Seq[Attribute],
    flags: Seq[Expression],
    starts: Expression,
    sequence: CountedSequence,
    order: Expression,
    lo: Expression,
    hi: Expression,
    window: Long,
    startColumns: Seq[NamedExpression],
    values: Seq[CountedValue],
    pairs: Seq[CountedPair],
    relations: Seq[CountedRelation],
    output: Seq[Attribute])

/** The per-task part of [[MatchCountExec]]: the iterator of a task's output rows. */
class MatchCountEvaluatorFactory(task: MatchCountTask, metrics: Map[String, SQLMetric])
  extends PartitionEvaluatorFactory[InternalRow, InternalRow] {

  override def createEvaluator(): PartitionEvaluator[InternalRow, InternalRow] =
    new PartitionEvaluator[InternalRow, InternalRow] {
      override def eval(partitionIndex: Int, inputs: Iterator[InternalRow]*): Iterator[InternalRow] =
        new GroupCounts(task, inputs.head, metrics)
    }
}

/**
 * The output rows of each group: its count, or one per first row with matches (those
 * are handed over as their windows pass, so the rows of a group come out as it is read).
 */
private final class GroupCounts(task: MatchCountTask, rows: Iterator[InternalRow],
    metrics: Map[String, SQLMetric])
  extends Iterator[InternalRow] {
  import task._

  // Metrics are looked up once per task: a lookup per row would cost more than the count.
  private val inputRows = metrics("numInputRows")
  private val outputRows = metrics("numOutputRows")
  private val matchesCounted = metrics("matches")
  private val keyOf = UnsafeProjection.create(PartitionKeys.comparable(keys), input)
  private val partitionOf = UnsafeProjection.create(partitionBy, input)
  private val positions = UnsafeProjection.create(Seq(order, lo, hi), input)
  private val startOf = if (startColumns.isEmpty) null else UnsafeProjection.create(startColumns, input)
  private val tests = flags.map(f => TaskPredicates.compile(f, input)).toArray
  private val startTest = TaskPredicates.compile(starts, input)
  private val valuesOf = values.map(v => UnsafeProjection.create(Seq(v.value), input)).toArray
  private val pairKeys = pairs.map(new PairKeys(_, input)).toArray
  private val relation = if (relations.isEmpty) null else new FirstRowRelation(relations, input)
  private val written =
    UnsafeProjection.create(output.zipWithIndex.map { case (a, i) => BoundReference(i, a.dataType, a.nullable) })

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
    outputRows += 1
    matchesCounted += aggregates(COUNT)
    ready.add(written(new JoinedRow(key, aggregateRow(aggregates))).copy())
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
    inputRows += 1
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
