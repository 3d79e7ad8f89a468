package org.apache.spark.sql.matchrecognize.execution.automaton

import org.apache.spark.sql.matchrecognize.plans.AfterMatchSkip

/**
 * Where AFTER MATCH SKIP sends the next match's start after `m`: a position, or one of
 * the two codes for the standard's runtime errors (the variable is not in the match; the
 * target is the match's first row), which the caller reports or, when it only explores
 * possible matches ([[RangeEntry]]), sets aside.
 */
private[automaton] final class SkipTarget(spec: MatcherSpec) {

  private val skip = spec.options.effectiveSkip

  // The labels a TO FIRST / TO LAST target names (a SUBSET names several).
  private val targetLabels: Array[Int] = skip match {
    case AfterMatchSkip.ToVariable(v, _) =>
      spec.options.subsetMembers(v).getOrElse(Seq(v)).map(spec.labels.indexOf).toArray
    case _ => Array.empty
  }

  def of(m: CompletedMatch): Long = skip match {
    case AfterMatchSkip.PastLastRow => m.end + 1
    case AfterMatchSkip.ToNextRow => m.start + 1
    case AfterMatchSkip.ToVariable(_, first) =>
      val target = m.boundaryOf(targetLabels, first)
      if (target < 0) SkipTarget.VariableAbsent
      else if (target == m.start) SkipTarget.FirstRow
      else target
  }
}

private[automaton] object SkipTarget {

  /** The variable a TO FIRST / TO LAST names has no row in the match. */
  val VariableAbsent: Long = -1L

  /** The target is the match's first row, which would find the same match again. */
  val FirstRow: Long = -2L
}
