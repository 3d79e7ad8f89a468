package org.apache.spark.sql.matchrecognize.optimizer

import scala.util.Random

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Alias, AttributeReference, BoundReference, CreateStruct, Expression, IsNotNull, Literal, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.aggregate.{Count, CountIf, HyperLogLogPlusPlus, Max, Min}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, Limit, LocalRelation, LogicalPlan, Sample}
import org.apache.spark.sql.matchrecognize.compile.anymatch.SampleLayout
import org.apache.spark.sql.types.IntegerType

/**
 * A bounded, seeded sample of a plan's rows for statistics: contiguous blocks read from the
 * start of up to [[InputSample.MaxBlocks]] partitions picked by a seeded draw. Blocks keep
 * each partition key's rows next to each other in ORDER BY order as the input has them, so
 * rates per unit of time can be measured inside a block. Reading stops after the block:
 * the cost is bounded by `rows`, not by the input's size (plus whatever the plan computes
 * before its first rows, e.g. a shuffle below it).
 *
 * The result is a local relation with the input's columns and `block`, the block number,
 * which the statistics treat as one more partition key.
 */
object InputSample {

  val MaxBlocks = 4

  /**
   * `inOrder`: the share of consecutive sampled rows (within a block, in storage order)
   * whose `order` value does not decrease; about 1 when the input is stored in time order,
   * about 1/2 when it is stored in random order.
   */
  final case class Sampled(relation: LocalRelation, block: AttributeReference, rows: Int,
      blocks: Int, inOrder: Double)

  /** Below this share of ordered neighbours a block is a scattered subset of its time span. */
  val OrderedShare = 0.9

  def draw(session: SparkSession, child: LogicalPlan, rows: Int, seed: Long,
      order: Option[Expression] = None): Sampled = {
    val rdd = session.sessionState.executePlan(child).toRdd
    val parts = rdd.getNumPartitions
    val chosen = new Random(seed).shuffle((0 until parts).toList).take(MaxBlocks)
    val perBlock = if (chosen.isEmpty) 0 else (rows + chosen.size - 1) / chosen.size
    val blocks = withDescription(session, s"MATCH_RECOGNIZE statistics: sample of $rows rows") {
      if (chosen.isEmpty) Array.empty[Array[InternalRow]]
      else session.sparkContext.runJob(rdd,
        (it: Iterator[InternalRow]) => it.take(perBlock).map(_.copy()).toArray, chosen)
    }
    asSample(child, blocks.toIndexedSeq, order.map(inOrder(blocks, _, child)).getOrElse(1.0))
  }

  /** Blocks of `child`'s rows as a local relation with the block number as a column. */
  private def asSample(child: LogicalPlan, blocks: Seq[Array[InternalRow]],
      inOrder: Double): Sampled = {
    val block = AttributeReference("#block", IntegerType, nullable = false)()
    val columns = child.output.zipWithIndex.map { case (a, i) =>
      BoundReference(i, a.dataType, a.nullable)
    }
    val data = blocks.zipWithIndex.flatMap { case (rs, b) =>
      val project = UnsafeProjection.create(columns :+ Literal(b))
      rs.map(r => project(r).copy(): InternalRow)
    }
    Sampled(LocalRelation(child.output :+ block, data), block, data.length,
      blocks.count(_.nonEmpty), inOrder)
  }

  /**
   * The sample statistics use: contiguous blocks; or, when `time` is given and the blocks
   * show the input is not stored in time order, a sample spread over the input together
   * with the input's density (rows per key per unit of `time`).
   */
  def forStatistics(session: SparkSession, child: LogicalPlan, keys: Seq[Expression],
      rows: Int, seed: Long, time: Option[Expression]): (Sampled, Option[Double]) = {
    val blocks = draw(session, child, rows, seed, time)
    if (time.isEmpty || blocks.rows == 0 || blocks.inOrder >= OrderedShare) (blocks, None)
    else inputStats(session, child, keys, time.get) match {
      case Some(st) => (spread(session, child, rows, seed, st.rows), Some(st.perKeyPerUnit))
      case None => (blocks, None)
    }
  }

  private def inOrder(blocks: Array[Array[InternalRow]], order: Expression,
      child: LogicalPlan): Double = {
    val key = UnsafeProjection.create(Seq(order), child.output)
    var pairs, ordered = 0L
    blocks.foreach { rs =>
      var previous: Option[Long] = None
      rs.foreach { r =>
        val k = key(r)
        if (!k.isNullAt(0)) {
          val v = k.getLong(0)
          previous.foreach { p => pairs += 1; if (v >= p) ordered += 1 }
          previous = Some(v)
        }
      }
    }
    if (pairs == 0) 1.0 else ordered.toDouble / pairs
  }

