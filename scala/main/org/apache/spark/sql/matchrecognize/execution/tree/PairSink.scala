package org.apache.spark.sql.matchrecognize.execution.tree

/**
 * A receiver of a tree's matches that also takes a root match as the pair of partial
 * matches it combines, without the match being built: when nothing checks the root's
 * matches, [[TreeGraphEvaluator]] hands them over this way, and
 * `TreeGraphEvaluator.pairRow` reads one. Where millions of matches come out of a few thousand
 * partial matches, the combined objects were most of the pass's allocation.
 */
trait PairSink extends (PartialMatch => Unit) {
  def pair(left: PartialMatch, right: PartialMatch): Unit
}
