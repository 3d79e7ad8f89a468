package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPlanBuilder, ChosenTrees, JoinTree, JoinTreeChooser, KeyTrees}
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf._
import org.apache.spark.sql.matchrecognize.optimizer.algorithms.{DpBushy, GreedyOrder}
import org.apache.spark.sql.matchrecognize.optimizer.cost.{PatternStatistics, RatesTreeChooser}

/**
 * Trees per key for a SKIP TILL ANY MATCH pattern over a stream, which has no sample to plan
 * by: a key starts with the tree `base` chooses (the pattern order), and may move, as the
 * rates its latest rows show drift, to the tree that is best when one variable is rare
 * ([[TreeClasses.RareFactor]] times rarer than the others), one per variable as far as
 * `treesPerKey.max` allows. A stream has no sample to measure selectivities on: the trees are
 * chosen under assumed ones ([[StreamKeyTrees.evenRates]]), and a key choosing among them
 * reads, beside its rates, the pass rates its own rows show for the pairs a condition
 * relates, once enough pairs were tested.
 *
 * The trees must come out the same each time the query starts, since a key's state names the
 * tree it runs by its number: the search is exact (DP over bushy trees) up to
 * `auto.dpThreshold` variables and greedy beyond, never bounded by time.
 */
final class StreamKeyTrees(base: JoinTreeChooser, conf: SQLConf) extends JoinTreeChooser {

  private val maxTrees = conf.getConf(TREES_PER_KEY)

  override def choose(builder: CepPlanBuilder): ChosenTrees = {
    val chosen = base.choose(builder)
    val singles = if (builder.alternatives.size == 1) builder.alternatives.head.singles else Nil
    val fits = maxTrees > 1 && conf.getConf(JOIN_ORDER) != "trivial" && conf.getConf(LATENCY_WEIGHT) == 0 &&
      conf.getConf(FORCED_JOIN_TREE).trim.isEmpty && !builder.inGroup && singles.size > 2 && chosen.perKey.isEmpty
    if (!fits) chosen
    else {
      val own = chosen.trees.head
      val s = builder.alternatives.head
      val pairs = builder.relatedPairs(s)
      val related = pairs.map { case (a, b) => Set(a, b) }.toSet
      val even = StreamKeyTrees.evenRates(singles, builder.window, (a, b) => related(Set(a, b)))
      val plan: PatternStatistics => JoinTree =
        if (singles.size <= conf.getConf(AUTO_DP_THRESHOLD)) DpBushy.plan(singles, _)
        else GreedyOrder.plan(singles, _)
      val others = singles.sorted.map { v =>
        plan(even.copy(rates = even.rates.updated(v, even.rates(v) / TreeClasses.RareFactor)))
      }.distinct.filterNot(_ == own).take(maxTrees - 1)
      if (others.isEmpty) chosen
      else chosen.copy(perKey = Some(KeyTrees(others,
          RatesTreeChooser(own +: others, even,
            conf.getConf(TREES_PER_KEY_PREFIX_ROWS), conf.getConf(TREES_PER_KEY_MIN_GAIN), pairs))))
    }
  }
}

object StreamKeyTrees {

  /** Rows of each variable in one window when none is rarer than another. */
  val RowsPerWindow = 10.0

  /**
   * The share of pairs of two variables' rows in one window that a condition relating them
   * passes, with no sample to measure it: a tenth (as optimizers assume for a predicate they
   * know nothing of), times a half for their order; a half for the order alone.
   */
  val RelatedSelectivity = 0.05
  val OrderSelectivity = 0.5

  /**
   * Statistics with every variable at [[RowsPerWindow]], the pairs `related` by a condition
   * at [[RelatedSelectivity]] and the others at [[OrderSelectivity]].
   */
  def evenRates(variables: Seq[String], window: Long, related: (String, String) => Boolean): PatternStatistics = {
    val w = math.max(window, 1L).toDouble
    val pairs = for (i <- variables.indices; j <- i + 1 until variables.size) yield {
      val (a, b) = (variables(i), variables(j))
      (a, b) -> (if (related(a, b)) RelatedSelectivity else OrderSelectivity)
    }
    PatternStatistics(w, variables.map(_ -> RowsPerWindow / w).toMap, pairs.toMap)
  }
}
