package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.SparkContext
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{AfterMatchSkip, MatchRecognize, MatchRecognizeOptions, RowsPerMatch}

/**
 * Whether [[MatchRecognizeExec]] matches large partitions in ranges, one task each
 * (`spark.sql.matchRecognize.split.mode`). The input is range-partitioned by the operator's
 * total order, so a partition too large for one core, or a skewed key, spreads over several
 * tasks; each task starts attempts at its own rows only and reads on into the next range
 * ([[RangeNeighbours]]) until they are decided.
 *
 * Under AFTER MATCH SKIP TO NEXT ROW every row is an attempt's start whatever the matches
 * before it. Under the other skip modes the match before decides where the next may start,
 * and it may have begun in an earlier range: each task finds where the sequential matcher
 * enters its range from the rows just before it ([[RangeEntry]]), which fails whatever the
 * rows when a loop of the pattern can go on over any row (`A X* B` with `X` undefined).
 * A MATCH_NUMBER() measure counts the matches of earlier ranges: it is numbered on once
 * every range is matched ([[SplitReconciliation]]). A row is unmatched (WITH UNMATCHED ROWS)
 * only if no match covers it: under PAST LAST ROW the rows a match of an earlier range
 * covers are those before where the range's matches begin; where matches may overlap, a
 * range's unmatched rows that a match of an earlier range reaches are dropped once every
 * range is matched; a measure computing with it is computed above the matcher
 * ([[MatchNumberAbove]]). Not split: MATCH_NUMBER() in DEFINE (it decides which rows match)
 * or inside a measure's navigation or aggregate.
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
    val wanted = conf.getConf(MatchRecognizeConf.SPLIT_MODE) match {
      case "on" => true
      // Physical planning must not sample the input for key shares: under adaptive
      // execution it runs again inside the query, where a nested job can wait on it.
      case "auto" =>
        !m.isStreaming && m.partitionBy.isEmpty &&
        m.child.stats.sizeInBytes >= BigInt(conf.getConf(MatchRecognizeConf.SPLIT_MIN_BYTES))
      case _ => false
    }
    if (!wanted) Choice(split = false, "")
    else
      unsupported(m) match {
        case Some(not) => Choice(split = false, s", one task per partition (not split: $not)")
        case None =>
          val after = Seq(
            "MATCH_NUMBER() numbered on" -> m.measures.exists(MatchNumberAbove.usesMatchNumber),
            "unmatched rows that earlier ranges' matches cover dropped" -> reconcilesUnmatched(m.options))
            .collect { case (step, true) => step }
          Choice(split = true,
            ", split into ranges matched in parallel" +
              (if (after.isEmpty) "" else after.mkString(", ", " and ", " after them")))
      }
  }

  /**
   * Whether a range's unmatched rows (WITH UNMATCHED ROWS) may be covered by a match of an
   * earlier range reaching past where the range's own matches begin: where matches may
   * overlap, under every skip mode but PAST LAST ROW.
   */
  def reconcilesUnmatched(o: MatchRecognizeOptions): Boolean =
    o.rowsPerMatch == RowsPerMatch.AllRowsWithUnmatched && o.effectiveSkip != AfterMatchSkip.PastLastRow

  /** Why the pattern cannot be matched in ranges, if it cannot. */
  private def unsupported(m: MatchRecognize): Option[String] = {
    val o = m.options
    if (m.partitionBy.isEmpty && m.orderBy.isEmpty) Some("no ORDER BY")
    else if (o.strategy.isDefined) Some(o.strategy.get.sql)
    else if (m.defines.exists(MatchNumberAbove.usesMatchNumber)) Some("MATCH_NUMBER() in DEFINE")
    else if (m.measures.exists(MatchNumberAbove.computesWith) && MatchNumberAbove.lift(m).isEmpty)
      Some("MATCH_NUMBER() inside a measure's navigation or aggregate")
    else if (o.prefilter.exists(_.startFlag.isDefined)) Some("the join prefilter runs")
    else if (o.effectiveSkip == AfterMatchSkip.ToNextRow) None
    else {
      // Where a range's matches begin is found from the rows before it, unless a loop can go
      // on over any row: then every range would match its partition from the start.
      val spec = MatcherSpec.build(m.child.output, m.orderBy, m.measures, m.measureOutput,
        m.defines, o, m.output, maxLivePartialMatches = 1L, maxBufferedRows = 1L)
      OpenMatchReach.endlessLoop(spec) match {
        case Nil => None
        case vars => Some(s"${vars.mkString(", ")} may go on over any row, under ${o.effectiveSkip.sql}")
      }
    }
  }
}
