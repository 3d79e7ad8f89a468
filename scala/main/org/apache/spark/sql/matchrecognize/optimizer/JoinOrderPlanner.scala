package org.apache.spark.sql.matchrecognize.optimizer

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.optimizer.cost.{CostModel, OnePassFootprint, PatternStatistics, RatesTreeChooser}
import org.apache.spark.sql.matchrecognize.compile.anymatch._
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf._
import org.apache.spark.sql.matchrecognize.optimizer.algorithms.{AutoOrder, JoinOrderAlgorithm}
import org.apache.spark.sql.matchrecognize.plans.{Json, JoinPlanReport, KeyMicros}

/**
 * The cost-based choice of join trees (`spark.sql.matchRecognize.joinOrder`): samples the
 * input for statistics (cached), runs the configured algorithm on every alternative, and
 * writes the plan report EXPLAIN and `explain_pattern` show.
 */
final class JoinOrderPlanner(session: SparkSession, conf: SQLConf) extends JoinTreeChooser {
  import JoinOrderPlanner._

  private val requested = conf.getConf(JOIN_ORDER)
  private val latencyWeight = conf.getConf(LATENCY_WEIGHT)
  private val paperCost = conf.getConf(COST_MODEL) == "paper"
  private val candidateWeight = if (paperCost) 0.0 else conf.getConf(CANDIDATE_WEIGHT)
  private val withCandidates = conf.getConf(EXPLAIN_CANDIDATES)
  private val maxBuffered = conf.getConf(MAX_BUFFERED_PARTIAL_MATCHES)
  private val budgetMillis = conf.getConf(AUTO_TIME_BUDGET_MS)
  private val maxTreesPerKey = conf.getConf(TREES_PER_KEY)
  private val prefixRows = conf.getConf(TREES_PER_KEY_PREFIX_ROWS)
  private val minGainPerKey = conf.getConf(TREES_PER_KEY_MIN_GAIN)
  private val auto = new AutoOrder(conf.getConf(AUTO_DP_THRESHOLD), budgetMillis)

  private def algorithm(name: String): JoinOrderAlgorithm =
    if (name == "auto") auto else JoinOrderAlgorithm.named(name).get

  private val sampleRows = conf.getConf(STATISTICS_SAMPLE_ROWS)
  private val seed = conf.getConf(STATISTICS_SEED)

  /** The pattern's statistics from a sample of its input (cached), and whether they were computed now. */
  private def estimatesOf(builder: CepPlanBuilder): (Option[StatisticsEstimator.Estimates], Boolean) =
    StatisticsCache.getOrCompute[Option[StatisticsEstimator.Estimates]](
      ("join statistics", builder.node.canonicalized, sampleRows, seed, prefixRows)) {
      // Time windows measure rows per microsecond, which a block gives only when the input
      // is stored in time order; otherwise one aggregate over the input gives it.
      val time = if (builder.rowsWindow) None else Some(KeyMicros(builder.node.orderBy.head.child))
      val (sample, density) = InputSample.forStatistics(session, builder.node.child,
        builder.node.partitionBy, sampleRows, seed, time)
      val sampling = new CepPlanBuilder(builder.node.copy(child = sample.relation,
          partitionBy = builder.node.partitionBy :+ sample.block),
        CepSettings(Long.MaxValue, Long.MaxValue, JoinTreeChooser.patternOrder))
      // A sample spread over an unordered input holds too few rows of rare variables.
      val counts = density.map(_ => InputSample.passingCounts(session, builder.samplePlan))
      StatisticsEstimator.estimate(session, sampling, sample.rows, sample.blocks, 0.0, density,
        counts, prefixRows)
    }

