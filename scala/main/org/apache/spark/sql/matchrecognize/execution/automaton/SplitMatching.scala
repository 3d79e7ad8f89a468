package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Expression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.optimizer.{InputSample, StatisticsCache}
import org.apache.spark.sql.matchrecognize.plans.{AfterMatchSkip, MatchNumber, MatchRecognize, PartitionKeys, RowsPerMatch}

/**
 * Whether [[MatchRecognizeExec]] matches large partitions in ranges, one task each
 * (`spark.sql.matchRecognize.split.mode`). The input is range-partitioned by the operator's
 * total order, so a partition too large for one core, or a skewed key, spreads over several
 * tasks; each task starts attempts at its own rows only and reads on into the next range
 * ([[RangeNeighbours]]) until they are decided.
 *
 * That is exact when every row is an attempt's start whatever the matches before it, which
 * is what AFTER MATCH SKIP TO NEXT ROW means, and when no output depends on the matches of
 * other ranges: not MATCH_NUMBER() (it counts them), not WITH UNMATCHED ROWS (a row is
 * unmatched only if no earlier match covers it). Under the other skip modes where an
 * attempt starts depends on the match before it, which may lie in another range.
 */
object SplitMatching {

  /** Input ranges per task: what a task reads of its neighbours is one of them each side. */
  val RangesPerTask = 8

  /** Tasks per core, so that a range slower than the others does not hold up a core alone. */
  val TasksPerCore = 2

  /** The tasks that match a split input. */
  def tasks(sc: SparkContext): Int = TasksPerCore * math.max(1, sc.defaultParallelism)

  /**
   * The ranges the input is cut into: enough for [[RangesPerTask]] per task, and no fewer
   * than `spark.sql.shuffle.partitions` (at most 8,192).
   */
  def ranges(sc: SparkContext, conf: SQLConf): Int =
    math.max(conf.numShufflePartitions, math.min(RangesPerTask * tasks(sc), 8192))

  /**
   * Whether to split, and what EXPLAIN should say (empty when the setting or the input's
   * size leaves nothing to explain).
   */
  final case class Choice(split: Boolean, note: String)

  def choose(m: MatchRecognize, conf: SQLConf): Choice = {
    val mode = conf.getConf(MatchRecognizeConf.SPLIT_MODE)
    lazy val large = m.child.stats.sizeInBytes >= BigInt(conf.getConf(MatchRecognizeConf.SPLIT_MIN_BYTES))
    val wanted: Option[String] = mode match {
      case "on" => Some("")
      case "auto" if m.isStreaming || !large => None
      case "auto" if m.partitionBy.isEmpty => Some("")
      case "auto" =>
        val share = largestKeyShare(m, conf)
        val cores = math.max(1, SparkSession.active.sparkContext.defaultParallelism)
        if (share * cores >= MinGain) Some(f" (the largest key holds ${share * 100}%.0f%% of the sampled rows)")
        else None
      case _ => None
    }
    wanted match {
      case None => Choice(split = false, "")
      case Some(why) =>
        unsupported(m) match {
          case Some(not) => Choice(split = false, s", one task per partition (not split: $not)")
          case None => Choice(split = true, s", split into ranges matched in parallel$why")
        }
    }
  }

  /**
   * The gain the largest key must promise before `auto` splits a partitioned query: its
   * task takes at least its share of the time unsplit, and about 1 / cores split.
   */
  val MinGain = 1.5

  /**
   * The share of the rows the largest PARTITION BY key holds in the statistics sample
   * (contiguous blocks of the input, [[InputSample]]; cached as the other statistics are).
   * Blocks of an input stored grouped by key overstate it, which costs a split that did not
   * pay, never a wrong row.
   */
  private def largestKeyShare(m: MatchRecognize, conf: SQLConf): Double = {
    val rows = conf.getConf(MatchRecognizeConf.STATISTICS_SAMPLE_ROWS)
    val seed = conf.getConf(MatchRecognizeConf.STATISTICS_SEED)
    val keyColumns = m.partitionBy.map(a => m.child.output.indexWhere(_.exprId == a.exprId))
    StatisticsCache.getOrCompute(("splitKeyShare", m.child.canonicalized, keyColumns, rows, seed)) {
      val sample = InputSample.draw(SparkSession.active, m.child, rows, seed)
      val keyOf = UnsafeProjection.create(PartitionKeys.comparable(m.partitionBy), m.child.output)
      val counts = scala.collection.mutable.HashMap.empty[UnsafeRow, Int]
      sample.relation.data.foreach { r =>
        val k = keyOf(r).copy()
        counts(k) = counts.getOrElse(k, 0) + 1
      }
      if (counts.isEmpty) 0.0 else counts.values.max.toDouble / sample.rows
    }._1
  }

  /** Why the pattern cannot be matched in ranges, if it cannot. */
  private def unsupported(m: MatchRecognize): Option[String] = {
    val o = m.options
    def usesMatchNumber(e: Expression) = e.exists(_.isInstanceOf[MatchNumber])
    if (m.partitionBy.isEmpty && m.orderBy.isEmpty) Some("no ORDER BY")
    else if (o.strategy.isDefined) Some(o.strategy.get.sql)
    else if (o.effectiveSkip != AfterMatchSkip.ToNextRow) Some(s"${o.effectiveSkip.sql} needs the match before")
    else if (o.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched) Some("WITH UNMATCHED ROWS")
    else if (m.measures.exists(usesMatchNumber) || m.defines.exists(usesMatchNumber)) Some("MATCH_NUMBER()")
    else if (o.prefilter.exists(_.startFlag.isDefined)) Some("the join prefilter runs")
    else None
  }
}
