package org.apache.spark.sql.matchrecognize.streaming

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Attribute, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.Max
import org.apache.spark.sql.catalyst.plans.logical.{FlatMapGroupsWithState, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.matchrecognize.analysis.{CompiledPattern, PatternRow, PatternTables}
import org.apache.spark.sql.matchrecognize.plans.PatternTableStream

/**
 * Plans `PATTERNS FROM table` over a stream at every micro-batch (the optimizer runs once per
 * micro-batch): the table is read, each row that makes a pattern joins the set, and the node
 * becomes Spark's stateful operator running that set ([[PatternSetFunction]]): each pattern
 * with the standard semantics' matcher, or under SKIP TILL ANY MATCH its own trees
 * ([[TreeSetMember]]), each with its own state in the key's. Patterns added
 * to the table start matching at the next micro-batch; removed ones stop, and their state is
 * dropped; changed ones start over. A row that cannot be a pattern is left out, logged once,
 * and counted in the query progress (`invalid_patterns`); the others keep running.
 */
case class PlanPatternTableStreams(session: SparkSession) extends Rule[LogicalPlan] with Logging {

  override def apply(plan: LogicalPlan): LogicalPlan = {
    var seen = 0
    plan.transformUp { case p: PatternTableStream =>
      seen += 1
      lower(p, if (seen == 1) "match_recognize_patterns" else s"match_recognize_patterns_$seen")
    }
  }

  private def lower(p: PatternTableStream, metricsName: String): LogicalPlan = {
    val input = p.child.output
    val (rows, malformed) = PatternTables.read(session, p.table)
    val attempts = rows.map(row => PlanPatternTableStreams.compiled(p, row, member(p, row, input)))
    val problems = malformed ++ attempts.collect { case Left(problem) => problem }
    problems.foreach { case (name, problem) => PlanPatternTableStreams.report(p.table, name, problem, log) }
    val members = attempts.collect { case Right(m) => m }
    val partitionBy = p.partitionBy
    val (added, removed) = PlanPatternTableStreams.changes(metricsName, members)
    if (added.nonEmpty || removed.nonEmpty) {
      logInfo(s"Patterns of ${p.table.mkString(".")} from this micro-batch on: " +
        s"${members.size} (started: ${added.mkString(", ")}; stopped: ${removed.mkString(", ")})")
    }
    val function = new PatternSetFunction(input, p.eventTime, partitionBy, members,
      s"PatternSetStream ${p.table.mkString(".")}: " + members.map(_.name).mkString(", "))
    val statistics = StreamMatchFunction.statistics()
    import PlanStreamingMatchRecognize.metric
    val operator = PlanStreamingMatchRecognize.statefulOperator(partitionBy, p.child, input, function,
      p.output ++ statistics, metricsName)
    val written = p.transformWithState.fold(operator) { case (mode, realTime) =>
      operator.transformUp { case f: FlatMapGroupsWithState => TransformWithStateLowering(f, mode, realTime) }
    }
    PlanStreamingMatchRecognize.observeMatches(metricsName, p.output, statistics,
      Seq(
        metric("patterns", Max(Literal(members.size.toLong))),
        metric("invalid_patterns", Max(Literal(problems.size.toLong))),
        metric("patterns_started", Max(Literal(added.size.toLong))),
        metric("patterns_stopped", Max(Literal(removed.size.toLong)))),
      written)
  }

  /** The pattern of `row` as a member of the set, or what keeps it out (name, problem). */
  private def member(
      p: PatternTableStream, row: PatternRow, input: Seq[Attribute]): () => Either[(String, String), PatternSetMember] =
    () =>
      PlanPatternTableStreams.streamable(session, p.before, p.after, row, input, p.output.tail)
        .map {
          case (c, None) =>
            PatternSetMember(c.row.name, id(c), PlanStreamingMatchRecognize.matchFunction(c.node, input))
          case (c, Some(trees)) => PatternSetMember(c.row.name, id(c), trees.function, Some(trees))
        }
        .left.map(row.name -> _)

  /** The pattern's name and a digest of what its state depends on. */
  private def id(c: CompiledPattern): String = {
    val signature = QuerySignature.of(Seq(c.node), c.placeholder.output)
    c.row.name + "\u0000" + signature.parts.map(p => java.lang.Long.toHexString(p._2)).mkString(".")
  }
}

object PlanPatternTableStreams {

  /**
   * The pattern of `row` compiled to run over a stream of `input`, with its one-pass trees
   * under SKIP TILL ANY MATCH, or what keeps it out: an error of its clause, columns other
   * than the query's (`columns`), or what a stream needs beyond what the clause checks (see
   * `eventTimeOf`).
   */
  def streamable(session: SparkSession, before: String, after: String, row: PatternRow,
      input: Seq[Attribute], columns: Seq[Attribute]): Either[String, (CompiledPattern, Option[TreeSetMember])] =
    PatternTables.attempt(session, before, after, row, input).flatMap { c =>
      PatternTables.fits(c, columns).toLeft(c).flatMap(runnable(_, input).map(c -> _))
    }

  private def runnable(c: CompiledPattern, input: Seq[Attribute]): Either[String, Option[TreeSetMember]] =
    try {
      PlanStreamingMatchRecognize.eventTimeOf(c.node)
      if (anyMatch(c)) TreeSetMember.of(c, input).map(Some(_)) else Right(None)
    } catch { case e: org.apache.spark.sql.AnalysisException => Left(e.getMessage) }

  /** Whether the pattern runs under SKIP TILL ANY MATCH (its one-pass trees). */
  def anyMatch(c: CompiledPattern): Boolean =
    c.node.options.strategy.contains(org.apache.spark.sql.matchrecognize.plans.SelectionStrategy.SkipTillAnyMatch)

  /**
   * Patterns compiled for earlier micro-batches, by what they were compiled from (the
   * clause, the row, the input's columns and the settings the matcher reads), so that a
   * micro-batch compiles only the rows that changed. Bounded: the least recently used go.
   */
  private val compiledPatterns =
    new java.util.LinkedHashMap[String, Either[(String, String), PatternSetMember]](256, 0.75f, true) {
      override def removeEldestEntry(
          e: java.util.Map.Entry[String, Either[(String, String), PatternSetMember]]): Boolean =
        size() > 4096
    }

  private def compiled(p: PatternTableStream, row: PatternRow,
      compile: () => Either[(String, String), PatternSetMember]): Either[(String, String), PatternSetMember] = {
    val conf = org.apache.spark.sql.internal.SQLConf.get
    val settings = conf.getAllConfs.filter(_._1.startsWith("spark.sql.matchRecognize.")).toSeq.sorted
    val key = Seq(p.before, p.after, row.toString,
      p.child.output.map(a => s"${a.name}#${a.exprId.id} ${a.dataType.sql}")
        .mkString(","), settings.mkString(",")).mkString("\u0000")
    val known = compiledPatterns.synchronized(Option(compiledPatterns.get(key)))
    known.getOrElse {
      val made = compile()
      compiledPatterns.synchronized(compiledPatterns.put(key, made))
      made
    }
  }

  /** The members of the set last planned for each running query, by its metrics name. */
  private val lastSets = new ConcurrentHashMap[String, Set[String]]()

  /**
   * The names of the patterns started and stopped since the last micro-batch of this run of
   * the query (all of them started at its first).
   */
  private def changes(metricsName: String, members: Seq[PatternSetMember]): (Seq[String], Seq[String]) = {
    val run = Option(org.apache.spark.SparkContext.getActive.orNull).flatMap(sc =>
      Option(sc.getLocalProperty("sql.streaming.queryId"))).getOrElse("")
    val now = members.map(m => m.id -> m.name).toMap
    val before = Option(lastSets.put(s"$run/$metricsName", now.keySet)).getOrElse(Set.empty)
    def name(id: String) = id.takeWhile(_ != '\u0000')
    ((now.keySet -- before).toSeq.map(name).sorted, (before -- now.keySet).toSeq.map(name).sorted)
  }

  // Each problem is logged once per JVM, not at every micro-batch.
  private val reported = ConcurrentHashMap.newKeySet[String]()

  private def report(table: Seq[String], name: String, problem: String,
      log: org.slf4j.Logger): Unit = {
    val line = s"Pattern '$name' of the patterns table ${table.mkString(".")} is left out: $problem"
    // Expression ids differ from one micro-batch to the next; the problem does not.
    if (reported.add(line.replaceAll("#\\d+", ""))) log.warn(line)
  }
}