  /** The input's rows, and its rows per partition key per unit of the order key. */
  final case class InputStats(rows: Long, perKeyPerUnit: Double)

  /**
   * Rows per partition key per unit of `order` over the whole input: its row count over
   * (keys x the span of `order`), by one aggregate over the input (it reads the key and
   * order columns only). For inputs not stored in ORDER BY order, where a sampled block
   * is spread over the whole span and so cannot give the density itself.
   */
  def inputStats(session: SparkSession, child: LogicalPlan, keys: Seq[Expression],
      order: Expression): Option[InputStats] = {
    val present = Filter(IsNotNull(order), child)
    val distinctKeys: Expression =
      if (keys.isEmpty) Literal(1L)
      else HyperLogLogPlusPlus(if (keys.size == 1) keys.head else CreateStruct(keys))
        .toAggregateExpression()
    val aggregate = Aggregate(Nil,
      Seq(
        Alias(Count(Literal(1)).toAggregateExpression(), "n")(),
        Alias(Min(order).toAggregateExpression(), "lo")(),
        Alias(Max(order).toAggregateExpression(), "hi")(),
        Alias(distinctKeys, "keys")()), present)
    val row = withDescription(session,
      "MATCH_RECOGNIZE statistics: input density (input " +
        "not stored in ORDER BY order)") {
      session.sessionState.executePlan(aggregate).executedPlan.executeCollect().head
    }
    val n = row.getLong(0)
    if (n < 2 || row.isNullAt(1)) None
    else {
      val span = math.max(1.0, (row.getLong(2) - row.getLong(1)).toDouble * n / (n - 1))
      Some(InputStats(n, n / (math.max(1L, row.getLong(3)) * span)))
    }
  }

  /** How many rows of the whole input pass each variable's own conditions, of how many. */
  final case class PassingCounts(perVariable: Map[String, Long], rows: Long)

  /**
   * Counts, by one aggregate over the whole input laid out as `layout` (the statistics
   * sample's layout, over the real input), the rows passing each variable's own
   * conditions. A sample spread over an input of millions of rows holds a handful of the
   * rows of a rare variable, or none, so its arrival rate would be mostly noise; for inputs
   * not stored in time order, which are read whole for the sample anyway.
   */
  def passingCounts(session: SparkSession, layout: SampleLayout): PassingCounts = {
    val vars = layout.flags.keys.toIndexedSeq.sorted
    val aggregate = Aggregate(Nil,
      Alias(Count(Literal(1)).toAggregateExpression(), "n")() +:
        vars.map(v => Alias(CountIf(layout.flags(v)).toAggregateExpression(), v)()),
      layout.plan)
    val row = withDescription(session,
      "MATCH_RECOGNIZE statistics: rows per pattern " +
        "variable (input not stored in ORDER BY order)") {
      session.sessionState.executePlan(aggregate).executedPlan.executeCollect().head
    }
    PassingCounts(vars.zipWithIndex.map { case (v, i) => v -> row.getLong(i + 1) }.toMap,
      row.getLong(0))
  }

  /**
   * About `rows` rows drawn uniformly (seeded Bernoulli sampling) from the whole input of
   * `total` rows, as one block: for inputs not stored in time order, whose blocks may hold
   * the rows of a few values only (a table written grouped by symbol, say). It reads the
   * whole input, as [[inputStats]] already does in that case.
   */
  def spread(session: SparkSession, child: LogicalPlan, rows: Int, seed: Long,
      total: Long): Sampled = {
    val fraction = math.min(1.0, rows.toDouble / math.max(1L, total))
    val plan = Limit(Literal(rows), Sample(0.0, fraction, withReplacement = false, seed, child))
    val data = withDescription(session,
      s"MATCH_RECOGNIZE statistics: sample of $rows rows " +
        "spread over the input") {
      session.sessionState.executePlan(plan).executedPlan.executeCollect()
    }
    asSample(child, Seq(data), inOrder = 0.0)
  }

  private def withDescription[T](session: SparkSession, text: String)(body: => T): T = {
    val sc = session.sparkContext
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(text)
    try body
    finally sc.setJobDescription(previous)
  }
}
