package org.apache.spark.sql.matchrecognize.streaming

import org.apache.spark.sql.catalyst.encoders.{AgnosticEncoders, ExpressionEncoder}
import org.apache.spark.sql.catalyst.expressions.{Alias, Ascending, Attribute, SortOrder, AttributeReference, CreateNamedStruct, Expression, GetStructField, If, Literal, NamedExpression, Not}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateFunction, Count, Max, Sum}
import org.apache.spark.sql.catalyst.plans.logical.{CollectMetrics, EventTimeWatermark, Filter, FlatMapGroupsWithState, LocalRelation, LogicalGroupState, LogicalPlan, Project, SerializeFromObject, Union}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPatternGroup, CepPlanBuilder, GroupMember, TreeStreamSpec}
import org.apache.spark.sql.matchrecognize.execution.tree.SharedTreeGraph
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.execution.InputOrdering
import org.apache.spark.sql.matchrecognize.execution.automaton.MatcherSpec
import org.apache.spark.sql.matchrecognize.optimizer.{PlanAnyMatchPatterns, PlanPatternGroups}
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, PartitionEndAnchor, PartitionKeys, PatternTableStream, SelectionStrategy}
import org.apache.spark.sql.streaming.{GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types.{IntegerType, LongType, StructField, StructType, TimestampNTZType, TimestampType}

/**
 * MATCH_RECOGNIZE over a streaming input runs in Spark's own stateful operator,
 * `flatMapGroupsWithState` with event-time timeouts, in append mode: Spark then keeps each
 * key's state in its state store (checkpoints, recovery, the RocksDB provider), drops and
 * counts rows behind the watermark, and schedules the micro-batches that advance it. The
 * resolved node becomes that operator, grouped by the PARTITION BY keys (a constant key
 * without PARTITION BY), over the input columns the matcher reads, with a
 * [[StreamMatchFunction]] as its function.
 *
 * The first ORDER BY key is the event time and must carry the input's watermark: rows wait
 * in state until the watermark passes them, so that they are matched in ORDER BY order
 * whatever order they arrived in.
 */
object PlanStreamingMatchRecognize extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = {
    var observed = 0
    // Observed metrics need a name unique in the query.
    def metricsName(): String = {
      observed += 1
      if (observed == 1) "match_recognize" else s"match_recognize_$observed"
    }
    val grouped =
      if (!conf.getConf(MatchRecognizeConf.PLAN_PATTERNS_TOGETHER)) plan
      else plan.resolveOperatorsDown { case u: Union if u.isStreaming => together(u, metricsName) }
    grouped.resolveOperatorsUp {
      case m: MatchRecognize if m.child.isStreaming && m.resolved => rewrite(m, metricsName())
      // Planned at each micro-batch (PlanPatternTableStreams); its event time checked now.
      case p: PatternTableStream => eventTimeColumn(p.orderBy); p
    }
  }

  /**
   * The SKIP TILL ANY MATCH patterns of a union over one stream, with the same PARTITION BY
   * and ORDER BY (see `PlanPatternGroups`), in one stateful operator: one state per key for
   * all of them, each row offered to every pattern's trees. A member one stream plan cannot
   * take ([[CepPatternGroup.streamSpec]]) is left to be planned alone.
   */
  private def together(nested: Union, metricsName: () => String): LogicalPlan = {
    // `a UNION ALL b UNION ALL c` is a union of a union here (the optimizer flattens them).
    def children(p: LogicalPlan): Seq[LogicalPlan] = p match {
      case v: Union if !v.byName && !v.allowMissingCol => v.children.flatMap(children)
      case other => Seq(other)
    }
    val u = nested.copy(children = children(nested))
    val found = PlanPatternGroups.groups(u,
      m =>
        m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) && m.child.isStreaming &&
          m.resolved && CepPatternGroup.refusal(m).isEmpty)
    if (found.isEmpty) nested
    else {
      val settings = PlanAnyMatchPatterns.settings(conf, None)
      // The members one stream plan can take (one row per match of its measures) go together.
      val planned = found.flatMap { case (indexes, members) =>
        val fit = indexes.zip(members).filter { case (_, m) => CepPatternGroup.streamSpec(Seq(m), settings).isDefined }
        if (fit.size < 2) None
        else CepPatternGroup.streamSpec(fit.map(_._2), settings).map { case (spec, targets) =>
          fit.map(_._1) -> Seq(groupStream(fit.map(_._2), spec, targets, metricsName()))
        }
      }
      if (planned.isEmpty) nested else PlanPatternGroups.replaced(u, planned)
    }
  }

  private def groupStream(members: Seq[GroupMember], spec: TreeStreamSpec, targets: Seq[Attribute],
      metricsName: String): LogicalPlan = {
    val m = members.head.node
    val eventTime = eventTimeOf(m)
    members.tail.foreach(member => eventTimeOf(member.node))
    val input = m.child.output
    val function = new StreamTreeFunction(spec, input, eventTime, m.partitionBy,
      describe(m) + spec.alternatives.map(_.description)
        .mkString(s", ${members.size} patterns planned together: one-pass trees ", " ∪ ", "") +
        SharedTreeGraph.describe(spec.alternatives),
      QuerySignature.of(members.map(_.node), input ++ targets))
    val columns = targets.map(_.withNullability(true))
    val statistics = StreamTreeFunction.statistics()
    val written = stateful(m, input, function, columns ++ statistics, metricsName)
    Project(columns,
      Filter(Not(statistics.head),
        observeTrees(metricsName, statistics,
          written)))
  }

  /** The event-time column, or an error saying what the query must add. */
  def eventTimeOf(m: MatchRecognize): Attribute = {
    if (m.options.pattern.exists(_ == PartitionEndAnchor)) {
      throw analysis("STREAMING_PARTITION_END",
        "PATTERN uses $, the end of the partition, which a streaming input never reaches; " +
          "over a stream a match ends at a row its pattern names.")
    }
    if (m.options.strategy.contains(SelectionStrategy.SkipTillNextMatch) &&
        m.options.within.isEmpty) {
      throw analysis("STREAMING_NEEDS_WITHIN",
        "SKIP TILL NEXT MATCH over a streaming input needs WITHIN: a match in progress may " +
          "skip rows without end, and only its window decides it (for example " +
          "WITHIN INTERVAL '10' MINUTE after PATTERN).")
    }
    eventTimeColumn(m.orderBy)
  }

  /** The event-time column of ORDER BY `orderBy`, or an error saying what the query must add. */
  def eventTimeColumn(orderBy: Seq[SortOrder]): Attribute = {
    val first = orderBy.headOption.getOrElse {
      throw analysis("STREAMING_NEEDS_EVENT_TIME",
        "MATCH_RECOGNIZE over a streaming input needs ORDER BY on the input's event-time " +
          "column, the column given to withWatermark (for example ORDER BY ts).")
    }
    val column = first.child match {
      case a: Attribute if a.metadata.contains(EventTimeWatermark.delayKey) => a
      case other =>
        throw analysis("STREAMING_NEEDS_EVENT_TIME",
          "MATCH_RECOGNIZE over a streaming input needs its first ORDER BY key to be the " +
            s"event-time column with a watermark, but ${other.sql} has none; add " +
            "withWatermark on that column (for example df.withWatermark(\"ts\", \"1 minute\")) " +
            "or order by the column that has one.")
    }
    if (first.direction != Ascending) {
      throw analysis("STREAMING_NEEDS_EVENT_TIME",
        s"MATCH_RECOGNIZE over a streaming input orders by event time ascending; " +
          s"${first.sql} is descending.")
    }
    column.dataType match {
      case TimestampType | TimestampNTZType => column
      case t =>
        throw analysis("STREAMING_NEEDS_EVENT_TIME",
          s"The event-time column ${column.sql} of a streaming MATCH_RECOGNIZE must be a " +
            s"TIMESTAMP, but it is ${t.sql}.")
    }
  }

  private def rewrite(m: MatchRecognize, metricsName: String): LogicalPlan =
    if (m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch)) anyMatch(m, metricsName)
    else standard(m, metricsName)

  private def standard(m: MatchRecognize, metricsName: String): LogicalPlan = {
    val input = m.neededInput
    val statistics = StreamMatchFunction.statistics()
    val written = stateful(m, input, matchFunction(m, input), m.output ++ statistics, metricsName)
    observeMatches(metricsName, m.output, statistics, Nil, written)
  }

  /** The standard semantics' function for `m`, keeping the `input` columns of each row. */
  def matchFunction(m: MatchRecognize, input: Seq[Attribute]): StreamMatchFunction = {
    val ordering = m.orderBy ++ InputOrdering.tieBreakers(m.partitionBy, m.orderBy, Nil, input)
    val spec = MatcherSpec.build(input, m.orderBy, m.measures, m.measureOutput, m.defines,
      m.options, m.output, MatchRecognizeConf.maxLivePartialMatches(conf),
      MatchRecognizeConf.maxBufferedRows(conf), MatchRecognizeConf.maxMatcherBytes(conf),
      MatchRecognizeConf.maxStepsPerRow(conf), MatchRecognizeConf.deadlines(conf))
    new StreamMatchFunction(spec, input, ordering, eventTimeOf(m), m.partitionBy, describe(m),
      QuerySignature.of(Seq(m), input))
  }

  /**
   * The `output` columns of what a [[StreamMatchFunction]] (or a set of them) wrote, its
   * statistics rows summed into the observed metrics `name` (with `more` beside them) and
   * dropped.
   */
  def observeMatches(name: String, output: Seq[Attribute], statistics: Seq[Attribute],
      more: Seq[NamedExpression], written: LogicalPlan): LogicalPlan = {
    val Seq(isStatistics, matches, partial, late) = statistics
    Project(output,
      Filter(Not(isStatistics),
        observe(name,
          Seq(
            metric("matches", Sum(If(isStatistics, matches, Literal(0L)))),
            metric("peak_partial_matches_per_key", Max(If(isStatistics, partial, Literal(0L)))),
            metric("late_rows", Sum(If(isStatistics, late, Literal(0L))))) ++ more,
          written)))
  }

  /**
   * SKIP TILL ANY MATCH: each alternative's one-pass tree (the pattern order, or the forced
   * trees) runs inside the stateful function; what it writes per match then becomes the
   * query's rows as in batch (measures, or ALL ROWS PER MATCH), row by row.
   */
  private def anyMatch(m: MatchRecognize, metricsName: String): LogicalPlan = {
    val eventTime = eventTimeOf(m)
    val plan = new CepPlanBuilder(m, PlanAnyMatchPatterns.streamSettings(conf)).streamPlan()
    val input = m.child.output
    val perKey = plan.spec.alternatives match {
      case Seq(a) => a.perKey
      case _ => None
    }
    val function = new StreamTreeFunction(plan.spec, input, eventTime, m.partitionBy,
      describe(m) + plan.spec.alternatives.map(_.description)
        .mkString(", one-pass tree ", " ∪ ", "") + perKey.fold("")(k =>
        s", trees per key: ${k.classes.map(_.description).mkString(", ")}, each key moving as " +
          s"the rates of its latest ${k.chooser.prefixRows} rows drift"),
      QuerySignature.of(Seq(m), input ++ plan.matchColumns))
    // A column is NULL in the matches of alternatives that do not bind its variable.
    val columns = plan.matchColumns.map(_.withNullability(true))
    val statistics = StreamTreeFunction.statistics(perKey.map(_.chooser))
    val written = stateful(m, input, function, columns ++ statistics, metricsName)
    plan.output(Project(columns,
        Filter(Not(statistics.head),
          observeTrees(metricsName, statistics,
            written))))
  }

  /**
   * Each micro-batch's matches written, partial matches created, the most partial matches a
   * key buffers, and the rows dropped as late in arrival order, as the query progress's
   * observed metrics `name`.
   */
  private def observeTrees(name: String, statistics: Seq[Attribute], plan: LogicalPlan): LogicalPlan = {
    val Seq(isStatistics, created, buffered, late) = statistics.take(4)
    // With trees per key: moves, the rows each variable admitted (`#rows_A` as `rows_A`), the
    // pairs of each related pair of variables tested and passed (`pairs_tested_A_B`, ...).
    val perKey = statistics.drop(4).map { c =>
      metric(if (c.name == "#moves") "tree_moves" else c.name.stripPrefix("#"), Sum(If(isStatistics, c, Literal(0L))))
    }
    observe(name,
      Seq(
        metric("matches", Count(Seq(If(isStatistics, Literal(null, LongType), Literal(1L))))),
        metric("partial_matches", Sum(If(isStatistics, created, Literal(0L)))),
        metric("peak_buffered_per_key", Max(If(isStatistics, buffered, Literal(0L)))),
        metric("late_rows", Sum(If(isStatistics, late, Literal(0L))))) ++ perKey,
      plan)
  }

  /** `metrics` (over `plan`'s rows) as the query progress's observed metrics `name`. */
  def observe(name: String, metrics: Seq[NamedExpression], plan: LogicalPlan): LogicalPlan =
    CollectMetrics(name, metrics, plan, dataframeId = 0L)

  def metric(name: String, f: AggregateFunction): NamedExpression =
    Alias(f.toAggregateExpression(), name)()

  def describe(m: MatchRecognize): String =
    m.simpleString(25).replaceFirst("^MatchRecognize", "MatchRecognizeStream")

  /**
   * Spark's `flatMapGroupsWithState` calling `function` with the `input` columns of each
   * PARTITION BY key's rows (a constant key without PARTITION BY), whose result rows are
   * the struct of `columns`; the plan's output is `columns` themselves (same ids, metadata
   * such as the event time's watermark included).
   *
   * The rows also carry `operator` (the operator's metrics name, unique in the query),
   * which the function does not read: two operators over the same input would otherwise
   * shuffle it by the same plan, and Spark would reuse one shuffle for both, which loses
   * the second operator's rows when the columns above them are pruned.
   */
  private def stateful(m: MatchRecognize, input: Seq[Attribute],
      function: (Any, Iterator[Any], LogicalGroupState[Any]) => Iterator[Any],
      columns: Seq[Attribute], operator: String): LogicalPlan =
    statefulOperator(m.partitionBy, m.child, input, function, columns, operator)

  /** [[stateful]] for the keys `partitionBy` of `child`. */
  def statefulOperator(partitionBy: Seq[Attribute], child: LogicalPlan, input: Seq[Attribute],
      function: (Any, Iterator[Any], LogicalGroupState[Any]) => Iterator[Any],
      columns: Seq[Attribute], operator: String): LogicalPlan = {
    val tag = Alias(Literal(operator), "#operator")()
    val data = input :+ tag.toAttribute
    val (keys, below) =
      if (PartitionKeys.binaryStable(partitionBy) && partitionBy.nonEmpty) {
        (partitionBy, Project(input :+ tag, child))
      } else if (partitionBy.nonEmpty) {
        // The state store keys by bytes: a key of a case- or accent-insensitive collation is
        // grouped by its collation key, so that equal keys share one state.
        val collationKeys = PartitionKeys.comparable(partitionBy).zip(partitionBy).map {
          case (k, p) => Alias(k, p.name)()
        }
        (collationKeys.map(_.toAttribute), Project((input :+ tag) ++ collationKeys, child))
      } else {
        val constant = Alias(Literal(0, IntegerType), "match_recognize_all_rows")()
        (Seq(constant.toAttribute), Project(input :+ tag :+ constant, child))
      }
    val outputType = StructType(columns.map(a => StructField(a.name, a.dataType, a.nullable)))
    val outputObject = AttributeReference("match_recognize_row", outputType, nullable = false)()
    val stateEncoder = ExpressionEncoder(AgnosticEncoders.BinaryEncoder)
    val keyStruct = struct(keys)
    val stateful = FlatMapGroupsWithState(
      function,
      keyStruct,
      struct(data),
      keys,
      data,
      outputObject,
      stateEncoder.asInstanceOf[ExpressionEncoder[Any]],
      OutputMode.Append(),
      isMapGroupsWithState = false,
      GroupStateTimeout.EventTimeTimeout(),
      hasInitialState = false,
      keys,
      data,
      keyStruct,
      LocalRelation((keys ++ data).map(_.newInstance())), // no initial state
      below)
    SerializeFromObject(columns.zipWithIndex.map { case (a, i) =>
        Alias(GetStructField(outputObject, i, Some(a.name)), a.name)(
          exprId = a.exprId, explicitMetadata = Some(a.metadata))
      }, stateful)
  }

  private def struct(columns: Seq[Attribute]): Expression =
    CreateNamedStruct(columns.zipWithIndex.flatMap { case (a, i) => Seq(Literal(s"c$i"), a) })
}