  /** What the cost model knows of each alternative, under the configured model. */
  private def statisticsOf(builder: CepPlanBuilder, e: StatisticsEstimator.Estimates): Seq[PatternStatistics] = {
    val computed = builder.computedTrees
    builder.alternatives.zip(e.perAlternative).zipWithIndex.map { case ((s, st), i) =>
      st.copy(latencyWeight = latencyWeight, candidateWeight = candidateWeight, computed = computed(i),
        bandOrder = if (builder.bandNarrowsByOrder) s.singles else Nil,
        kleeneBounds = if (paperCost) Map.empty
        else s.kleenes.map(k => k.variable -> (k.min, k.max)).toMap,
        negations = if (paperCost) Map.empty else st.negations,
        sortWeight = if (paperCost) 0.0 else JoinOrderPlanner.SortWeight,
        spanAware = !paperCost)
    }
  }

  // The one pass sorts nothing between nodes, and extends only the tree's complete
  // matches by the closures: the same work under every tree, so no term of the choice.
  private def onePassStats(st: PatternStatistics) =
    if (paperCost) st
    else st.copy(sortWeight = 0.0, kleene = Map.empty, kleeneBounds = Map.empty,
      kleeneBindings = Map.empty, openingKleene = Set.empty)

  /**
   * The trees of the group's patterns that can share nodes, chosen together by
   * [[GroupTreeSearch]] (within `auto.timeBudgetMs`); not under `trivial` (the pattern
   * order is asked for) nor with a latency weight (the search weighs throughput only).
   */
  override def chooseTogether(builders: Seq[CepPlanBuilder], sharing: GroupSharing): Option[GroupTrees] = {
    val members = sharing.shareable
    if (requested == "trivial" || latencyWeight > 0 || members.size < 2) return None
    val stats = members.map { m =>
      val b = builders(m)
      m -> estimatesOf(b)._1.map { e =>
        val st = statisticsOf(b, e).head.copy(computed = Nil)
        if (b.requestedExecution.onePass) onePassStats(st) else st
      }
    }.toMap
    if (stats.values.exists(_.isEmpty)) return None
    val vars = members.map(m => m -> builders(m).alternatives.head.singles).toMap
    val search = new GroupTreeSearch(members, vars, m => stats(m).get,
      (m, vs, offers) =>
        if (vs.size == 1) JoinLeaf(vs.head) else algorithm(requested).plan(vs, stats(m).get.copy(computed = offers)),
      sharing, seed, budgetMillis * 1000000L, GroupSearchSteps)
    val start = System.nanoTime()
    val result = search.run()
    val millis = (System.nanoTime() - start) / 1000000
    Some(GroupTrees(result.trees,
        s"trees chosen together (${result.steps} steps of local search, $millis ms): estimated cost " +
          s"${fmtLog(result.logCost)}, against ${fmtLog(result.logOwnCost)} with each pattern's own " +
          s"tree and ${fmtLog(result.logInTurnCost)} choosing in turn"))
  }

  def choose(builder: CepPlanBuilder): ChosenTrees = {
    if (requested == "trivial" && !withCandidates) return JoinTreeChooser.patternOrder.choose(builder)
    val (estimates, fresh) = estimatesOf(builder)
    estimates match {
      case None =>
        val trees = builder.alternatives.map(s => JoinTree.leftDeep(s.singles))
        ChosenTrees(trees,
          JoinPlanReport(
            s"joinOrder=$requested: the statistics sample is empty, pattern order " +
              trees.map(_.sql).mkString("; "),
            Json.obj("algorithm" -> Json.str(requested), "chosen" -> Json.str("trivial"),
              "reason" -> Json.str("the statistics sample has no rows"),
              "alternatives" -> Json.arr(trees.map(t => Json.obj("tree" -> Json.str(t.sql)))))))
      case Some(e) =>
        val joinStats = statisticsOf(builder, e)
        def planAll(onePass: Boolean) = builder.alternatives.zip(joinStats).map { case (s, st) =>
          plan(s, if (onePass) onePassStats(st) else st)
        }
        val requestedExecution = builder.requestedExecution
        val onePassPlans = if (requestedExecution.onePass) Some(planAll(onePass = true)) else None
        val footprint = onePassPlans.map(footprintPerKey(builder, joinStats, _))
        val execution = footprint.filter(_ => requestedExecution.auto).map { f =>
          if (f > maxBuffered / 2.0) TreeExecutionChoice(onePass = false,
            s"cepExecution=joins (auto: one pass would buffer about ${fmt(f)} partial matches " +
              s"per key, over half of maxBufferedPartialMatches = $maxBuffered)")
          else TreeExecutionChoice(onePass = true,
            s"cepExecution=tree (auto: one pass over each partition key, about ${fmt(f)} " +
              s"partial matches buffered per key)")
        }
        val onePassRuns = onePassPlans.filter(_ => execution.forall(_.onePass))
        val planned = onePassRuns.getOrElse(planAll(onePass = false))
        val perKey = onePassRuns.flatMap(treesPerKey(builder, e, _))
        val base = report(builder, e, fresh, planned, footprint)
        ChosenTrees(planned.map(_.tree), perKey.fold(base)(k => withTreesPerKey(base, k._2)), execution,
          perKey.map(_._1))
    }
  }

