package org.apache.spark.sql.matchrecognize.compile.anymatch

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.matchrecognize.plans.TimeSlices
import org.apache.spark.sql.types._

/**
 * The one input every leaf of a SKIP TILL ANY MATCH plan reads (of one pattern, or of a
 * group of patterns over the same input): `plan`, the rows passing at least one leaf
 * condition with a flag per condition (`flags`, aligned with the conditions), copied into
 * every time slice that may need them and shuffled by partition key and `slice`.
 */
private[anymatch] final case class SharedLeafRows(plan: LogicalPlan, flags: Seq[Expression], slice: Attribute)

private[anymatch] object SharedLeafRows {

  /**
   * The rows of `keysPresent` passing some of `conditions`, with the columns of `read`, a
   * flag per condition, and one copy per time slice (of `window`) that may need them,
   * shuffled by `partitionBy` and slice into `tasks`' tasks.
   *
   * The flags are packed into one long column per 62 conditions rather than a Boolean
   * column each: Spark's constraint propagation rewrites a filter's conditions with every
   * combination of the aliases that name their parts, 2^n for n flags, and would spend
   * minutes planning a union of a few alternatives. The rows no condition wants are dropped
   * before the flags are computed: a filter on the flags themselves would be pushed below
   * their projection with the aliases inlined, and every condition would run twice on
   * every input row.
   */
  def apply(keysPresent: LogicalPlan, partitionBy: Seq[Attribute], lo: Expression, window: Long,
      tasks: CepTaskCount, conditions: Seq[Expression], read: AttributeSet): SharedLeafRows = {
    val groups = conditions.indices.grouped(62).toIndexedSeq
    val masks = groups.indices.map { g =>
      Alias(groups(g).zipWithIndex.map { case (c, b) =>
          If(Coalesce(Seq(conditions(c), Literal(false))), Literal(1L << b), Literal(0L)): Expression
        }.reduce(BitwiseOr), s"#rows$g")()
    }
    val slicesAlias = Alias(TimeSlices(lo, window, tasks.sliceLength), "#slices")()
    val wanted = Filter(conditions.reduce(Or), keysPresent)
    val filtered = Project(keysPresent.output.filter(read.contains) ++ masks :+ slicesAlias, wanted)
    val slice = AttributeReference("#slice", LongType, nullable = false)()
    val generated = Generate(Explode(slicesAlias.toAttribute),
      unrequiredChildIndex = Seq(filtered.output.length - 1), outer = false, qualifier = None,
      generatorOutput = Seq(slice), child = filtered)
    val shuffled = CepTaskChooser.exchange(partitionBy :+ slice, generated, tasks)
    val flags = groups.indices.flatMap { g =>
      groups(g).zipWithIndex.map { case (_, b) =>
        Not(EqualTo(BitwiseAnd(masks(g).toAttribute, Literal(1L << b)), Literal(0L))): Expression
      }
    }
    SharedLeafRows(shuffled, flags, slice)
  }
}
