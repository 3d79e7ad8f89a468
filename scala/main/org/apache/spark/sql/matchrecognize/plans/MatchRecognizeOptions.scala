package org.apache.spark.sql.matchrecognize.plans

/** ONE ROW PER MATCH or one of the ALL ROWS PER MATCH variants. */
sealed trait RowsPerMatch { def sql: String }
object RowsPerMatch {
  case object OneRow extends RowsPerMatch { def sql = "ONE ROW PER MATCH" }
  case object AllRowsShowEmpty extends RowsPerMatch { def sql = "ALL ROWS PER MATCH SHOW EMPTY MATCHES" }
  case object AllRowsOmitEmpty extends RowsPerMatch { def sql = "ALL ROWS PER MATCH OMIT EMPTY MATCHES" }
  case object AllRowsWithUnmatched extends RowsPerMatch {
    def sql = "ALL ROWS PER MATCH WITH UNMATCHED ROWS"
  }
}

/** Where matching resumes after a non-empty match. */
sealed trait AfterMatchSkip { def sql: String }
object AfterMatchSkip {
  case object PastLastRow extends AfterMatchSkip { def sql = "AFTER MATCH SKIP PAST LAST ROW" }
  case object ToNextRow extends AfterMatchSkip { def sql = "AFTER MATCH SKIP TO NEXT ROW" }

  /** `TO FIRST v` (first = true) or `TO [LAST] v`; `v` may be a SUBSET name. */
  final case class ToVariable(variable: String, first: Boolean) extends AfterMatchSkip {
    def sql: String =
      s"AFTER MATCH SKIP TO ${if (first) "FIRST" else "LAST"} ${RowPattern.quoteIfNeeded(variable)}"
  }
}

/** Event selection strategy (docs/design.md, 1.3), written in place of AFTER MATCH SKIP. */
sealed trait SelectionStrategy { def sql: String }
object SelectionStrategy {
  case object SkipTillNextMatch extends SelectionStrategy { def sql = "SKIP TILL NEXT MATCH" }
  case object SkipTillAnyMatch extends SelectionStrategy { def sql = "SKIP TILL ANY MATCH" }
}

/** `WITHIN INTERVAL ...` (microseconds of a day-time interval) or `WITHIN n ROWS`. */
sealed trait WithinClause { def sql: String }
object WithinClause {
  final case class Interval(micros: Long, text: String) extends WithinClause {
    def sql: String = s"WITHIN $text"
  }
  final case class Rows(count: Long) extends WithinClause { def sql: String = s"WITHIN $count ROWS" }
}

/** `SUBSET name = (a, b, ...)`. */
final case class SubsetDefinition(name: String, members: Seq[String]) {
  def sql: String = s"${RowPattern.quoteIfNeeded(name)} = " +
    members.map(RowPattern.quoteIfNeeded).mkString("(", ", ", ")")
}

/**
 * The non-expression parts of a MATCH_RECOGNIZE clause, as written. Expressions are kept
 * in the logical nodes themselves so that Spark's analyzer rules can see and resolve them.
 *
 * @param sqlText the whole statement, and `clauseStart` the offset of MATCH_RECOGNIZE in it,
 *                so that analysis errors can quote the user's text.
 */
final case class MatchRecognizeOptions(
    rowsPerMatch: RowsPerMatch,
    afterMatchSkip: Option[AfterMatchSkip],
    strategy: Option[SelectionStrategy],
    pattern: RowPattern,
    within: Option[WithinClause],
    subsets: Seq[SubsetDefinition],
    /** Variables named in DEFINE, in order; aligned with the node's `defines`. */
    definedVariables: Seq[String],
    /** PATTERN variables that were written back-quoted (their case is significant). */
    quotedVariables: Set[String] = Set.empty,
    /** Set by the optimizer: whether the join prefilter runs in front of the automaton. */
    prefilter: Option[PrefilterDecision] = None) {

  /** Primary pattern variables in order of first appearance in PATTERN. */
  def patternVariables: Seq[String] = pattern.variables

  def effectiveSkip: AfterMatchSkip = afterMatchSkip.getOrElse(AfterMatchSkip.PastLastRow)

  def subsetMembers(name: String): Option[Seq[String]] = subsets.find(_.name == name).map(_.members)
}

/**
 * The optimizer's decision on the join prefilter of a standard-semantics pattern: when
 * applied, `startFlag` is the input column that tells the automaton which rows may start a
 * match (rows inside a candidate range); `note` says what was done or why not (EXPLAIN).
 */
final case class PrefilterDecision(startFlag: Option[org.apache.spark.sql.catalyst.expressions.Attribute],
    note: String)
