package org.apache.spark.sql.matchrecognize.parser

import java.util.Locale
import java.util.concurrent.TimeUnit

import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.catalyst.util.IntervalUtils
import org.apache.spark.sql.types.{CalendarIntervalType, DayTimeIntervalType}
import org.apache.spark.unsafe.types.CalendarInterval

/** The interval of `WITHIN INTERVAL ...`: its words, its text as shown, its length. */
private[parser] object WithinInterval {

  /**
   * The units of Spark's interval literals, singular and plural, TO and INTERVAL: the words
   * a WITHIN interval may hold. YEAR and MONTH make a year-month interval, and a sum of
   * intervals is no literal: WITHIN refuses them with its own message.
   */
  private val Words: Set[String] =
    Set("WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "YEAR", "MONTH")
      .flatMap(u => Seq(u, u + "S")) ++ Set("TO", "INTERVAL")

  /** The first word of the interval's tokens that is no interval unit (`FORTNIGHT`). */
  def unknownUnit(tokens: Seq[Token]): Option[Token] =
    tokens.find(t => t.kind == TokenKind.Word && !Words.contains(t.text.toUpperCase(Locale.ROOT)))

  /** The interval as written, a comment inside it shown as one space. */
  def text(sql: String, tokens: IndexedSeq[Token]): String =
    tokens.indices.map { k =>
      val gap = if (k == 0) "" else sql.substring(tokens(k - 1).end, tokens(k).start)
      (if (gap.trim.isEmpty) gap else " ") + tokens(k).text
    }.mkString

  /** The length in microseconds of a day-time interval literal, None for anything else. */
  def micros(e: Expression): Option[Long] = e match {
    case Literal(v: Long, _: DayTimeIntervalType) => Some(v)
    case Literal(v: CalendarInterval, CalendarIntervalType) if v.months == 0 =>
      Some(IntervalUtils.getDuration(v, TimeUnit.MICROSECONDS))
    case _ => None
  }
}
