package org.apache.spark.sql.matchrecognize.execution.counting

import org.apache.spark.sql.matchrecognize.execution.MatchRecognizeLimitException

/**
 * A count of prefixes (or matches) with its values' aggregates, kept in a run of longs of
 * `width` at some offset of an array, and how two such runs add up: counts and sums add
 * (a total past BIGINT is an error, not a wrap), least and greatest take the extremes of
 * the runs that have the value at all.
 */
final class PrefixAggregates(val values: Int) extends Serializable {
  import PrefixAggregates._

  val width: Int = 1 + values * VALUE

  /** Adds the run at `src(s)` to the one at `dst(d)`. */
  def combine(dst: Array[Long], d: Int, src: Array[Long], s: Int): Unit = if (src(s + COUNT) != 0) {
    // A run of no prefixes has no value either (a value's prefixes are among its prefixes).
    dst(d + COUNT) = add(dst(d + COUNT), src(s + COUNT))
    var t = 0
    while (t < values) {
      val to = d + 1 + t * VALUE
      val from = s + 1 + t * VALUE
      if (src(from + PRESENT) != 0) {
        if (dst(to + PRESENT) == 0) {
          dst(to + LEAST) = src(from + LEAST)
          dst(to + GREATEST) = src(from + GREATEST)
        } else {
          dst(to + LEAST) = math.min(dst(to + LEAST), src(from + LEAST))
          dst(to + GREATEST) = math.max(dst(to + GREATEST), src(from + GREATEST))
        }
        dst(to + SUM) = addSum(dst(to + SUM), src(from + SUM))
        dst(to + PRESENT) = add(dst(to + PRESENT), src(from + PRESENT))
      }
      t += 1
    }
  }

  /** The sum of value `v` over `count` prefixes. */
  def sumOf(count: Long, v: Long): Long =
    try Math.multiplyExact(count, v)
    catch {
      case _: ArithmeticException => throw sumTooLarge()
    }

  def add(a: Long, b: Long): Long =
    try Math.addExact(a, b)
    catch {
      case _: ArithmeticException => throw tooMany()
    }

  private def addSum(a: Long, b: Long): Long =
    try Math.addExact(a, b)
    catch {
      case _: ArithmeticException => throw sumTooLarge()
    }
}

object PrefixAggregates {

  /**
   * The layout of a run: the count at `COUNT`, then for value t, at `1 + t * VALUE`: the sum
   * of the value over the counted prefixes (0 unless summed), how many of them have it (not
   * null), and, when that is above 0, its least and greatest.
   */
  val COUNT = 0
  val VALUE = 4
  val SUM = 0
  val PRESENT = 1
  val LEAST = 2
  val GREATEST = 3

  def tooMany(): MatchRecognizeLimitException = new MatchRecognizeLimitException(
    "SKIP TILL ANY MATCH counted more matches (or partial matches) for one partition key " +
      "than a BIGINT holds " +
      "(9,223,372,036,854,775,807); narrow the pattern (WITHIN, DEFINE conditions).")

  def sumTooLarge(): MatchRecognizeLimitException = new MatchRecognizeLimitException(
    "SKIP TILL ANY MATCH summed a measure over the matches of one partition key past what a " +
      "BIGINT holds (9,223,372,036,854,775,807); narrow the pattern (WITHIN, DEFINE " +
      "conditions) or aggregate a smaller value.")
}
