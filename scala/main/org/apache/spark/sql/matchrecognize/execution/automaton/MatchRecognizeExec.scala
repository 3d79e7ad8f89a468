package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Ascending, Attribute, AttributeSet, Expression, SortOrder}
import org.apache.spark.sql.catalyst.plans.physical.{AllTuples, ClusteredDistribution, Distribution, OrderedDistribution, Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.execution.{InputOrdering, TaskSort}
import org.apache.spark.sql.matchrecognize.plans.MatchRecognizeOptions

/**
 * Executes MATCH_RECOGNIZE with the automaton: the input is clustered by the PARTITION BY
 * keys and sorted by partition, ORDER BY and then every other column (so ties never depend
 * on shuffle order), and each partition is matched in one pass over its rows. The sort is
 * this operator's own ([[TaskSort]], with [[PartitionSortPrefix]] where it applies), or
 * Spark's (required of the child) under an internal conf for benchmarks.
 *
 * With `split` ([[SplitMatching]]) the input is instead range-partitioned by that total
 * order, and each task matches its range, reading into its neighbours' rows where a
 * partition crosses a range's edge.
 *
 * @param splitNote what EXPLAIN says about splitting (empty: nothing)
 */
case class MatchRecognizeExec(
    partitionBy: Seq[Attribute],
    orderBy: Seq[SortOrder],
    measures: Seq[Expression],
    measureOutput: Seq[Attribute],
    defines: Seq[Expression],
    options: MatchRecognizeOptions,
    output: Seq[Attribute],
    child: SparkPlan,
    split: Boolean = false,
    splitNote: String = "") extends UnaryExecNode {

  override def producedAttributes: AttributeSet = AttributeSet(measureOutput)

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numInputRows" -> SQLMetrics.createMetric(sparkContext, "number of input rows"),
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "numMatches" -> SQLMetrics.createMetric(sparkContext, "number of matches"),
    "peakLivePartialMatches" ->
      SQLMetrics.createAverageMetric(sparkContext, "peak live partial matches per task"),
    "peakBufferedRows" -> SQLMetrics.createAverageMetric(sparkContext, "peak buffered rows per task"),
    "matchingSteps" -> SQLMetrics.createMetric(sparkContext, "matching steps"),
    "sortTime" -> SQLMetrics.createNanoTimingMetric(sparkContext, "own sort time"),
    "neighbourRows" -> SQLMetrics.createMetric(sparkContext, "rows read from neighbouring ranges"),
    "rangesReadFromStart" -> SQLMetrics.createMetric(sparkContext,
      "split ranges that matched their partition from its start to find where their matches begin"))

  override def requiredChildDistribution: Seq[Distribution] =
    if (split) OrderedDistribution(MatchRecognizeExec.rangeOrdering(partitionBy, orderBy)) :: Nil
    else if (partitionBy.isEmpty) AllTuples :: Nil
    else ClusteredDistribution(partitionBy) :: Nil

  private def fullOrdering: Seq[SortOrder] =
    MatchRecognizeExec.totalOrdering(partitionBy, orderBy, options, child.output)

  /**
   * This operator's own sort, unless the child's rows already come in the order: with the
   * packed partition-and-time prefix where it applies, else with Spark's prefix of the
   * first key (the sort Spark's operator would do, but a small task's rows are sorted as an
   * array, without a memory page). With its EXPLAIN note.
   */
  @transient private lazy val ownSort: Option[(TaskSort, String)] =
    if (!TaskSort.wanted(conf, child, fullOrdering)) None
    else {
      val inMemory = TaskSort.inMemoryBytes(conf)
      PartitionSortPrefix.forOrdering(partitionBy, orderBy, fullOrdering, child.output, inMemory)
        .map(_ -> ", sorts its input (partition and time prefix)")
        .orElse(Some(TaskSort(fullOrdering, child.output, inMemory) -> ", sorts its input"))
    }

  override def requiredChildOrdering: Seq[Seq[SortOrder]] =
    if (ownSort.isDefined) Seq(Nil) else Seq(fullOrdering)

  override def outputPartitioning: Partitioning = child.outputPartitioning match {
    // A task writes matches that read rows of the next ranges: no partitioning holds. Its
    // tasks group the ranges (NeighbourReadingRDD).
    case p if split => UnknownPartitioning(math.max(1, math.min(SplitMatching.tasks(sparkContext), p.numPartitions)))
    case p: Expression if p.references.subsetOf(AttributeSet(output)) => p.asInstanceOf[Partitioning]
    case p => UnknownPartitioning(p.numPartitions)
  }

  override def outputOrdering: Seq[SortOrder] = partitionBy.map(SortOrder(_, Ascending))

  override def simpleString(maxFields: Int): String = {
    val keys = if (partitionBy.isEmpty) "" else partitionBy.mkString("PARTITION BY ", ", ", ", ")
    s"MatchRecognize $keys${orderBy.map(_.sql).mkString("ORDER BY ", ", ", "")}, " +
    s"PATTERN (${options.pattern.sql}), ${options.rowsPerMatch.sql}, " +
    options.strategy.map(_.sql).getOrElse(options.effectiveSkip.sql) +
    options.within.map(w => s", ${w.sql}").getOrElse("") +
    options.prefilter.map(d => s", prefilter: ${d.note}").getOrElse("") +
    ownSort.map(_._2).getOrElse("") + splitNote + deadlineNote +
    s", measures=[${measureOutput.map(_.name).mkString(", ")}]"
  }

  private def spec: MatcherSpec =
    MatcherSpec.build(child.output, orderBy, measures, measureOutput, defines, options,
      output,
      MatchRecognizeConf.maxLivePartialMatches(conf), MatchRecognizeConf.maxBufferedRows(conf),
      MatchRecognizeConf.maxMatcherBytes(conf), MatchRecognizeConf.maxStepsPerRow(conf),
      MatchRecognizeConf.deadlines(conf))

  // The DEFINE bounds on the ORDER BY key that end partial matches early ([[PatternDeadline]]).
  @transient private lazy val deadlineNote: String = {
    val used = PatternDeadlines.used(spec)
    if (used.isEmpty) "" else used.mkString(", ends partial matches past: ", "; ", "")
  }

  override protected def doExecute(): RDD[InternalRow] = {
    val spec = this.spec
    val factory =
      new MatchRecognizeEvaluatorFactory(spec, partitionBy, child.output, ownSort.map(_._1), metrics)
    if (split) {
      val ordering = fullOrdering
      val entryRows = conf.getConf(MatchRecognizeConf.SPLIT_ENTRY_ROWS)
      val tasks = SplitMatching.tasks(sparkContext)
      val numberColumns = SplitReconciliation.columns(measures, measureOutput, output)
      val tagsUnmatched = SplitMatching.reconcilesUnmatched(options)
      if (numberColumns.isEmpty && !tagsUnmatched) {
        new NeighbourReadingRDD[InternalRow, InternalRow](child.execute(), tasks,
          (first, end, ranges, rows, read) =>
            factory.evalRange(ordering, entryRows, first, end, ranges, rows, read)(_.run(_)))
      } else {
        val pieces = new NeighbourReadingRDD[InternalRow, SplitPiece](child.execute(), tasks,
          (first, end, ranges, rows, read) =>
            factory.evalRange(ordering, entryRows, first, end, ranges, rows, read) { (processor, sorted) =>
              SplitReconciliation.pack(processor.run(sorted), () => processor.rangeMatchCounts,
                if (tagsUnmatched) Some(() => processor.unmatchedOffsetOfLast) else None)
            })
        SplitReconciliation.reconciled(pieces, numberColumns, output.length)
      }
    } else child.execute().mapPartitionsWithEvaluator(factory)
  }

  override protected def withNewChildInternal(newChild: SparkPlan): MatchRecognizeExec =
    copy(child = newChild)
}

object MatchRecognizeExec {

  /**
   * The order the matcher reads rows in: partition, ORDER BY, then the remaining orderable
   * columns ascending, which break ties on the ORDER BY keys.
   */
  def totalOrdering(partitionBy: Seq[Attribute], orderBy: Seq[SortOrder],
      options: MatchRecognizeOptions, input: Seq[Attribute]): Seq[SortOrder] =
    rangeOrdering(partitionBy, orderBy) ++
      // The prefilter's flag is not data: tied rows keep the order the prefilter saw.
      InputOrdering.tieBreakers(partitionBy, orderBy, options.prefilter.flatMap(_.startFlag).toIndexedSeq,
        input)

  /**
   * The order a split input is cut into ranges by: partition and ORDER BY keys, a prefix of
   * [[totalOrdering]] (rows tied on it go to one range, which sorts them by the rest), so
   * the range exchange compares fewer columns.
   */
  def rangeOrdering(partitionBy: Seq[Attribute], orderBy: Seq[SortOrder]): Seq[SortOrder] =
    partitionBy.map(SortOrder(_, Ascending)) ++ orderBy
}
