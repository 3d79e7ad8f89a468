package org.apache.spark.sql.matchrecognize.optimizer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.matchrecognize.compile.anymatch.{CepPlanBuilder, CepSettings, CepTaskChooser, JoinTree, JoinTreeChooser}
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.plans.{MatchRecognize, SelectionStrategy}

/**
 * Replaces a MATCH_RECOGNIZE under SKIP TILL ANY MATCH by its join-tree plan: the join
 * tree of each alternative is chosen here (`spark.sql.matchRecognize.joinOrder`, by
 * [[JoinOrderPlanner]]), then [[CepPlanBuilder]] builds the plan.
 */
case class PlanAnyMatchPatterns(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case m: MatchRecognize if m.options.strategy.contains(SelectionStrategy.SkipTillAnyMatch) =>
      new CepPlanBuilder(m, PlanAnyMatchPatterns.settings(conf, Some(session))).build()
  }
}

object PlanAnyMatchPatterns {

  /**
   * Limits and tree choice from the session's conf. Without a session (the analyzer's
   * check that the pattern can be planned at all) no statistics are gathered: pattern order.
   */
  def settings(conf: SQLConf, session: Option[SparkSession]): CepSettings = {
    val forced = conf.getConf(MatchRecognizeConf.FORCED_JOIN_TREE).trim
    val forcedTrees = if (forced.isEmpty) Nil else forced.split(";").map(_.trim).toIndexedSeq
    val chosen = forcedTrees match {
      case Seq(r) if r.startsWith("random:") =>
        JoinTreeChooser.fixed("forced " + r,
          (i, s) =>
            JoinTree.random(s.singles, new scala.util.Random(r.stripPrefix("random:").toLong * 31 + i)))
      case Seq() => session.map(new JoinOrderPlanner(_, conf)).getOrElse(JoinTreeChooser.patternOrder)
      case trees => JoinTreeChooser.fixed("forced", (i, _) => JoinTree.parse(trees(i % trees.size)))
    }
    val keyTrees = conf.getConf(MatchRecognizeConf.FORCED_KEY_TREES).split(";").map(_.trim).filter(_.nonEmpty)
    val chooser =
      if (keyTrees.isEmpty) chosen
      else new ForcedKeyTrees(chosen, keyTrees.toIndexedSeq.map(JoinTree.parse),
        conf.getConf(MatchRecognizeConf.TREES_PER_KEY_PREFIX_ROWS))
    CepSettings(
      conf.getConf(MatchRecognizeConf.MAX_KLEENE_BINDINGS),
      conf.getConf(MatchRecognizeConf.MAX_MATCHES_PER_PARTITION),
      chooser,
      new CepTaskChooser(conf, session.map(InputSpan.reader)),
      conf.getConf(MatchRecognizeConf.CEP_EXECUTION),
      conf.getConf(MatchRecognizeConf.MAX_BUFFERED_PARTIAL_MATCHES))
  }

  /**
   * [[settings]] for a pattern over a stream planned on its own: its keys may run other trees
   * as the rates their rows show drift ([[StreamKeyTrees]]).
   */
  def streamSettings(conf: SQLConf): CepSettings = {
    val s = settings(conf, None)
    s.copy(chooser = new StreamKeyTrees(s.chooser, conf))
  }
}
