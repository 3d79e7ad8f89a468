package org.apache.spark.sql.matchrecognize.parser

/**
 * Size limits of a MATCH_RECOGNIZE clause, checked while parsing so that an oversized
 * clause is refused with a positioned syntax error before any recursion or allocation
 * grows with it (the Python checker enforces the same limits with the same messages).
 */
object ParserLimits {

  /**
   * Groups, exclusions and PERMUTE lists nested in each other in PATTERN. Every pass over a
   * pattern (parsing, analysis, automaton compilation, the Python checker) recurses once or
   * more per level; hand-written patterns nest a few levels, and 100 keeps the Python
   * checker well inside the interpreter's default recursion limit of 1000 whatever the
   * depth of its caller.
   */
  val MaxPatternNesting = 100

  /**
   * Distinct pattern variables in PATTERN (and so DEFINE items). Each variable gets its own
   * condition, slot and automaton label, and each DEFINE item is parsed on its own; real
   * patterns use a handful. With 1000 variables, each with a DEFINE, a query still plans
   * and runs (in about a minute on two cores), while 10,000 exhaust the driver's memory.
   */
  val MaxPatternVariables = 1000

  def nestingTooDeep: String =
    s"PATTERN nests groups more than $MaxPatternNesting levels deep (pattern nesting depth limit)"

  def tooManyVariables: String =
    s"PATTERN has more than $MaxPatternVariables distinct pattern variables " +
      "(pattern variable limit)"

  def tooManyDefines: String =
    s"DEFINE has more than $MaxPatternVariables items (pattern variable limit)"
}