  /**
   * Trees per key (see [[TreeClasses]]) for a one-pass pattern of one alternative planned on
   * its own, when the sample's groups' rates make them worth it.
   */
  private def treesPerKey(builder: CepPlanBuilder, e: StatisticsEstimator.Estimates,
      planned: Seq[Planned]): Option[(KeyTrees, TreeClasses.Classes)] = planned match {
    case Seq(p)
        if maxTreesPerKey > 1 && requested != "trivial" && latencyWeight == 0 &&
          !builder.inGroup && p.sequence.singles.size > 2 =>
      TreeClasses.choose(p.tree, p.stats, e.groups, st => algorithm(requested).plan(p.sequence.singles, st),
        maxTreesPerKey, minGainPerKey, 2 * budgetMillis).map { c =>
        (KeyTrees(c.others,
            RatesTreeChooser(p.tree +: c.others, p.stats, prefixRows, minGainPerKey,
              builder.relatedPairs(p.sequence))), c)
      }
    case _ => None
  }

  private def withTreesPerKey(r: JoinPlanReport, c: TreeClasses.Classes): JoinPlanReport = {
    def pct(share: Double) = s"${math.round(share * 100)}%"
    val trees = c.others.zip(c.shares.tail).map { case (t, sh) =>
      if (sh > 0) s"${t.sql} (${pct(sh)})" else s"${t.sql} (for rates the sample shows moving)"
    }
    JoinPlanReport(
      r.summary + s" | trees per key: the tree above for ${pct(c.shares.head)} of the sampled " +
        s"rows, ${trees.mkString(", ")}, each key's chosen from its first $prefixRows rows and " +
        s"again after each $prefixRows more (estimated cost ${fmtLog(c.logCostPerKey)} against " +
        s"${fmtLog(c.logCostOne)} with one tree)",
      r.json.stripSuffix("}") + ", " + Json.str("trees_per_key") + ": " + Json.obj(
        "prefix_rows" -> Json.num(prefixRows.toDouble),
        "cost_one_tree" -> Json.num(math.exp(c.logCostOne)),
        "cost_per_key" -> Json.num(math.exp(c.logCostPerKey)),
        "trees" -> Json.arr(c.others.zip(c.shares.tail).map { case (t, sh) =>
          Json.obj("tree" -> Json.str(t.sql), "sampled_share" -> Json.num(sh),
            "for_drift" -> Json.bool(sh == 0))
        }),
        "own_tree_sampled_share" -> Json.num(c.shares.head)) + "}")
  }

  /**
   * The partial matches the one pass would buffer per key, summed over the trees it runs
   * (one per conjunction: its first order's tree keeps every order of the conjunction).
   */
  private def footprintPerKey(builder: CepPlanBuilder, stats: Seq[PatternStatistics],
      planned: Seq[Planned]): Double =
    CepPattern.conjunctions(builder.alternatives).map { group =>
      def orders(n: JoinTree): Int =
        group.map(i => builder.alternatives(i).singles.filter(n.variables)).distinct.size
      OnePassFootprint.perKey(planned(group.head).tree, stats(group.head), orders)
    }.sum

