package org.apache.spark.sql.matchrecognize.compile.automaton

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.matchrecognize.plans.PatternNavigation

/**
 * How many rows of its partition a pattern reads around the current row by position
 * (PREV / NEXT and their physical offsets): behind it, and ahead of it in DEFINE and in
 * MEASURES. The matcher sizes its row buffer by these; the prefilter widens its ranges.
 */
final case class NavigationReach(behind: Int, defineAhead: Int, measureAhead: Int) {
  def ahead: Int = math.max(defineAhead, measureAhead)
}

object NavigationReach {
  def of(defines: Seq[Expression], measures: Seq[Expression]): NavigationReach = {
    def offsets(es: Seq[Expression]): Seq[Int] =
      es.flatMap(_.collect { case n: PatternNavigation => n.physicalOffset })
    NavigationReach(
      behind = (0 +: offsets(defines ++ measures).filter(_ < 0).map(-_)).max,
      defineAhead = (0 +: offsets(defines).filter(_ > 0)).max,
      measureAhead = (0 +: offsets(measures).filter(_ > 0)).max)
  }
}
