package org.apache.spark.sql.matchrecognize.analysis

import org.apache.spark.sql.matchrecognize.errors.MatchRecognizeErrors.analysis
import org.apache.spark.sql.matchrecognize.plans._

/**
 * The pattern shapes SKIP TILL ANY MATCH accepts (docs/design.md, 1.4): sequences, PERMUTE,
 * alternation and Kleene closure of single variables, with negation `!V` between positive
 * elements or trailing. Everything else is rejected here, naming the construct.
 */
object AnyMatchChecks {

  def check(o: MatchRecognizeOptions): Unit = {
    if (o.within.isEmpty) {
      throw analysis("ANY_MATCH_WITHOUT_WITHIN",
        "SKIP TILL ANY MATCH requires a WITHIN clause (WITHIN INTERVAL '...' <unit> or " +
          "WITHIN <n> ROWS) to bound the matches.")
    }
    o.pattern.foreach {
      case _: Exclusion => reject("pattern exclusion {- ... -}")
      case PartitionStartAnchor | PartitionEndAnchor => reject("anchors ^ and $")
      case EmptyPattern => reject("the empty pattern ()")
      case q: Quantified if !q.greedy => reject(s"reluctant quantifier ${q.quantifierSql}")
      case Quantified(_: Negation, _, _, _) =>
        throw analysis("INVALID_NEGATION", "negation !V cannot be quantified.")
      case q @ Quantified(inner, _, _, _) if !inner.isInstanceOf[PatternVariable] =>
        if (inner.exists(_.isInstanceOf[Negation])) {
          throw analysis("INVALID_NEGATION", "negation !V cannot occur under a quantifier.")
        }
        reject(s"quantifier ${q.quantifierSql} on a group (Kleene closure applies to single " +
          "variables)")
      case p: Permute if p.items.exists(_.exists(_.isInstanceOf[Negation])) =>
        throw analysis("INVALID_NEGATION", "negation !V cannot occur inside PERMUTE.")
      case _ =>
    }
    checkNegationPlacement(o.pattern, topLevel = true)
  }

  /** A negation needs a positive element before it, and after it unless it ends the pattern. */
  private def checkNegationPlacement(p: RowPattern, topLevel: Boolean): Unit = p match {
    case _: Negation =>
      throw analysis("INVALID_NEGATION",
        "negation !V must stand between positive pattern elements (or end the pattern); " +
          "a pattern cannot consist of a negation alone.")
    case Concatenation(items) =>
      val positive = items.map(!_.isInstanceOf[Negation])
      if (!positive.head) {
        throw analysis("INVALID_NEGATION", s"negation ${items.head.sql} cannot start a pattern.")
      }
      if (!topLevel && !positive.last) {
        throw analysis("INVALID_NEGATION",
          s"negation ${items.last.sql} cannot end an alternative or a group.")
      }
      items.filterNot(_.isInstanceOf[Negation]).foreach(checkNegationPlacement(_, topLevel = false))
    case Alternation(items) => items.foreach(checkNegationPlacement(_, topLevel = false))
    case other => other.children.foreach(checkNegationPlacement(_, topLevel = false))
  }

  private def reject(construct: String): Nothing =
    throw analysis("NOT_ALLOWED_WITH_ANY_MATCH", s"$construct is not allowed with SKIP TILL ANY MATCH.")
}
