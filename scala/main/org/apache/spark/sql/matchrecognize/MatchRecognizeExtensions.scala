package org.apache.spark.sql.matchrecognize

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.matchrecognize.analysis.{ResolveMatchRecognize, ResolvePatternTables}
import org.apache.spark.sql.matchrecognize.compile.anymatch.CheckAnyMatchPatterns
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.execution.planning.MatchRecognizeStrategy
import org.apache.spark.sql.matchrecognize.execution.joins.ShareCachedInputScans
import org.apache.spark.sql.matchrecognize.optimizer.{CountAnyMatchPatterns, PlanAnyMatchPatterns, PlanPatternGroups, PruneMatchRecognizeInput}
import org.apache.spark.sql.matchrecognize.optimizer.prefilter.PrefilterStandardPatterns
import org.apache.spark.sql.matchrecognize.parser.MatchRecognizeParser
import org.apache.spark.sql.matchrecognize.streaming.{PatternTableStatusCall, PlanPatternTableStreams, PlanStreamingMatchRecognize, ResolvePatternTableStatus, TransformWithStateLowering}

/**
 * Entry point: `spark.sql.extensions=org.apache.spark.sql.matchrecognize.MatchRecognizeExtensions`.
 */
class MatchRecognizeExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // Registers the spark.sql.matchRecognize.* keys so that SET validates them.
    MatchRecognizeConf.register()
    // MATCH_RECOGNIZE is not in Spark's grammar: the parser cuts the clause out and lets
    // Spark parse the rest of the statement.
    extensions.injectParser((_, delegate) => new MatchRecognizeParser(delegate))
    // Resolution runs in the analyzer's fixed-point batch, after Spark's rules have
    // resolved the columns and functions inside the clause.
    extensions.injectResolutionRule(session => ResolveMatchRecognize(session))
    // PATTERNS FROM table: a union of the table's patterns in batch, a node planned at each
    // micro-batch over a stream.
    extensions.injectResolutionRule(session => ResolvePatternTables(session))
    // What a table's rows become under such a query, as SQL (for Spark Connect clients too).
    PatternTableStatusCall.inject(extensions)
    extensions.injectResolutionRule(session => ResolvePatternTableStatus(session))
    // What a SKIP TILL ANY MATCH node's plan could not express fails analysis, not the run.
    extensions.injectPostHocResolutionRule(_ => CheckAnyMatchPatterns)
    // Over a streaming input the resolved node becomes Spark's stateful operator, before
    // Spark's streaming checks read the plan.
    extensions.injectPostHocResolutionRule(_ => PlanStreamingMatchRecognize)
    // writeStream.start(): the stateful operator for the trigger and the output mode, and our
    // error for a mode no operator serves, before Spark's.
    TransformWithStateLowering.injectOperatorChoice(extensions)
    // A stream's patterns from a table are read, and their operator planned, per micro-batch.
    extensions.injectOptimizerRule(session => PlanPatternTableStreams(session))
    // SKIP TILL ANY MATCH becomes a join-tree plan while the optimizer can still prune and
    // push down around it; the rule fires once per node (the node disappears).
    // A count(*) of the matches per partition key is computed without building them, when
    // the pattern allows it; before the node becomes its plan.
    extensions.injectOptimizerRule(session => CountAnyMatchPatterns(session))
    extensions.injectOptimizerRule(session => PlanPatternGroups(session))
    extensions.injectOptimizerRule(session => PlanAnyMatchPatterns(session))
    // Standard semantics: the join prefilter in front of the automaton, where it applies.
    extensions.injectOptimizerRule(session => PrefilterStandardPatterns(session))
    // Then the columns the matcher does not need are pruned in the logical plan itself.
    extensions.injectOptimizerRule(_ => PruneMatchRecognizeInput)
    // The resolved node, and the join-tree nodes, run on the project's own operators.
    extensions.injectPlannerStrategy(_ => MatchRecognizeStrategy)
    // Under adaptive execution, a cached input keeps the one shared shuffle of an ANY MATCH plan.
    extensions.injectQueryStagePrepRule(_ => ShareCachedInputScans)
  }
}