  private def run(name: String, s: CepSequence, stats: PatternStatistics): Candidate = {
    val start = System.nanoTime()
    val tree = if (s.singles.size == 1) JoinLeaf(s.singles.head)
    else algorithm(name).plan(s.singles, stats)
    val millis = (System.nanoTime() - start) / 1e6
    Candidate(name, tree, CostModel.logTreeObjective(tree, stats), millis)
  }

  private def plan(s: CepSequence, stats: PatternStatistics): Planned = {
    val chosen = run(requested, s, stats)
    val others = if (!withCandidates) Nil
    else ("auto" +: JoinOrderAlgorithm.all.map(_.name)).filter(_ != requested).map(run(_, s, stats))
    Planned(s, stats, chosen.tree, chosen, (chosen +: others).sortBy(_.logCost))
  }

  // ---- the report ------------------------------------------------------------------------

  private def delegate(s: CepSequence): String =
    if (requested == "auto") s"auto→${auto.delegate(s.singles.size)}" else requested

  private def fmt(d: Double): String =
    if (d == 0 || (math.abs(d) >= 1e-3 && math.abs(d) < 1e5)) "%.3g".format(d).stripSuffix(".")
    else "%.2e".format(d)

  private def fmtLog(l: Double): String =
    if (l < 690) fmt(math.exp(l)) else "e^%.1f".formatLocal(Locale.ROOT, l)

