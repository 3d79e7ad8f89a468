package org.apache.spark.sql.matchrecognize.optimizer

import scala.util.Random

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, BoundReference, Literal, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
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

  final case class Sampled(relation: LocalRelation, block: AttributeReference, rows: Int,
      blocks: Int)

  def draw(session: SparkSession, child: LogicalPlan, rows: Int, seed: Long): Sampled = {
    val rdd = session.sessionState.executePlan(child).toRdd
    val parts = rdd.getNumPartitions
    val chosen = new Random(seed).shuffle((0 until parts).toList).take(MaxBlocks)
    val perBlock = if (chosen.isEmpty) 0 else (rows + chosen.size - 1) / chosen.size
    val sc = session.sparkContext
    val previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(s"MATCH_RECOGNIZE statistics: sample of $rows rows")
    val blocks = try {
      if (chosen.isEmpty) Array.empty[Array[InternalRow]]
      else sc.runJob(rdd, (it: Iterator[InternalRow]) => it.take(perBlock).map(_.copy()).toArray,
        chosen)
    } finally sc.setJobDescription(previous)
    val block = AttributeReference("#block", IntegerType, nullable = false)()
    val columns = child.output.zipWithIndex.map { case (a, i) =>
      BoundReference(i, a.dataType, a.nullable)
    }
    val data = blocks.zipWithIndex.flatMap { case (rs, b) =>
      val project = UnsafeProjection.create(columns :+ Literal(b))
      rs.map(r => project(r).copy(): InternalRow)
    }
    Sampled(LocalRelation(child.output :+ block, data.toSeq), block, data.length,
      blocks.count(_.nonEmpty))
  }
}
