package org.apache.spark.sql.matchrecognize

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.matchrecognize.analysis.ResolveMatchRecognize
import org.apache.spark.sql.matchrecognize.conf.MatchRecognizeConf
import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeStrategy
import org.apache.spark.sql.matchrecognize.parser.MatchRecognizeParser

/**
 * Entry point: `spark.sql.extensions=org.apache.spark.sql.matchrecognize.MatchRecognizeExtensions`.
 */
class MatchRecognizeExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    // Registers the spark.sql.matchRecognize.* keys so that SET validates them.
    MatchRecognizeConf.entries
    // MATCH_RECOGNIZE is not in Spark's grammar: the parser cuts the clause out and lets
    // Spark parse the rest of the statement.
    extensions.injectParser((_, delegate) => new MatchRecognizeParser(delegate))
    // Resolution runs in the analyzer's fixed-point batch, after Spark's rules have
    // resolved the columns and functions inside the clause.
    extensions.injectResolutionRule(session => ResolveMatchRecognize(session))
    // The resolved node is executed by the project's own operator.
    extensions.injectPlannerStrategy(_ => MatchRecognizeStrategy)
  }
}