  private def report(builder: CepPlanBuilder, e: StatisticsEstimator.Estimates, fresh: Boolean,
      planned: Seq[Planned], footprint: Option[Double]): JoinPlanReport = {
    val unit = if (builder.rowsWindow) "rows" else "microseconds"
    val summary = planned.zipWithIndex.map { case (p, i) =>
      val st = p.stats
      val perWindow = p.sequence.singles.map(v => s"$v ${fmt(st.window * st.rates(v))}")
      val sels = st.selectivities.toIndexedSeq.sortBy(_._1).map { case ((a, b), v) => s"$a~$b ${fmt(v)}" }
      (if (planned.size > 1) s"alternative ${i + 1}: " else "") +
      s"joinOrder=${delegate(p.sequence)} ${p.tree.sql} cost ${fmtLog(p.chosen.logCost)} | " +
      s"rows per window: ${perWindow.mkString(", ")}" +
      (if (sels.isEmpty) "" else s" | selectivity: ${sels.mkString(", ")}") +
      st.negations.toIndexedSeq.sortBy(_._1).map { case (d, n) =>
        s" | !$d passes ${fmt(n.passRate)}${if (n.measured) " (measured)" else ""}"
      }.mkString
    }.mkString("; ") + s" | sample ${e.sampleRows} rows in ${e.blocks} block(s)" +
      (if (e.densityFromInput) ", density over the input (not stored in ORDER BY order)" else "") +
      (if (e.ratesFromInput) ", rates counted over the input" else "") +
      (if (fresh) "" else ", cached")

    def treeJson(t: JoinTree, pm: Map[JoinTree, Double]): String = t match {
      case JoinLeaf(v) => Json.obj("variable" -> Json.str(v), "partial_matches" -> Json.num(math.exp(pm(t))))
      case JoinNode(l, r) => Json.obj("left" -> treeJson(l, pm), "right" -> treeJson(r, pm),
          "partial_matches" -> Json.num(math.exp(pm(t))))
    }
    def candidateJson(c: Candidate): String = Json.obj("algorithm" -> Json.str(c.algorithm),
      "tree" -> Json.str(c.tree.sql), "shape" -> Json.str(shape(c.tree)),
      "cost" -> Json.num(math.exp(c.logCost)), "log_cost" -> Json.num(c.logCost),
      "planning_ms" -> Json.num(c.millis))
    val alternatives = planned.map { p =>
      val st = p.stats
      Json.obj(
        "pattern" -> Json.str(p.sequence.sql),
        "algorithm" -> Json.str(delegate(p.sequence)),
        "tree" -> Json.str(p.tree.sql),
        "shape" -> Json.str(shape(p.tree)),
        "cost" -> Json.num(math.exp(p.chosen.logCost)),
        "log_cost" -> Json.num(p.chosen.logCost),
        "planning_ms" -> Json.num(p.chosen.millis),
        "plan" -> treeJson(p.tree, CostModel.logPartialMatches(p.tree, st).toMap),
        "rates" -> Json.obj(st.rates.toIndexedSeq.sortBy(_._1).map { case (v, r) => v -> Json.num(r) }: _*),
        "rows_per_window" -> Json.obj(st.rates.toIndexedSeq.sortBy(_._1).map { case (v, r) =>
          v -> Json.num(r * st.window)
        }: _*),
        "selectivities" -> Json.arr(st.selectivities.toIndexedSeq.sortBy(_._1).map { case ((a, b), v) =>
          Json.obj("left" -> Json.str(a), "right" -> Json.str(b), "value" -> Json.num(v))
        }),
        "kleene" -> Json.arr(st.kleene.toIndexedSeq.sortBy(_._1).map { case (k, (r, needs)) =>
          Json.obj("variable" -> Json.str(k), "rows_per_window" -> Json.num(r * st.window),
            "bindings" -> Json.num(math.exp(st.logKleeneFactor(k))),
            "bindings_measured" -> Json.bool(st.kleeneBounds.contains(k) &&
              st.kleeneBindings.contains(k)),
            "attached_where_bound" -> Json.arr(needs.toIndexedSeq.sorted.map(Json.str)))
        }),
        "negations" -> Json.arr(st.negations.toIndexedSeq.sortBy(_._1).map { case (d, n) =>
          Json.obj("variable" -> Json.str(d), "rows_per_window" -> Json.num(n.rate * st.window),
            "pass_rate" -> Json.num(n.passRate), "pass_rate_measured" -> Json.bool(n.measured),
            "checked_where_bound" -> Json.arr(n.needs.toIndexedSeq.sorted.map(Json.str)))
        }),
        "candidates" -> Json.arr(p.candidates.map(candidateJson)))
    }
    JoinPlanReport(summary,
      Json.obj(
        "semantics" -> Json.str("SKIP TILL ANY MATCH"),
        "algorithm" -> Json.str(requested),
        "latency_weight" -> Json.num(latencyWeight),
        "cost_model" -> Json.str(if (paperCost) "paper" else "spark"),
        "candidate_weight" -> Json.num(candidateWeight),
        "window" -> Json.num(planned.headOption.map(_.stats.window).getOrElse(0.0)),
        "window_unit" -> Json.str(unit),
        "sample" -> Json.obj("rows" -> Json.num(e.sampleRows), "blocks" -> Json.num(e.blocks),
          "rows_per_key_per_unit" -> Json.num(e.rowsPerKeyPerUnit),
          "density_from" -> Json.str(if (e.densityFromInput) "input" else "sample"),
          "rates_from" -> Json.str(if (e.ratesFromInput) "input" else "sample"),
          "cached" -> Json.bool(!fresh)),
        "one_pass_buffered_per_key" -> footprint.map(Json.num).getOrElse("null"),
        "max_buffered_partial_matches" -> Json.num(maxBuffered.toDouble),
        "alternatives" -> Json.arr(alternatives)))
  }

  private def shape(t: JoinTree): String = t match {
    case _: JoinLeaf => "leaf"
    case _ if t.isLeftDeep => "left-deep"
    case _ => "bushy"
  }
}

object JoinOrderPlanner {

  /**
   * sigma of the `spark` cost model: sorting a row of an intermediate result costs about as
   * much as producing it (a KleeneClosure re-sorting 5.2M rows spent 1.8 s, the join that
   * made them about 1 s, in the JQPG benchmark at 10M events).
   */
  val SortWeight = 1.0

  /** The most steps of the group's local search (each re-plans two patterns). */
  val GroupSearchSteps = 400

  private final case class Candidate(algorithm: String, tree: JoinTree, logCost: Double,
      millis: Double)
  private final case class Planned(sequence: CepSequence, stats: PatternStatistics,
      tree: JoinTree, chosen: Candidate, candidates: Seq[Candidate])
}
